//! Pass 1 of a dedup of files: every record read and fingerprinted in parallel, handed on
//! in input order with its position among the items of the inputs.

use std::ops::Range;

use anyhow::Result;
use indicatif::ProgressBar;
use rayon::prelude::*;
use simstore::index::near::is_partial;
use simstore::input::reader::{self, Fields, Record};
use simstore::{Fingerprinter, Sketch};

use super::Args;
use super::keep::{Keep, Rank};
use crate::cli::input::{self, Inputs, Place, Raw, Stamp};
use crate::cli::output;

/// How many items are read and fingerprinted at a time.
const CHUNK_ITEMS: usize = 4096;

/// One record read: where it is among the items of the inputs (blank lines are no items),
/// its fingerprint, its sketch (when the rule verifies), id, title, line and rank (by the
/// keep policy).
pub(super) struct Read {
    pub item: u64,
    pub fp: u64,
    pub sketch: Option<Sketch>,
    pub id: String,
    pub title: Option<String>,
    pub place: Place,
    pub rank: Rank,
    /// Whether the cleaner (or a page's reader) left out much of its text
    /// ([`is_partial`]): its pairs are decided by the texts ([`simstore::index::near::Texts::partial`]).
    pub partial: bool,
}

/// The records, by index among those read (increasing), that are partial
/// ([`Read::partial`]).
#[derive(Default)]
pub(super) struct Partial(Vec<u32>);

impl Partial {
    /// Notes record `index` (the highest yet) if `partial`.
    pub fn push(&mut self, index: usize, partial: bool) {
        if partial {
            self.0.push(index as u32);
        }
    }

    /// Removes the records `at` (indices), those after them moving down.
    pub fn drop_range(&mut self, at: Range<usize>) {
        let gone = at.len() as u32;
        self.0.retain(|&i| !at.contains(&(i as usize)));
        self.0
            .iter_mut()
            .filter(|i| **i as usize >= at.end)
            .for_each(|i| *i -= gone);
    }

    /// The indices, increasing.
    pub fn as_slice(&self) -> &[u32] {
        &self.0
    }
}

/// How the records of the inputs are read: the fields (`--id-field`, `--text-field`;
/// ids optional), whether sketches are made (when the rule verifies), whether every item must be a
/// JSONL line (`--output` writes them back), what records are ranked by (`--keep`).
pub(super) struct ReadOptions {
    pub fields: Fields,
    pub sketch: bool,
    pub jsonl_only: bool,
    pub keep: Keep,
}

impl ReadOptions {
    /// The options of `args`.
    pub fn of(args: &Args) -> Self {
        ReadOptions {
            fields: Fields {
                id: args.fields.id_field.clone(),
                optional_id: true,
                names_only: true,
                text: args.fields.text_field.clone(),
                line_prefix: String::new(),
            },
            sketch: args.rule.min_similarity.is_some(),
            jsonl_only: args.output.is_some(),
            keep: args.keep.clone(),
        }
    }
}

/// A progress bar over the bytes of `files` (drawn on a terminal only), saying `msg`.
pub(super) fn progress(files: &[String], msg: &'static str) -> ProgressBar {
    let bar = output::byte_progress(
        files,
        "{msg} {bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec}",
    );
    bar.set_message(msg);
    bar
}

/// What pass 1 counted: records read, records failed (each reported on stderr), items;
/// with `--output`, the files read ([`Stamp`]s) and the records kept unjudged.
#[derive(Default)]
pub(super) struct Counts {
    pub records: u64,
    pub failed: u64,
    pub items: u64,
    pub stamps: Vec<Stamp>,
    /// With `--output`: the item numbers, increasing, of the records that could not be
    /// fingerprinted (no text, a text that is not a string, a field too long...). They
    /// duplicate nothing that can be told, so they are kept as they are, in no cluster:
    /// a dedup drops a record only for a duplicate it found.
    pub unjudged: Vec<u64>,
}

impl Counts {
    /// Counts item `item` (at `place`), which failed with `e`: a record kept unjudged when
    /// `keeps` (and it is a record), else a failure (the `what` skipped: record, row...);
    /// says so on stderr.
    pub fn failed_at(&mut self, (item, place): (u64, &str), e: &Skip, keeps: bool, what: &str) {
        if keeps && e.record {
            self.records += 1;
            self.unjudged.push(item);
            eprintln!(
                "warning: {place}: {}; kept as it is, in no cluster",
                e.message
            );
        } else {
            self.failed += 1;
            eprintln!("error: {place}: {}; {what} skipped", e.message);
        }
    }
}

