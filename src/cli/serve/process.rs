//! The standard `process_*` series of `/metrics`, from `/proc/self` (none where there is
//! none): resident memory, open descriptors, CPU seconds (fractional, as Prometheus' own
//! clients give them) and the start time.

/// Clock ticks per second of `/proc/self/stat`'s times: `USER_HZ`, 100 on every Linux ABI.
const TICKS_PER_SECOND: f64 = 100.0;

/// What `/proc` says about this process.
pub(super) struct Process {
    pub(super) resident_bytes: f64,
    pub(super) open_fds: f64,
    pub(super) cpu_seconds: f64,
    pub(super) start_time: f64,
}

impl Process {
    /// What `/proc` says now; `None` where it cannot be read.
    pub(super) fn read() -> Option<Process> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let rss_kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))?
            .split_whitespace()
            .next()?
            .parse()
            .ok()?;
        // Fields after the command name (which may hold spaces, in parentheses): utime and
        // stime are the 12th and 13th, starttime (ticks after boot) the 20th.
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        let after: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        let tick = |i: usize| after.get(i)?.parse::<f64>().ok();
        let cpu_ticks = tick(11)? + tick(12)?;
        let boot: f64 = std::fs::read_to_string("/proc/stat")
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("btime "))?
            .trim()
            .parse()
            .ok()?;
        let open_fds = std::fs::read_dir("/proc/self/fd").ok()?.count() as f64;
        Some(Process {
            resident_bytes: rss_kib * 1024.0,
            open_fds,
            cpu_seconds: cpu_ticks / TICKS_PER_SECOND,
            start_time: boot + tick(19)? / TICKS_PER_SECOND,
        })
    }
}
