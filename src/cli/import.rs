//! `simstore import`: store documents or precomputed fingerprints from JSONL or text files.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::ProgressBar;
use rayon::prelude::*;
use simstore::input::limit::DEFAULT_MAX_DOC_BYTES;
use simstore::input::reader::Fields;
use simstore::{BatchOutcome, BulkLoader, CheckOutcome, Entry, MatchRule, QueryKey, Rule, Store};

use super::input::{self, FieldArgs, Format, Inputs, Place};
use super::{Code, output, rule};

/// Arguments of `simstore import`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 all records stored (or, with --dedup, stored or found duplicate), \
                  1 some records failed (the others were stored), 2 error.\n\
                  With --dedup, one JSON line per duplicate on stdout: \
                  {\"id\", \"duplicate_of\", \"distance\"} (distance 0 for an exact duplicate)."
)]
pub struct Args {
    /// Input format.
    #[arg(long, value_enum, default_value_t = Format::Auto)]
    format: Format,
    /// Records per atomic write batch (and per parallel fingerprinting chunk).
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    batch_size: u32,
    /// Print the summary as one JSON object on stdout as well.
    #[arg(long)]
    json: bool,
    /// Load through sorted SST files (fast; memory bounded by --bulk-memory, sorted runs
    /// spilled to temporary files in the store's directory beyond it). Chosen
    /// automatically when the store is empty and the input files total at least 32 MiB.
    #[arg(long, conflicts_with = "dedup")]
    bulk: bool,
    /// Memory for the sorts of a bulk load, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
    bulk_memory: u32,
    /// Store only documents that are new: a record whose content equals a stored
    /// document's, or that is a near duplicate of one, is not stored and is reported on
    /// stdout. Near duplicate: by the store's quality mode (see `simstore init --quality`:
    /// within its k_max, or farther with agreeing shingle sketches), or within --k, or with
    /// --verify. Records are checked in input order (earlier ones win).
    #[arg(long)]
    dedup: bool,
    /// Largest document read, in bytes (decompressed): a JSONL line, a WARC record, a
    /// text or HTML file, stdin. A larger one is one failed record, read no further.
    #[arg(long, default_value_t = DEFAULT_MAX_DOC_BYTES, value_parser = clap::value_parser!(u64).range(1..))]
    max_doc_bytes: u64,
    /// With --dedup: a near duplicate is any stored document within Hamming distance K
    /// (at most the store's k_max), instead of the quality mode's rule.
    #[arg(long, short, value_name = "K", requires = "dedup")]
    k: Option<u32>,
    /// With --dedup: a near duplicate is a stored document within --k (default: the
    /// store's k_max) whose shingle sketch is at least T similar to the record's (0..1),
    /// as `query --verify` checks; a record or document without text is never one.
    #[arg(long, value_name = "T", requires = "dedup")]
    verify: Option<f64>,
    /// With --dedup: write the records stored (the new ones) to FILE, each JSONL line
    /// unchanged, in input order (gzip'd if FILE ends in .gz), as `dedup --against DB --add
    /// --output FILE` does; a record whose id is stored already is written out when new,
    /// never stored over that document. The inputs are read twice (JSONL files, not stdin).
    #[arg(long, short = 'o', value_name = "FILE", requires = "dedup")]
    output: Option<std::path::PathBuf>,
    #[command(flatten)]
    fields: FieldArgs,
    /// Input files or directories ('-' = stdin; gzip'd inputs are decompressed).
    /// JSONL records: {"id"?, "title"?, "text"?, "url"?, "fp"?}; WARC: each HTML or text
    /// response; directories: every .html/.htm/.txt file under it. A whole file's id is
    /// its path relative to the directory holding the input: `doc.txt` (however the path
    /// is spelled), `site/sub/a.html` for a file in the directory `site`; text from stdin
    /// gets `stdin-` and a hash of its bytes.
    #[arg(required = true)]
    files: Vec<String>,
}

/// Input size from which an import into an empty store takes the bulk path by itself.
const AUTO_BULK_BYTES: u64 = 32 << 20;

#[derive(Debug, Default)]
struct Summary<'a> {
    read: u64,
    failed: u64,
    /// The items (by their index among the items read) that failed, in order.
    failed_items: Vec<u64>,
    /// Records read from a damaged gzip member before its damage was found (stored: they
    /// may be wrong).
    damaged: u64,
    stored: BatchOutcome,
    /// Inputs or records that are not documents (WARC requests, non-page files...).
    skipped: input::Skipped,
    /// The bulk load the entries stream into, when bulk loading (finished at the end).
    pending: Option<BulkLoader<'a>>,
    /// With --dedup: what a near duplicate is.
    dedup: Option<MatchRule>,
    /// With --dedup: records not stored as exact duplicates.
    exact: u64,
    /// With --dedup: records not stored as near duplicates.
    near: u64,
    /// With --dedup: stdout was closed (`| head`); the import goes on without the lines.
    stdout_closed: bool,
    /// With --output: the items (by their index among the items read) stored, in order,
    /// and the inputs' stamps.
    kept: Option<Vec<u64>>,
    /// With --output: records written out but not stored, their ids being stored already.
    unstored: u64,
    stamps: Vec<super::input::Stamp>,
}

