//! `simstore expire`: delete the documents stored (or last seen) before a time.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use simstore::types::{Duration, TimeField, parse_time};
use simstore::{ExpireOptions, ExpireReport};

use super::output::count;
use super::{Code, open_existing, open_for_reading};
use simstore::format_time;

/// Arguments of `simstore expire`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Deletes every document older than the cutoff with its table entries, in atomic batches:
a crash leaves each document whole or gone. In a store of format 7 written by one process,
stored times follow the order documents were stored in, so an expiry reads only the
records stored before the cutoff; in an older store, or on Redis Cluster, it reads every
record. Disk space comes back as RocksDB compacts the expired ranges (`simstore compact`
to force it).

Examples:
  simstore expire --older-than 90d               documents stored more than 90 days ago
  simstore expire --older-than 30d --by seen     not seen for 30 days (see `retention`)
  simstore expire --before 2026-01-01 --dry-run  count them, delete nothing

Exit status: 0 success, 2 error.")]
pub struct Args {
    /// Expire documents older than this: 90d, 12h, 30m, 2w or seconds.
    #[arg(
        long,
        value_name = "AGE",
        required_unless_present = "before",
        conflicts_with = "before"
    )]
    older_than: Option<Duration>,
    /// Expire documents from before this time: 2026-01-01T00:00:00Z, 2026-01-01 (UTC
    /// midnight) or Unix seconds.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    before: Option<u64>,
    /// Which time counts: when a document was stored, or when it was last seen (written,
    /// or found as a duplicate with last-seen tracking on) [default: the store's retention
    /// policy's, else stored].
    #[arg(long, value_name = "TIME", value_parser = ["stored", "seen"])]
    by: Option<String>,
    /// Count the documents that would be expired; delete nothing.
    #[arg(long)]
    dry_run: bool,
    /// Documents deleted per atomic write.
    #[arg(long, value_name = "N", default_value_t = 1_000, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    batch: u64,
}

/// Runs the command; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    let store = if args.dry_run {
        open_for_reading(db)?
    } else {
        open_existing(db)?
    };
    let by = match args.by.as_deref() {
        Some(name) => name.parse::<TimeField>().map_err(anyhow::Error::msg)?,
        None => store.retention().by,
    };
    let mut opts = match (args.older_than, args.before) {
        (Some(age), _) => ExpireOptions::older_than(age.0, by),
        (None, Some(before)) => ExpireOptions::before(before, by),
        (None, None) => bail!("give --older-than AGE or --before TIME"),
    };
    opts.dry_run = args.dry_run;
    opts.batch = args.batch as usize;
    let start = Instant::now();
    let bar = progress();
    let report = store
        .expire(&opts, |r| bar.set_message(line(r, opts.dry_run)))
        .with_context(|| format!("cannot expire documents of {}", db.display()))?;
    bar.finish_and_clear();
    eprintln!(
        "{} by {} time before {}; {} ({:.1} s{})",
        line(&report, opts.dry_run),
        by.name(),
        format_time(opts.before),
        count(store.len(), "document") + " left",
        start.elapsed().as_secs_f64(),
        if report.full_scan {
            ", every record read: this store's times are not in order"
        } else {
            ""
        }
    );
    Ok(0)
}

/// What an expiry did so far, in words.
fn line(r: &ExpireReport, dry_run: bool) -> String {
    let verb = if dry_run { "would expire" } else { "expired" };
    format!(
        "{verb} {} of {} read",
        count(r.expired, "document"),
        r.scanned
    )
}

/// A spinner with the running counts (on stderr, on a terminal only).
fn progress() -> indicatif::ProgressBar {
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {elapsed} {msg}")
            .expect("valid template"),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}
