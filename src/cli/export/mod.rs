//! `simstore export` (and `simstore ids`): every stored document out, as JSONL, CSV or
//! Parquet ([`parquet`]), in sequence or id order, from one snapshot, resumable where an
//! earlier run stopped.

mod parquet;

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::json;
use simstore::{Store, StoredDoc};

use self::parquet::ParquetDocs;
use super::outfile::OutFile;
use super::{Code, open_for_reading, output};

/// How documents are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One JSON object per line: {"seq", "id", "fp", "title"?, "url"?, "length", "time",
    /// "seen"?, "content_hash"?, "sketch"?}: every stored field, so that `import` of it
    /// rebuilds the same documents.
    Jsonl,
    /// A header line, then one row per document (RFC 4180 quoting; empty when absent).
    Csv,
    /// One Parquet file (needs --output): a row per document, the JSONL fields as typed
    /// columns (seq, length, time, seen: uint64; sketch: its 64 bytes; title, url,
    /// content_hash, sketch null when absent), Snappy-compressed, for analysis.
    Parquet,
}

/// The order documents are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Order {
    /// By sequence number: the order they were stored in.
    Seq,
    /// By id (byte order).
    Id,
}

/// Arguments of `simstore export` and `simstore ids`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Every field of a stored document: seq (its sequence number), id, fp, title, url, length
(characters), time (Unix seconds, when stored) and content_hash (32 hex digits; absent for
documents imported as fingerprints). The JSONL lines are valid `simstore import` records:
`simstore export | simstore --db new.db import -` copies the fingerprints (not the texts,
which a store does not keep). `--format parquet -o docs.parquet` writes the same fields as
typed columns of one Parquet file, for analysis.

One run reads one snapshot: documents written meanwhile are not in it. (A store on Redis
Cluster has no snapshots: every document stored before the run and not deleted during it
comes exactly once, a document replaced meanwhile in its new version, under its new seq;
documents written meanwhile may come.) To resume a run
that stopped (drop an incomplete last line first): in seq order pass the last line's seq
+ 1 as --from-seq; in id order pass its id as --after. Then append:
  simstore export --from-seq 120001 >> docs.jsonl
Documents written since come after (a document replaced by another fingerprint too, under\nits new seq).

Exit status: 0 success, 2 error.")]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Jsonl)]
    format: Format,
    /// Order [default: seq, or id with --after].
    #[arg(long, value_enum)]
    order: Option<Order>,
    /// Only the ids, one per line (tabs, line breaks and backslashes escaped as \t, \n,
    /// \r, \\; other control characters, line separators, zero-width characters and
    /// direction overrides as \u{HEX}).
    #[arg(long)]
    ids_only: bool,
    /// Resume in id order: only documents whose id sorts after ID (an id starting with `-`
    /// is taken as it is: `--after -x`).
    #[arg(
        long,
        value_name = "ID",
        conflicts_with = "from_seq",
        allow_hyphen_values = true
    )]
    after: Option<String>,
    /// Resume in seq order: only documents whose sequence number is at least N.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    from_seq: Option<u64>,
    /// Write to FILE instead of stdout: a new or regular file is written beside it and
    /// renamed over it at the end (a failed run leaves it as it was); a symbolic link is
    /// followed; a FIFO or a character device is written through.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Runs `simstore export`; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    let order = match (args.order, &args.after, args.from_seq) {
        (Some(Order::Seq), Some(_), _) => bail!(
            "--after resumes an export in id order: drop --order seq (or resume with --from-seq)"
        ),
        (Some(Order::Id), _, Some(_)) => bail!(
            "--from-seq resumes an export in seq order: drop --order id (or resume with --after)"
        ),
        (Some(order), _, _) => order,
        (None, Some(_), _) => Order::Id,
        (None, None, _) => Order::Seq,
    };
    if let Some(path) = &args.output {
        crate::cli::outfile::outside_store(path, db)?;
    }
    let store = open_for_reading(db)?;
    if args.format == Format::Parquet && !args.ids_only {
        let Some(path) = &args.output else {
            bail!("--format parquet writes a file: give --output FILE.parquet");
        };
        let n = export_parquet(&store, order, &args, path)
            .with_context(|| format!("cannot export to {}", path.display()))?;
        eprintln!("exported {}", output::count(n, "document"));
        eprintln!("{}", settings_note(&store));
        return Ok(0);
    }
    let mut file = args.output.as_deref().map(OutFile::create).transpose()?;
    let out: Box<dyn Write + '_> = match &mut file {
        Some(file) => Box::new(file),
        None => Box::new(io::stdout().lock()),
    };
    let mut out = BufWriter::with_capacity(1 << 16, out);
    let kind = if args.ids_only {
        None
    } else {
        Some(args.format)
    };
    if kind == Some(Format::Csv) {
        writeln!(out, "seq,id,fp,title,url,length,time,content_hash")?;
    }
    let mut n = 0u64;
    let mut write = |seq: u64, doc: StoredDoc| {
        n += 1;
        write_doc(&mut out, kind, seq, &doc).map_err(simstore::Error::Io)?;
        Ok(true)
    };
    scan(&store, order, &args, &mut write)
        .map_err(anyhow::Error::from)
        .and_then(|()| out.flush().map_err(anyhow::Error::from))
        .with_context(|| match &args.output {
            Some(path) => format!("cannot export to {}", path.display()),
            None => "cannot export".into(),
        })?;
    drop(out);
    if let Some(file) = file {
        file.finish()?;
        eprintln!("exported {}", output::count(n, "document"));
    }
    if !args.ids_only {
        eprintln!("{}", settings_note(&store));
    }
    Ok(0)
}