impl Summary<'_> {
    /// Stores `entries` now (batches) or keeps them for the bulk load.
    fn store(&mut self, store: &Store, name: &str, entries: Vec<(u64, Entry)>) -> Result<()> {
        if let Some(rule) = self.dedup {
            return self.check_and_store(store, name, entries, &rule);
        }
        let entries = entries.into_iter().map(|(_, e)| e);
        match &mut self.pending {
            Some(loader) => {
                for e in entries {
                    loader
                        .push(e)
                        .with_context(|| format!("cannot store records of {name}"))?;
                }
            }
            None => {
                let out = store
                    .insert_batch(entries)
                    .with_context(|| format!("cannot store records of {name}"))?;
                self.stored.inserted += out.inserted;
                self.stored.replaced += out.replaced;
            }
        }
        Ok(())
    }

    /// Checks and stores `entries` one by one, in order; prints a line per duplicate.
    fn check_and_store(
        &mut self,
        store: &Store,
        name: &str,
        entries: Vec<(u64, Entry)>,
        rule: &MatchRule,
    ) -> Result<()> {
        let mut out = io::stdout().lock();
        for (item, e) in entries {
            if self.kept.is_some() && stored_already(store, &e.id)? {
                self.check_stored_id(store, &mut out, (item, &e), rule)?;
                continue;
            }
            let outcome = store
                .check_and_insert(&e, rule)
                .with_context(|| format!("cannot store records of {name}"))?;
            if let (true, Some(kept)) = (outcome.is_new(), &mut self.kept) {
                kept.push(item);
            }
            match &outcome {
                CheckOutcome::New { replaced: true, .. } => self.stored.replaced += 1,
                CheckOutcome::New { .. } => self.stored.inserted += 1,
                CheckOutcome::ExactDuplicate { .. } => self.exact += 1,
                _ => self.near += 1,
            }
            if let (Some(of), Some(distance)) = (outcome.duplicate_of(), outcome.distance()) {
                self.print_duplicate(&mut out, &e.id, of, distance)?;
            }
        }
        if !self.stdout_closed {
            self.stdout_closed = closed(out.flush())?;
        }
        Ok(())
    }

    /// With `--output`, a record whose id is stored already (an earlier record's, or an
    /// earlier import's): checked, never stored over that document (which would make the
    /// store forget it, so that a later copy of it were kept too). A duplicate of a stored
    /// document is dropped; any other is written out and not stored, with a warning, as
    /// `dedup --against --add` does.
    fn check_stored_id(
        &mut self,
        store: &Store,
        out: &mut impl Write,
        (item, e): (u64, &Entry),
        rule: &MatchRule,
    ) -> Result<()> {
        let found = (store.query(QueryKey::from(e), *rule)).context("cannot read the store")?;
        if let Some(m) = found.first() {
            self.near += 1;
            return self.print_duplicate(out, &e.id, &m.doc.id, m.distance);
        }
        eprintln!(
            "warning: record {}: its id is stored already, as another document: written out, \
             not stored over it (give each record an id of its own)",
            e.id
        );
        self.kept.get_or_insert_default().push(item);
        self.unstored += 1;
        Ok(())
    }

    /// Prints the line of a duplicate not stored (unless stdout was closed).
    fn print_duplicate(
        &mut self,
        out: &mut impl Write,
        id: &str,
        of: &str,
        distance: u32,
    ) -> Result<()> {
        if !self.stdout_closed {
            let line = serde_json::json!({"id": id, "duplicate_of": of, "distance": distance});
            self.stdout_closed = closed(writeln!(out, "{line}"))?;
        }
        Ok(())
    }
}

/// True when the store holds a document under `id`.
fn stored_already(store: &Store, id: &str) -> Result<bool> {
    Ok(store.contains(&[id]).context("cannot read the store")?[0])
}

/// True when `r` failed because stdout is a closed pipe (the reader went away: the import
/// goes on, storing what it reads); other errors are errors.
fn closed(r: io::Result<()>) -> Result<bool> {
    match r {
        Ok(()) => Ok(false),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(true),
        Err(e) => Err(e).context("cannot write to stdout"),
    }
}