/// Why an item has no fingerprint: its message, and whether it is a record (read, but not
/// fingerprinted) rather than input that is not one (a line that is not JSON).
pub(super) struct Skip {
    pub message: String,
    pub record: bool,
}

impl Skip {
    /// Why a JSONL line was skipped: `e`, a record's fault or not.
    pub(super) fn of(e: reader::RecordError) -> Skip {
        Skip {
            record: e.is_a_record(),
            message: e.to_string(),
        }
    }
}

/// Where the records read go.
pub(super) trait Sink {
    /// Takes the next record (in input order).
    fn push(&mut self, r: Read);
    /// Makes room for `n` more records (their number is known: Parquet footers), so that
    /// the columns are not grown by doubling, each growth leaving the old buffer behind.
    fn reserve(&mut self, n: usize);
    /// Removes the records pushed whose items are in `items` (read from a damaged gzip
    /// member); says how many there were.
    fn drop_items(&mut self, items: Range<u64>) -> u64;
}

/// Reads and fingerprints every record of `args.files` (chunks in parallel), pushing the
/// records into `sink` in input order. A record that fails is reported (with `bar`
/// suspended) and counted; so are the records read from a damaged gzip member before its
/// damage was found, which `sink` drops again. An input that cannot be read, or a page
/// item when only JSONL lines will do, ends the run with an error.
pub(super) fn read_records(
    args: &Args,
    opts: &ReadOptions,
    bar: &ProgressBar,
    sink: &mut impl Sink,
) -> Result<Counts> {
    let f = Fingerprinter::new();
    let mut counts = Counts::default();
    let mut inputs = Inputs::new(&args.files, args.format, Some(bar.clone()));
    if opts.jsonl_only {
        inputs = inputs.stamped();
    }
    let read = |send: &dyn Fn((Vec<input::Item>, Vec<input::Damaged>)) -> bool| loop {
        let chunk = inputs.next_chunk(CHUNK_ITEMS)?;
        if chunk.is_empty() || !send((chunk, inputs.take_damaged())) {
            return Ok(inputs.take_stamps());
        }
    };
    counts.stamps = overlapped(read, |(chunk, damaged)| {
        push_chunk(chunk, opts, &f, (&mut counts, bar), sink)?;
        for damaged in damaged {
            let held = counts.unjudged.len();
            counts.unjudged.retain(|i| !damaged.items.contains(i));
            let n = sink.drop_items(damaged.items.clone()) + (held - counts.unjudged.len()) as u64;
            counts.records -= n;
            counts.failed += n;
            let read = output::count(n, "record");
            bar.suspend(|| eprintln!("{}", damaged.error(read, input::LEFT_OUT)));
        }
        Ok(())
    })?;
    Ok(counts)
}

/// Fingerprints the items of `chunk` in parallel and pushes them into `sink` in order;
/// an item that is not a record of JSONL ends the run when only those will do.
fn push_chunk(
    chunk: Vec<input::Item>,
    opts: &ReadOptions,
    f: &Fingerprinter,
    (counts, bar): (&mut Counts, &ProgressBar),
    sink: &mut impl Sink,
) -> Result<()> {
    let first = counts.items;
    counts.items += chunk.len() as u64;
    let parsed: Vec<_> = chunk
        .into_par_iter()
        .enumerate()
        .map(|(i, (place, raw))| {
            let r = fingerprint(raw, &place, opts, f);
            (first + i as u64, place, r)
        })
        .collect();
    for (item, place, r) in parsed {
        match r {
            Ok(Some(read)) => {
                counts.records += 1;
                sink.push(Read {
                    item,
                    place,
                    ..read
                });
            }
            Ok(None) => anyhow::bail!(
                "{place}: --output writes the kept records back, and this input is not JSONL \
                 (a text, HTML or WARC input): dedup it without --output, or convert it to \
                 JSONL (Parquet: name the file .parquet, or give --format parquet)"
            ),
            Err(e) => bar.suspend(|| {
                let at = place.to_string();
                counts.failed_at((item, &at), &e, opts.jsonl_only, place.skipped())
            }),
        }
    }
    Ok(())
}

