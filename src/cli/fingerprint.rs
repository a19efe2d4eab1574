//! `simstore fingerprint`: print fingerprints without storing anything.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use anyhow::Result;
use rayon::prelude::*;
use serde_json::json;
use simstore::Fingerprinter;

use super::Code;
use super::input::{self, FieldArgs, Inputs};

/// Arguments of `simstore fingerprint`.
#[derive(Debug, clap::Args)]
#[command(
    group = clap::ArgGroup::new("what").required(true).args(["text", "file", "batch"]),
    after_help = "Exit status: 0 success, 2 error (in batch mode: some record failed; the others were printed)."
)]
pub struct Args {
    /// Print JSON ({"fp": ...}) instead of bare hex.
    #[arg(long)]
    json: bool,
    /// Print what drove the fingerprint: the lines kept and dropped, the features with the
    /// largest votes (not with --batch).
    #[arg(long, conflicts_with_all = ["batch", "json"])]
    explain: bool,
    /// Title of the text (weighs 2x per word, at most a fifth of the body).
    #[arg(long)]
    title: Option<String>,
    /// Fingerprint this file: a text, or an HTML page (.html/.htm: title and main text); gzip'd or not.
    #[arg(long)]
    file: Option<PathBuf>,
    /// Fingerprint every record of FILE ('-' = stdin): JSONL lines, or the pages of a WARC
    /// file, a directory, an HTML or text file (gzip'd or not); writes {"id", "fp"} per record.
    #[arg(long, value_name = "FILE")]
    batch: Option<String>,
    #[command(flatten)]
    fields: FieldArgs,
    /// The text to fingerprint.
    text: Option<String>,
}

/// Runs the command; see [`Args`].
pub fn run(args: Args) -> Result<Code> {
    let f = Fingerprinter::new();
    if let Some(batch) = &args.batch {
        return run_batch(&f, batch, &args.fields);
    }
    if let Some(flag) = args.fields.given() {
        anyhow::bail!("{flag} applies to the JSONL records of --batch");
    }
    let (title, text) = match (&args.file, &args.text) {
        (Some(file), _) => {
            let (title, text) = input::read_document(file)?;
            (args.title.clone().or(title), text)
        }
        (_, Some(text)) => (args.title.clone(), text.clone()),
        _ => unreachable!("clap requires one of text, --file, --batch"),
    };
    let mut out = io::stdout().lock();
    if args.explain {
        let e = simstore::text::explain::explain(&f, title.as_deref(), &text)?;
        super::explain::print_one(&mut out, &e, 20)?;
        return Ok(0);
    }
    let fp = f.fingerprint(title.as_deref(), &text)?;
    if args.json {
        writeln!(out, "{}", json!({ "fp": fp.to_string() }))?;
    } else {
        writeln!(out, "{fp}")?;
    }
    Ok(0)
}

/// Prints the fingerprint of every record of `path`, JSONL lines read by `fields`.
fn run_batch(f: &Fingerprinter, path: &str, fields: &FieldArgs) -> Result<Code> {
    let fields = fields.fields();
    let mut inputs = Inputs::batch(&[path.to_owned()]);
    let mut out = BufWriter::new(io::stdout().lock());
    let mut errors = 0u64;
    loop {
        let chunk = inputs.next_chunk(1024)?;
        if chunk.is_empty() {
            break;
        }
        let results: Vec<_> = chunk
            .into_par_iter()
            .map(|(place, raw)| {
                let r = raw
                    .and_then(|raw| input::to_record_with(raw, &fields, place.number()))
                    .and_then(|r| {
                        let fp = r.fingerprint(f).map_err(|e| e.to_string())?;
                        Ok((fp, r.id))
                    });
                (place, r)
            })
            .collect();
        for (place, r) in results {
            match r {
                Ok((fp, id)) => writeln!(out, "{}", json!({ "id": id, "fp": fp.to_string() }))?,
                Err(e) => {
                    errors += 1;
                    eprintln!("error: {place}: {e}; {} skipped", place.skipped());
                }
            }
        }
    }
    out.flush()?;
    Ok(if errors > 0 { 2 } else { 0 })
}