/// Runs the import; see [`Args`].
pub fn run(db: &Path, args: Args) -> Result<Code> {
    let store = Store::builder(db)
        .bulk_memory_bytes((args.bulk_memory as usize) << 20)
        .open()
        .with_context(|| format!("cannot open or create {}", db.display()))?;
    let bar = output::byte_progress(
        &args.files,
        "{bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} {msg}",
    );
    // The files' sizes (directories add theirs as they are walked).
    let total = bar.length().unwrap_or(0);
    let start = Instant::now();
    let mut summary = Summary::default();
    if let Some(out) = &args.output {
        check_output(&args, out)?;
        summary.kept = Some(Vec::new());
    }
    if args.dedup {
        summary.dedup = Some(dedup_rule(&store, &args)?);
    } else if args.bulk || (store.is_empty() && total >= AUTO_BULK_BYTES) {
        summary.pending = Some(store.bulk_loader().context("cannot start the bulk load")?);
    }
    // On a fatal error the summary still says what was stored before it.
    let bulk = summary.pending.is_some();
    let (outcome, expired) = super::retention::with_retention(&store, !bulk, || {
        import_all(&store, &args, &bar, &mut summary)
    });
    bar.finish_and_clear();
    let written = match &outcome {
        Ok(()) => write_kept(&args, &summary, &bar)?,
        Err(_) => String::new(),
    };
    let secs = start.elapsed().as_secs_f64();
    let s = &summary;
    let dups = match &s.dedup {
        Some(rule) => format!(
            ", not stored: {} exact duplicates, {} near duplicates ({})",
            s.exact,
            s.near,
            rule::describe(rule)
        ),
        None => String::new(),
    };
    let mut skipped = if s.skipped.total() > 0 {
        format!(", {}", s.skipped)
    } else {
        String::new()
    };
    if expired > 0 {
        skipped += &format!(
            ", {} expired by the retention policy",
            output::count(expired, "document")
        );
    }
    if s.damaged > 0 {
        skipped += &format!(
            ", {} from a damaged gzip member (stored; they may be wrong)",
            output::count(s.damaged, "record")
        );
    }
    eprintln!(
        "read {}: stored {} ({} new, {} replaced){dups}, failed {}{skipped}{written} — {:.2} s, {:.0} records/s; the store holds {}",
        output::count(s.read, "record"),
        s.stored.inserted + s.stored.replaced,
        s.stored.inserted,
        s.stored.replaced,
        s.failed,
        secs,
        s.read as f64 / secs.max(1e-9),
        output::count(store.len(), "document")
    );
    if args.json {
        let mut v = serde_json::json!({
            "read": s.read, "stored": s.stored.inserted + s.stored.replaced, "new": s.stored.inserted,
            "replaced": s.stored.replaced, "failed": s.failed, "skipped": s.skipped.total(),
            "skipped_by_reason": s.skipped.json(), "seconds": secs, "docs": store.len(),
            "damaged": s.damaged, "expired": expired,
        });
        if s.dedup.is_some() {
            v["exact_duplicates"] = s.exact.into();
            v["near_duplicates"] = s.near.into();
        }
        writeln!(io::stdout(), "{v}")?;
    }
    outcome?;
    Ok(if s.failed > 0 || s.damaged > 0 { 1 } else { 0 })
}

/// The rule of `import --dedup` (see [`simstore::Store::rule`]), refused before anything is
/// read when the tables cannot answer its k or `--verify` is no similarity.
fn dedup_rule(store: &Store, args: &Args) -> Result<MatchRule> {
    if let Some(t) = args.verify
        && !rule::is_similarity(t)
    {
        anyhow::bail!("--verify {t}: the threshold is a similarity between 0 and 1");
    }
    let rule = store.rule(Rule::options(args.k, args.verify));
    store.layout().tables_for_k(rule.k).context("--k")?;
    Ok(rule)
}