/// With `--output` (which reads the inputs twice): the inputs that cannot be opened twice
/// (stdin, a `<(...)`) copied to scratch files beside the output, read instead of them;
/// the output is checked first. The files are removed when dropped.
pub(super) fn spool_streams(args: &mut Args) -> Result<Vec<tempfile::NamedTempFile>> {
    let Some(out) = args.output.clone() else {
        return Ok(Vec::new());
    };
    if !args
        .files
        .iter()
        .any(|f| crate::cli::input::cannot_reopen(f))
    {
        return Ok(Vec::new());
    }
    super::kept::Target::check(
        args,
        &out,
        super::shards::inputs(&args.files, args.format)?.is_some(),
    )?;
    let mut scratch = Vec::new();
    for f in args.files.iter_mut() {
        if crate::cli::input::cannot_reopen(f) {
            let (path, file) = crate::cli::input::spool(f, &out)?;
            *f = path;
            scratch.push(file);
        }
    }
    Ok(scratch)
}

/// Runs `produce` on a thread of its own, handing each value it sends (`send` returns
/// false once the consumer is gone) to `consume` here, one value in flight: reading
/// (decompressing, decoding) overlaps the parallel work on what was read before. Returns
/// what `produce` returns, or the first error of either.
pub(super) fn overlapped<T: Send, R: Send>(
    produce: impl FnOnce(&dyn Fn(T) -> bool) -> Result<R> + Send,
    mut consume: impl FnMut(T) -> Result<()>,
) -> Result<R> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<T>(1);
    std::thread::scope(|s| {
        let producer = s.spawn(move || produce(&|v| tx.send(v).is_ok()));
        let consumed = rx.iter().try_for_each(&mut consume);
        drop(rx);
        let produced = producer
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        consumed.and(produced)
    })
}

/// Removes `at` from `v`, a vector kept beside the item numbers ([`super::items::Items`]), or
/// empty: nothing kept.
pub(super) fn drain<T>(v: &mut Vec<T>, at: Range<usize>) {
    if !v.is_empty() {
        v.drain(at);
    }
}

/// Parses and fingerprints one item: a [`Read`] whose item number and place the caller
/// fills in; `None` for a page item when only JSONL lines will do.
fn fingerprint(
    raw: Result<Raw, String>,
    place: &Place,
    opts: &ReadOptions,
    f: &Fingerprinter,
) -> Result<Option<Read>, Skip> {
    let raw = raw.map_err(|message| Skip {
        message,
        record: false,
    })?;
    let rank = opts.keep.rank_item(&raw);
    if opts.jsonl_only && !matches!(raw, Raw::Json(_)) {
        return Ok(None);
    }
    let r = record_of(raw, &opts.fields, place.number())?;
    read_of(r, rank, place, opts, f)
        .map(Some)
        .map_err(|message| Skip {
            message,
            record: true,
        })
}

/// The record of an item read by `fields` (`line` its line or record number), or why it
/// has none: a JSON line that is a record but not one of `fields` (no text, a text that is
/// not a string) is a record all the same ([`Skip::record`]).
pub(super) fn record_of(raw: Raw, fields: &Fields, line: u64) -> Result<Record, Skip> {
    match raw {
        Raw::Json(bytes) => reader::parse_jsonl_fields(&bytes, fields, line).map_err(Skip::of),
        page => input::to_record_with(page, fields, line).map_err(|message| Skip {
            message,
            record: false,
        }),
    }
}

/// A record fingerprinted (with its sketch when the rule verifies) into a [`Read`] whose
/// item number the caller fills in; `rank` is its field's, if the policy reads a field.
pub(super) fn read_of(
    r: Record,
    rank: Rank,
    place: &Place,
    opts: &ReadOptions,
    f: &Fingerprinter,
) -> Result<Read, String> {
    let (fp, sketch, partial) = match (opts.sketch, r.fp) {
        (true, None) => {
            let a = r.analysis(f).map_err(|e| e.to_string())?;
            (
                a.fingerprint,
                a.sketch,
                is_partial(f, &a, r.left_out.as_deref()),
            )
        }
        (true, Some(fp)) => (fp, None, false),
        (false, _) => (r.fingerprint(f).map_err(|e| e.to_string())?, None, false),
    };
    let rank = opts.keep.rank_text(rank, r.text.as_deref());
    Ok(Read {
        item: 0,
        fp: fp.0,
        sketch,
        id: r.id,
        title: r.title,
        place: place.clone(),
        rank,
        partial,
    })
}

