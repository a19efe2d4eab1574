//! File descriptors. `serve` raises its soft limit (`RLIMIT_NOFILE`) to the hard one at
//! start, and bounds its open connections so that the store always keeps a reserve of
//! descriptors: RocksDB opens a new log file at each memtable switch and new table files at
//! each flush and compaction (and keeps every table file open: its `max_open_files` is not
//! set). A store starved of descriptors fails writes and stops taking them.

use anyhow::{Result, bail};
use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// The default bound on connections when the limit allows more.
const AUTO_MAX_CONNECTIONS: u64 = 4096;
/// Descriptors kept for the store beyond those it holds at start, at the least.
const MIN_HEADROOM: u64 = 64;
/// Fewer connections than this is no server: the limit must be raised.
const MIN_CONNECTIONS: u64 = 8;

/// How the descriptors of the process are shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Budget {
    /// The soft limit (`ulimit -n`), after raising it; `None` for unlimited.
    pub(super) limit: Option<u64>,
    /// Descriptors open when the budget was made (the store's, stdio, the runtime's).
    pub(super) in_use: u64,
    /// The most connections open at once.
    pub(super) connections: usize,
}

/// Raises the soft descriptor limit to the hard one (a failure is reported and ignored);
/// returns the soft limit in force, `None` for unlimited.
pub(super) fn raise_limit() -> Option<u64> {
    let now = getrlimit(Resource::Nofile);
    if let (Some(soft), Some(hard)) = (now.current, now.maximum)
        && soft < hard
    {
        let raised = Rlimit {
            current: Some(hard),
            maximum: Some(hard),
        };
        if let Err(e) = setrlimit(Resource::Nofile, raised) {
            eprintln!(
                "simstore serve: cannot raise the descriptor limit from {soft} to {hard}: {e}"
            );
        }
    }
    getrlimit(Resource::Nofile).current
}

/// Descriptors open in this process now (0 where that cannot be read).
pub(super) fn open_descriptors() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .or_else(|_| std::fs::read_dir("/dev/fd"))
        .map_or(0, |d| d.count() as u64)
}

/// The connection bound for a process with descriptor limit `limit` and `in_use` open:
/// half the limit (at least `in_use` + 64) stays with the store. `asked` is
/// `--max-connections`; more than the limit allows is an error, as is a limit too low.
pub(super) fn budget(limit: Option<u64>, in_use: u64, asked: Option<u32>) -> Result<Budget> {
    let spare = match limit {
        None => u64::MAX,
        Some(limit) => limit.saturating_sub((limit / 2).max(in_use + MIN_HEADROOM)),
    };
    let shown = limit.map_or("unlimited".to_owned(), |l| l.to_string());
    let connections = match asked {
        Some(n) if u64::from(n) > spare => bail!(
            "--max-connections {n} is more than the descriptor limit allows: of {shown} \
             (ulimit -n, raised to the hard limit), {in_use} are open and half are kept for \
             the store; use at most {spare}, or raise the hard limit (ulimit -Hn, systemd \
             LimitNOFILE=)"
        ),
        Some(n) => u64::from(n),
        None if spare < MIN_CONNECTIONS => bail!(
            "the descriptor limit {shown} (ulimit -n, raised to the hard limit) leaves {spare} \
             connections once half is kept for the store ({in_use} open now); raise the hard \
             limit (ulimit -Hn, systemd LimitNOFILE=) to at least {}",
            2 * (in_use + MIN_HEADROOM + MIN_CONNECTIONS)
        ),
        None => spare.min(AUTO_MAX_CONNECTIONS),
    };
    Ok(Budget {
        limit,
        in_use,
        connections: usize::try_from(connections).unwrap_or(usize::MAX),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_the_limit_and_the_open_files_stay_with_the_store() {
        let b = budget(Some(256), 40, None).unwrap();
        assert_eq!(b.connections, 128);
        assert_eq!(budget(Some(256), 100, None).unwrap().connections, 92);
        assert_eq!(budget(Some(1 << 20), 40, None).unwrap().connections, 4096);
        assert_eq!(budget(None, 40, None).unwrap().connections, 4096);
        assert_eq!(budget(Some(256), 40, Some(100)).unwrap().connections, 100);
        let e = budget(Some(256), 40, Some(200)).unwrap_err().to_string();
        assert!(e.contains("use at most 128"), "{e}");
        let e = budget(Some(64), 40, None).unwrap_err().to_string();
        assert!(e.contains("raise the hard limit"), "{e}");
    }

    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        // An unlimited hard limit leaves the soft one as it is.
        if let Some(hard) = getrlimit(Resource::Nofile).maximum {
            assert_eq!(raise_limit(), Some(hard));
        }
    }
}
