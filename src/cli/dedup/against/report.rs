//! What a dedup against a store reports: the summary line, and `--clusters` rows of the
//! records it dropped.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use serde_json::json;
use simstore::{MatchRule, Store};

use super::super::Args;
use super::super::rows::Rows;
use super::{Dropped, Found};
use crate::cli::output;

/// Writes `--clusters` for a dedup against a store: one row per dropped record, with the
/// document it duplicates as its representative.
pub(super) fn write_dropped(path: &Path, dropped: &[Dropped]) -> Result<()> {
    let mut out = Rows::create(path)?;
    let mut clusters: HashMap<&str, usize> = HashMap::new();
    for d in dropped {
        let next = clusters.len();
        let cluster = *clusters.entry(&d.of).or_insert(next);
        let row = json!({
            "cluster": cluster, "id": d.id, "file": d.place.name.as_ref(),
            "line": d.place.number(), "representative": d.of, "kept": false,
            "distance": d.distance, "stored": d.stored,
        });
        out.push(&row)?;
    }
    out.finish()
}

/// The summary line on stderr.
pub(super) fn summary(
    (args, rule): (&Args, &MatchRule),
    store: &Store,
    found: &Found,
    written: &str,
    start: Instant,
) {
    let of_stored = found.dropped.iter().filter(|d| d.stored).count() as u64;
    let dropped = found.dropped.len() as u64;
    let added = match args.add {
        true => format!(
            "; the store holds {}",
            output::count(store.len(), "document")
        ),
        false => String::new(),
    };
    let failed = match found.failed {
        0 => String::new(),
        n => format!(", {} failed", output::count(n, "record")),
    };
    let mut unjudged = match found.unjudged {
        0 => String::new(),
        n if args.add => format!(", {n} of them not fingerprinted and not stored (see above)"),
        n => format!(", {n} of them not fingerprinted (see above)"),
    };
    if found.taken > 0 {
        let n = found.taken;
        unjudged += &format!(", {n} of them not stored: their ids were stored already");
        unjudged += " (see above)";
    }
    if found.unnamed > 0 {
        let n = found.unnamed;
        unjudged += &format!(", {n} of them not stored: they have no id (see above)");
    }
    if args.resume && found.own > 0 {
        let n = found.own;
        unjudged += &format!(", {n} of them stored by the run taken up (--resume)");
    }
    eprintln!(
        "{} against {} ({}): kept {}{}{unjudged}, dropped {dropped} ({of_stored} duplicates of \
         stored documents, {} of records kept){failed}{written}{added} — {:.2} s",
        output::count(found.records, "record"),
        store.path().display(),
        crate::cli::rule::describe(rule),
        found.kept.len(),
        match args.add {
            true => format!(" ({} stored)", stored_by_the_run(args, found)),
            false => String::new(),
        },
        dropped - of_stored,
        start.elapsed().as_secs_f64()
    );
    if !args.resume && found.own > 0 {
        eprintln!(
            "note: {} dropped as the stored document of their own id, fingerprint and all: \
             if a run of these inputs was killed before it wrote its output, run it again \
             with --resume to write them out",
            output::count(found.own, "record")
        );
    }
}

/// With `--add`: how many of the records kept the run stored (not those it could not
/// fingerprint, nor those whose ids were taken or missing, nor those a taken-up run stored).
fn stored_by_the_run(args: &Args, found: &Found) -> u64 {
    let resumed = if args.resume { found.own } else { 0 };
    found.kept.len() as u64 - found.unjudged - found.taken - found.unnamed - resumed
}
