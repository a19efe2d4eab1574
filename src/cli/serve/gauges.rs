//! The gauges `/metrics` reads at each scrape besides its counters: the build
//! (`simstore_build_info`), the process (Prometheus' standard `process_*` series, from
//! `/proc`; absent where there is none) and the storage engine's own figures
//! ([`simstore::store::backend::Backend::engine_metrics`]; RocksDB's per column family).

use std::fmt::Write as _;

use simstore::store::backend::EngineMetric;

/// Clock ticks per second of `/proc/self/stat`'s times: `USER_HZ`, 100 on every Linux ABI.
const TICKS_PER_SECOND: f64 = 100.0;

/// Appends the build, process and engine series to `out`.
pub(super) fn render(out: &mut String, engine: &[EngineMetric], memory_bytes: Option<u64>) {
    describe(
        out,
        "simstore_build_info",
        "The running build: its version, fingerprint spec version and newest store format (always 1).",
    );
    let _ = writeln!(
        out,
        "simstore_build_info{{version=\"{}\",spec=\"v{}\",format=\"{}\"}} 1",
        env!("CARGO_PKG_VERSION"),
        simstore::FingerprintSpec::current().version,
        simstore::store::codec::FORMAT_VERSION,
    );
    if let Some(bytes) = memory_bytes {
        describe(
            out,
            "simstore_store_memory_bytes",
            "Memory of the servers holding the store (Redis Cluster: used_memory of every master, summed).",
        );
        let _ = writeln!(out, "simstore_store_memory_bytes {bytes}");
    }
    render_process(out);
    render_engine(out, engine);
}

/// `# HELP` and `# TYPE` lines of a gauge.
fn describe(out: &mut String, name: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
}

/// A label value escaped as the text format requires (backslash, quote, newline).
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The engine's figures, each name's series together under one `# HELP`/`# TYPE`.
fn render_engine(out: &mut String, engine: &[EngineMetric]) {
    let mut names: Vec<&str> = Vec::new();
    for m in engine {
        if !names.contains(&m.name) {
            names.push(m.name);
        }
    }
    for name in names {
        let mut series = engine.iter().filter(|m| m.name == name).peekable();
        if let Some(first) = series.peek() {
            describe(out, name, first.help);
        }
        for m in series {
            let labels: Vec<String> = m
                .labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
                .collect();
            let labels = match labels.is_empty() {
                true => String::new(),
                false => format!("{{{}}}", labels.join(",")),
            };
            let _ = writeln!(out, "{name}{labels} {}", m.value);
        }
    }
}

/// Prometheus' standard process series, from `/proc/self` (none where it cannot be read).
fn render_process(out: &mut String) {
    let Some(p) = Process::read() else { return };
    let series = [
        (
            "process_resident_memory_bytes",
            "gauge",
            "Resident memory size in bytes.",
            p.resident_bytes,
        ),
        (
            "process_open_fds",
            "gauge",
            "Number of open file descriptors.",
            p.open_fds,
        ),
        (
            "process_cpu_seconds_total",
            "counter",
            "Total user and system CPU time spent in seconds.",
            p.cpu_seconds,
        ),
        (
            "process_start_time_seconds",
            "gauge",
            "Start time of the process since the Unix epoch in seconds.",
            p.start_time,
        ),
    ];
    for (name, kind, help, value) in series {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
        );
    }
}

/// What `/proc` says about this process.
struct Process {
    resident_bytes: f64,
    open_fds: f64,
    cpu_seconds: f64,
    start_time: f64,
}

impl Process {
    fn read() -> Option<Process> {
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
