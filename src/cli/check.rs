//! `simstore check`: verify that tables, ids and documents agree.

use std::io::{self, Write};
use std::path::Path;

use anyhow::Result;
use serde_json::json;

use super::{Code, open_for_reading};

/// Arguments of `simstore check`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 the store is sound, 1 problems were found (see `simstore repair`), 2 error."
)]
pub struct Args {
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
}

/// Runs the command; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    let store = match open_for_reading(db) {
        Ok(store) => store,
        Err(e) => return damaged(e, args.json),
    };
    let r = store.check()?;
    let mut out = io::stdout().lock();
    if args.json {
        let v = json!({
            "ok": r.is_ok(), "docs": r.docs, "ids": r.ids, "table_entries": r.table_entries,
            "problem_count": r.problem_count, "problems": r.problems,
        });
        writeln!(out, "{v}")?;
    } else {
        for p in &r.problems {
            writeln!(out, "problem: {p}")?;
        }
        if r.problem_count > r.problems.len() as u64 {
            writeln!(
                out,
                "... and {} more",
                r.problem_count - r.problems.len() as u64
            )?;
        }
        if r.is_ok() {
            writeln!(
                out,
                "ok: {} documents, {} ids, {} tables agree",
                r.docs,
                r.ids,
                r.table_entries.len()
            )?;
        } else {
            writeln!(
                out,
                "{} problems in {} documents; `simstore repair` rebuilds tables and ids from the documents",
                r.problem_count, r.docs
            )?;
        }
    }
    Ok(if r.is_ok() { 0 } else { 1 })
}

/// A store too damaged to open (its log or file list) is a finding, exit status 1; any other
/// error stays an error.
fn damaged(e: anyhow::Error, json: bool) -> Result<Code> {
    let Some(damage @ (simstore::Error::DamagedLog { .. } | simstore::Error::Damaged { .. })) =
        e.downcast_ref::<simstore::Error>()
    else {
        return Err(e);
    };
    let mut out = io::stdout().lock();
    if json {
        let v = json!({"ok": false, "problem_count": 1, "problems": [damage.to_string()]});
        writeln!(out, "{v}")?;
    } else {
        writeln!(out, "problem: {damage}")?;
    }
    Ok(1)
}