/// What an export does not hold — the store's settings — and the `init` that gives a new
/// store the same ones, to run before importing the export into it.
fn settings_note(store: &Store) -> String {
    let (layout, quality) = (store.layout(), store.quality());
    let mut init = format!("--quality {}", quality.name());
    if layout.k_max() != quality.k_max() {
        init += &format!(" --k-max {}", layout.k_max());
    }
    let blocks = layout.widths().len();
    init += &format!(" --blocks {blocks} --lead {}", layout.lead());
    let policy = store.retention();
    if let Some(secs) = policy.retain_secs {
        let age = simstore::types::retention::Duration(secs);
        init += &format!(" --retain {age} --retain-by {}", policy.by.name());
    }
    if policy.track_seen {
        init += " --track-seen";
    }
    format!(
        "the export holds the documents, not the store's settings: to import it into a store \
         like this one, make that store first with `simstore --db NEW init {init}`"
    )
}

/// Calls `write` with every document `args` asks for, in `order`.
fn scan(
    store: &Store,
    order: Order,
    args: &Args,
    write: impl FnMut(u64, StoredDoc) -> simstore::Result<bool>,
) -> simstore::Result<()> {
    match order {
        Order::Seq => store.scan_by_seq(args.from_seq.unwrap_or(0), write),
        Order::Id => store.scan_by_id(args.after.as_deref(), write),
    }
}

/// Writes the documents `args` asks for to `path` as Parquet ([`ParquetDocs`]): put in
/// place when complete, as every output file is. Returns how many were written.
fn export_parquet(store: &Store, order: Order, args: &Args, path: &Path) -> Result<u64> {
    let mut docs = ParquetDocs::new(OutFile::create(path)?)?;
    let mut failed: Option<anyhow::Error> = None;
    let mut n = 0u64;
    scan(store, order, args, |seq, doc| match docs.push(seq, &doc) {
        Ok(()) => {
            n += 1;
            Ok(true)
        }
        Err(e) => {
            failed = Some(e);
            Ok(false)
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    docs.finish()?.finish()?;
    Ok(n)
}

/// Runs `simstore ids`: `simstore export --ids-only`.
pub fn run_ids(db: &Path, mut args: Args) -> Result<Code> {
    args.ids_only = true;
    run(db, args)
}

/// Writes one document: its id only (`kind` `None`), a JSON line or a CSV row.
fn write_doc(
    out: &mut impl Write,
    kind: Option<Format>,
    seq: u64,
    d: &StoredDoc,
) -> io::Result<()> {
    let hash = d.content_hash.map(|h| format!("{h:032x}"));
    match kind {
        None => writeln!(out, "{}", output::escape_field(&d.id)),
        Some(Format::Jsonl | Format::Parquet) => {
            let mut v = json!({ "seq": seq, "id": d.id, "fp": d.fingerprint().to_string() });
            if let Some(t) = &d.title {
                v["title"] = json!(t);
            }
            if let Some(u) = &d.url {
                v["url"] = json!(u);
            }
            v["length"] = json!(d.length);
            v["time"] = json!(d.time);
            if d.seen != d.time {
                v["seen"] = json!(d.seen);
            }
            if let Some(h) = hash {
                v["content_hash"] = json!(h);
            }
            if let Some(s) = &d.sketch {
                v["sketch"] = json!(output::hex(&s.0));
            }
            writeln!(out, "{v}")
        }
        Some(Format::Csv) => {
            let fields = [
                seq.to_string(),
                csv_field(&d.id),
                d.fingerprint().to_string(),
                csv_field(d.title.as_deref().unwrap_or("")),
                csv_field(d.url.as_deref().unwrap_or("")),
                d.length.to_string(),
                d.time.to_string(),
                hash.unwrap_or_default(),
            ];
            writeln!(out, "{}", fields.join(","))
        }
    }
}

/// A CSV field (RFC 4180): quoted, with its quotes doubled, when it holds a comma, a
/// quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::csv_field;

    #[test]
    fn csv_fields_are_quoted_when_they_must_be() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
    }
}
