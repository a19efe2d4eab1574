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
        writeln!(out, "id:     {}", output::escape_field(&doc.id))?;
        writeln!(out, "fp:     {}", doc.fingerprint())?;
        let (title, url) = (doc.title.as_deref(), doc.url.as_deref());
        writeln!(
            out,
            "title:  {}",
            output::escape_field(title.unwrap_or("-"))
        )?;
        writeln!(out, "url:    {}", output::escape_field(url.unwrap_or("-")))?;
        writeln!(out, "length: {} characters", doc.length)?;
        writeln!(out, "time:   {}", simstore::format_time(doc.time))?;
    }
    Ok(0)
}