/// The texts (title, then text) of the records numbered `items` among the items of the
/// inputs, read again (Parquet shards: their text column), for `--report`.
pub(super) fn texts_of(
    args: &Args,
    items: &std::collections::BTreeSet<u64>,
) -> Result<std::collections::HashMap<u64, String>> {
    let mut texts = std::collections::HashMap::new();
    let items: Vec<u64> = items.iter().copied().collect();
    each_record(args, &items, |item, r| {
        let title = r.title.map(|t| t + "\n").unwrap_or_default();
        texts.insert(item, title + r.text.as_deref().unwrap_or(""));
        true
    })?;
    Ok(texts)
}

/// The first of `files` that cannot be read a second time: stdin, or a pipe (a FIFO, a
/// `<(...)`) or a device.
pub(super) fn once_only(files: &[String]) -> Option<&str> {
    let once =
        |f: &str| f == "-" || std::fs::metadata(f).is_ok_and(|m| !m.is_file() && !m.is_dir());
    files.iter().map(String::as_str).find(|&f| once(f))
}

/// Reads the inputs again and calls `on(item, record)` with each of the records numbered
/// `items` (increasing) among their items that reads (Parquet shards: its text column
/// alone), in input order, until `on` returns false or no item is left.
pub(super) fn each_record(
    args: &Args,
    items: &[u64],
    mut on: impl FnMut(u64, Record) -> bool,
) -> Result<()> {
    let opts = ReadOptions::of(args);
    if let Some(shards) = super::shards::inputs(&args.files, args.format)? {
        return super::shards::each_record(&shards, &opts, items, on);
    }
    let mut inputs = Inputs::new(&args.files, args.format, None);
    let (mut item, mut wanted) = (0u64, items.iter().peekable());
    loop {
        let chunk = inputs.next_chunk(CHUNK_ITEMS)?;
        if chunk.is_empty() || wanted.peek().is_none() {
            return Ok(());
        }
        for (place, raw) in chunk {
            if wanted.next_if_eq(&&item).is_some()
                && let Ok(r) =
                    raw.and_then(|raw| input::to_record_with(raw, &opts.fields, place.number()))
                && !on(item, r)
            {
                return Ok(());
            }
            item += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Partial, overlapped};

    #[test]
    fn partial_records_follow_a_dropped_range() {
        // Against a model: a flag per record, the dropped range drained from it.
        let flags: Vec<bool> = (0..40).map(|i| i % 3 == 0 || i == 17).collect();
        let mut p = Partial::default();
        flags.iter().enumerate().for_each(|(i, &f)| p.push(i, f));
        for at in [10..20, 0..3, 5..5] {
            let mut model = flags.clone();
            model.drain(at.clone());
            let mut q = Partial(p.as_slice().to_vec());
            q.drop_range(at);
            let want: Vec<u32> = (0..model.len() as u32)
                .filter(|&i| model[i as usize])
                .collect();
            assert_eq!(q.as_slice(), &want[..]);
        }
    }

    #[test]
    fn overlapped_hands_on_every_value_in_order_and_stops_on_either_error() {
        let mut got = Vec::new();
        let sent = overlapped(
            |send| Ok((0..1000).take_while(|&i| send(i)).count()),
            |v| {
                got.push(v);
                Ok(())
            },
        );
        assert_eq!(sent.unwrap(), 1000);
        assert_eq!(got, (0..1000).collect::<Vec<_>>());
        // A consumer that fails ends the producer (its sends fail), without a hang.
        let failed = overlapped(
            |send| Ok((0..u64::MAX).take_while(|&i| send(i)).count()),
            |v| match v {
                3 => anyhow::bail!("bad value {v}"),
                _ => Ok(()),
            },
        );
        assert_eq!(failed.unwrap_err().to_string(), "bad value 3");
        // A producer that fails is the error, after what it sent was consumed.
        let mut n = 0;
        let failed: anyhow::Result<()> = overlapped(
            |send| {
                send(1);
                anyhow::bail!("cannot read")
            },
            |_| {
                n += 1;
                Ok(())
            },
        );
        assert_eq!(
            (failed.unwrap_err().to_string(), n),
            ("cannot read".into(), 1)
        );
    }
}