/// Reads every input into the store (or into the bulk load, then finishes it; a fatal
/// error drops the load, which leaves the store as it was).
fn import_all(
    store: &Store,
    args: &Args,
    bar: &ProgressBar,
    summary: &mut Summary<'_>,
) -> Result<()> {
    let fingerprinter = store.fingerprinter();
    let fields = args.fields.fields();
    let mut inputs =
        Inputs::new(&args.files, args.format, Some(bar.clone())).max_doc_bytes(args.max_doc_bytes);
    if args.output.is_some() {
        inputs = inputs.stamped();
    }
    let lines_only = args.output.is_some();
    let outcome = (|| -> Result<()> {
        loop {
            let chunk = inputs.next_chunk(args.batch_size as usize)?;
            if chunk.is_empty() {
                return Ok(());
            }
            let by_input = fields_by_input(&chunk, &fields);
            let parsed: Vec<(Place, Result<Entry, String>)> = chunk
                .into_par_iter()
                .map(|(place, raw)| {
                    let fields = &by_input[&place.name];
                    let entry = raw
                        .and_then(|raw| jsonl_only(raw, lines_only))
                        .and_then(|raw| input::to_record_with(raw, fields, place.number()))
                        .and_then(|record| {
                            record.into_entry(fingerprinter).map_err(|e| e.to_string())
                        });
                    (place, entry)
                })
                .collect();
            let first = summary.read;
            summary.read += parsed.len() as u64;
            let mut good = Vec::with_capacity(parsed.len());
            let mut name = None;
            for (i, (place, entry)) in parsed.into_iter().enumerate() {
                match entry {
                    Ok(e) => {
                        name.get_or_insert_with(|| place.name.clone());
                        good.push((first + i as u64, e));
                    }
                    Err(err) => {
                        summary.failed += 1;
                        summary.failed_items.push(first + i as u64);
                        bar.suspend(|| {
                            eprintln!("error: {place}: {err}; {} skipped", place.skipped())
                        });
                    }
                }
            }
            let name = name.as_deref().unwrap_or("the input");
            summary.store(store, name, good)?;
            for d in inputs.take_damaged() {
                // The records are stored (in batches, or pushed into the bulk load).
                let failed = &summary.failed_items;
                let failed = failed.partition_point(|&i| i < d.items.end)
                    - failed.partition_point(|&i| i < d.items.start);
                let n = d.items.end - d.items.start - failed as u64;
                summary.damaged += n;
                let outcome = " were stored; they may be wrong: import them again from a good \
                               copy of the file";
                let read = output::count(n, "record");
                bar.suspend(|| eprintln!("{}", d.error(read, outcome)));
            }
        }
    })();
    summary.skipped = std::mem::take(&mut inputs.skipped);
    summary.stamps = inputs.take_stamps();
    // Taken before any return: the load holds the writer lock until it ends.
    let loader = summary.pending.take();
    outcome?;
    if let Some(loader) = loader {
        bar.set_message("writing sorted tables");
        let out = loader.finish().context("bulk load failed")?;
        summary.stored.inserted += out.inserted;
        summary.stored.replaced += out.replaced;
    }
    Ok(())
}

/// The fields of each input of `chunk`: `fields`, naming a record without an id by its
/// input and line (`small.jsonl:3`), so that such records of two inputs never replace one
/// another in the store.
fn fields_by_input(chunk: &[input::Item], fields: &Fields) -> HashMap<Arc<str>, Fields> {
    let mut by = HashMap::new();
    for (place, _) in chunk {
        by.entry(place.name.clone()).or_insert_with(|| Fields {
            line_prefix: format!("{}:", place.name),
            ..fields.clone()
        });
    }
    by
}

/// `raw`, or with `--output` (which writes JSONL lines back) an error for a page item.
fn jsonl_only(raw: input::Raw, lines_only: bool) -> Result<input::Raw, String> {
    match raw {
        input::Raw::Page { .. } if lines_only => Err("--output writes the stored JSONL lines \
             back, and this input is not JSONL: import it without --output"
            .to_owned()),
        raw => Ok(raw),
    }
}

/// `import --dedup --output`: refuses stdin (read twice) and an output that is an input
/// or cannot be written, before anything is read.
fn check_output(args: &Args, output: &Path) -> Result<()> {
    if args.files.iter().any(|f| f == "-") {
        anyhow::bail!(
            "import --output reads its input twice (records first, stored lines next), and \
             stdin cannot be read twice: save it to a file first"
        );
    }
    let out = std::fs::canonicalize(output).ok();
    if out.is_some()
        && args
            .files
            .iter()
            .any(|f| std::fs::canonicalize(f).ok() == out)
    {
        anyhow::bail!(
            "--output {} is also an input: write the records to another file",
            output.display()
        );
    }
    super::outfile::OutFile::check(output)
}

/// With `--output`: the stored records' lines written (a second read of the inputs).
fn write_kept(args: &Args, summary: &Summary<'_>, bar: &ProgressBar) -> Result<String> {
    let (Some(out), Some(kept)) = (&args.output, &summary.kept) else {
        return Ok(String::new());
    };
    bar.reset();
    let inputs = (&args.files[..], args.format);
    let stamps = (summary.read, &summary.stamps[..]);
    let n = super::dedup::copy_kept_as_lines(inputs, kept, stamps, out, bar)?;
    bar.finish_and_clear();
    let unstored = match summary.unstored {
        0 => String::new(),
        u => format!(" ({u} of them not stored: their ids were stored already)"),
    };
    Ok(format!(
        ", {} written to {}{unstored}",
        output::count(n, "record"),
        out.display()
    ))
}
