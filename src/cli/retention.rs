//! `simstore retention`: show or change the store's retention policy (also set by `init`).

use std::io::{self, Write};
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::json;
use simstore::types::{Duration, Retention, TimeField};

use super::{Code, open_existing, open_for_reading};

/// The policy's settings, as `init` and `retention` take them.
#[derive(Debug, Default, clap::Args)]
pub struct PolicyArgs {
    /// Expire documents older than AGE (90d, 12h, 2w...) by themselves: `serve` and long
    /// imports run the expiry in the background.
    #[arg(long, value_name = "AGE", conflicts_with = "keep_all")]
    retain: Option<Duration>,
    /// Keep every document (no automatic expiry).
    #[arg(long)]
    keep_all: bool,
    /// Refresh a document's last-seen time whenever a check finds it as the duplicate of a
    /// new page (`import --dedup`, `check_and_insert`): "not seen for 90 days" then means
    /// what it says. One small write per duplicate found.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    track_seen: Option<bool>,
    /// The time --retain counts from: stored, or seen (last seen).
    #[arg(long, value_name = "TIME", value_parser = ["stored", "seen"])]
    retain_by: Option<String>,
}

impl PolicyArgs {
    /// Whether any setting was given.
    pub fn any(&self) -> bool {
        self.retain.is_some()
            || self.keep_all
            || self.track_seen.is_some()
            || self.retain_by.is_some()
    }

    /// `current` with the given settings applied.
    pub fn apply(&self, current: Retention) -> Result<Retention> {
        let mut r = current;
        if let Some(age) = self.retain {
            r.retain_secs = Some(age.0);
        }
        if self.keep_all {
            r.retain_secs = None;
        }
        if let Some(track) = self.track_seen {
            r.track_seen = track;
        }
        if let Some(by) = &self.retain_by {
            r.by = by.parse::<TimeField>().map_err(anyhow::Error::msg)?;
        }
        Ok(r)
    }
}

/// Arguments of `simstore retention`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
With no setting, prints the policy. Examples:
  simstore retention --retain 90d --track-seen --retain-by seen   forget pages unseen for 90 days
  simstore retention --keep-all --track-seen false                back to keeping everything

Exit status: 0 success, 2 error.")]
pub struct Args {
    #[command(flatten)]
    policy: PolicyArgs,
    /// Print the policy as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs the command; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    let r = if args.policy.any() {
        let store = open_existing(db)?;
        let r = args.policy.apply(store.retention())?;
        store
            .set_retention(r)
            .with_context(|| format!("cannot set the retention policy of {}", db.display()))?;
        r
    } else {
        open_for_reading(db)?.retention()
    };
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{}", policy_json(&r))?;
    } else {
        writeln!(out, "{}", describe(&r))?;
    }
    Ok(0)
}

/// The policy as JSON: `{"retain_secs", "retain", "by", "track_seen"}`.
pub fn policy_json(r: &Retention) -> serde_json::Value {
    json!({
        "retain_secs": r.retain_secs,
        "retain": r.retain_secs.map(|s| Duration(s).to_string()),
        "by": r.by.name(),
        "track_seen": r.track_seen,
    })
}

/// The policy in words.
pub fn describe(r: &Retention) -> String {
    let keep = match r.retain_secs {
        Some(s) => format!(
            "documents older than {} by {} time are expired in the background",
            Duration(s),
            r.by.name()
        ),
        None => "every document is kept".to_owned(),
    };
    let seen = if r.track_seen { "on" } else { "off" };
    format!("retention: {keep}; last-seen tracking {seen}")
}

/// Runs `f` with the store's retention policy applied beside it on a thread of its own
/// (when the policy expires documents and `on`: not beside a bulk load, which holds the
/// writer lock throughout); returns `f`'s result and the documents expired meanwhile. A
/// failed expiry is said on stderr; it does not fail `f`.
pub fn with_retention<T>(store: &simstore::Store, on: bool, f: impl FnOnce() -> T) -> (T, u64) {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    if !on || store.retention().retain_secs.is_none() {
        return (f(), 0);
    }
    let stop = AtomicBool::new(false);
    let expired = AtomicU64::new(0);
    std::thread::scope(|s| {
        let worker = s.spawn(|| {
            let every = std::time::Duration::from_secs(60);
            let pause = std::time::Duration::from_millis(20);
            store.apply_retention(&stop, every, pause, |r| {
                expired.fetch_add(r.expired, Ordering::Relaxed);
            })
        });
        let out = f();
        stop.store(true, Ordering::Relaxed);
        if let Ok(Err(e)) = worker.join() {
            eprintln!("warning: the retention policy's expiry failed: {e}");
        }
        (out, expired.load(Ordering::Relaxed))
    })
}
