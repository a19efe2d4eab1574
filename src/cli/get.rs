//! `simstore get`: show a stored document.

use std::io::{self, Write};
use std::path::Path;

use anyhow::Result;

use super::{Code, open_for_reading, output};

/// Arguments of `simstore get`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Exit status: 0 found, 1 not found, 2 error.")]
pub struct Args {
    /// Print the document as JSON.
    #[arg(long)]
    json: bool,
    /// The document id.
    id: String,
}

/// Runs the command; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    let store = open_for_reading(db)?;
    let Some(doc) = store.get(&args.id)? else {
        eprintln!("no document with id {:?}", args.id);
        return Ok(1);
    };
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{}", output::doc_json(&doc))?;
    } else {
        writeln!(out, "id:     {}", doc.id)?;
        writeln!(out, "fp:     {}", doc.fingerprint())?;
        writeln!(out, "title:  {}", doc.title.as_deref().unwrap_or("-"))?;
        writeln!(out, "url:    {}", doc.url.as_deref().unwrap_or("-"))?;
        writeln!(out, "length: {} characters", doc.length)?;
        writeln!(out, "time:   {} (Unix seconds)", doc.time)?;
    }
    Ok(0)
}
