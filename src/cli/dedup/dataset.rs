//! `simstore dedup FILE... --output KEPT`: a dataset deduplicated, keeping the records that
//! the leader clustering keeps ([`simstore::index::leader`]; with `--transitive`, the first
//! of every connected component) and writing their JSONL lines unchanged.
//!
//! Two passes over the inputs, so that memory does not grow with the records' size: pass 1
//! fingerprints every record in parallel and keeps only its item number, fingerprint and
//! (when the rule verifies) sketch ([`Pass1`]: 16 bytes a record, 81 with sketches), and
//! the clusters are formed in memory; pass 2 reads the inputs again and copies the kept
//! lines byte for byte. Stdin, which cannot be read twice, was copied to a file first
//! (`input::spool`); an input that changed between the two passes (another file, size,
//! modification or status change time, or other bytes read: [`Stamp`]) fails the run, and
//! nothing is written.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::ProgressBar;
use simstore::Sketch;

use super::items::Items;
use super::keep::{self, Keep, Rank};
use super::kept::{KeptOut, Target};
use super::records::{self, ReadOptions, Sink};
use super::report::Report;
use super::shards;
use super::{Args, Summary, provenance};
use crate::cli::Code;
use crate::cli::input::{Inputs, Place, Raw, Stamp};
use simstore::index::near::ExactCheck;

/// What pass 1 keeps of every record read, by record index (input order).
#[derive(Default)]
struct Pass1 {
    /// Item numbers (positions among the items of the inputs), increasing.
    items: Items,
    fps: Vec<u64>,
    /// Sketches, when the rule verifies only.
    sketches: Vec<Option<Sketch>>,
    /// Whether sketches are kept.
    sketch: bool,
    /// Ranks, when the keep policy ranks only.
    ranks: Vec<Rank>,
    /// Ids and places, for `--clusters` only.
    origins: Vec<(String, Place)>,
    /// Whether origins are kept.
    origin: bool,
    /// The partial records.
    partial: records::Partial,
}

impl Sink for Pass1 {
    fn push(&mut self, r: records::Read) {
        self.items.push(r.item);
        self.partial.push(self.fps.len(), r.partial);
        self.fps.push(r.fp);
        if self.sketch {
            self.sketches.push(r.sketch);
        }
        if r.rank != Rank::Unranked {
            self.ranks.push(r.rank);
        }
        if self.origin {
            self.origins.push((r.id, r.place));
        }
    }

    fn reserve(&mut self, n: usize) {
        self.fps.reserve_exact(n);
        if self.sketch {
            self.sketches.reserve_exact(n);
        }
    }

    fn drop_items(&mut self, items: Range<u64>) -> u64 {
        let at = self.items.drop_range(items);
        self.partial.drop_range(at.clone());
        records::drain(&mut self.fps, at.clone());
        records::drain(&mut self.sketches, at.clone());
        records::drain(&mut self.ranks, at.clone());
        records::drain(&mut self.origins, at.clone());
        at.len() as u64
    }
}

/// Runs the dataset dedup; see the module documentation.
pub(super) fn run(args: &Args, output: &Path, start: Instant) -> Result<Code> {
    let parquet_in = shards::inputs(&args.files, args.format)?;
    let target = Target::checked(args, output, parquet_in.is_some())?;
    let opts = ReadOptions::of(args);
    let bar = records::progress(&args.files, "fingerprinting");
    let mut pass1 = Pass1 {
        sketch: opts.sketch,
        origin: args.clusters.is_some() || args.report.is_some(),
        ..Pass1::default()
    };
    let (counts, stamps) = match &parquet_in {
        Some(files) => shards::read_records(files, &opts, &bar, &mut pass1)?,
        None => (
            records::read_records(args, &opts, &bar, &mut pass1)?,
            Vec::new(),
        ),
    };
    bar.finish_and_clear();
    some_fingerprinted(&counts)?;
    let (items, pairs, histogram, check) = decide(args, pass1)?;
    let items = with_unjudged(items, &counts.unjudged);
    // What pass 1, the scan and the check freed would otherwise stay resident under pass
    // 2's reader and writer (the purge delay counts from each free, and pass 2 reuses
    // little of it): at 200k records the peak was in pass 2, 12 MiB higher.
    crate::release_freed_memory();
    for f in args.files.iter().filter(|f| is_fifo(f)) {
        eprintln!("note: pass 2 opens the named pipe {f} again: waiting for its writer");
    }
    let bar = records::progress(&args.files, "writing kept records");
    let (written, shards_written) = match &parquet_in {
        Some(files) => shards::copy_kept(files, &stamps, &items, &target, &bar)?,
        None => {
            let inputs = (&args.files[..], args.format);
            copy_kept(
                inputs,
                &items,
                (counts.items, &counts.stamps),
                &target,
                &bar,
            )?
        }
    };
    bar.finish_and_clear();
    let summary = Summary {
        documents: counts.records,
        pairs,
        histogram,
        failed: counts.failed,
    };
    let dropped = counts.records - written;
    let shards_note = match shards_written {
        0 | 1 => String::new(),
        n => format!(" ({n} shards)"),
    };
    let unjudged = match counts.unjudged.len() {
        0 => String::new(),
        n => format!(", {n} of them not fingerprinted (see above)"),
    };
    let kept = format!(
        "; kept {written}{unjudged}, dropped {dropped} (--keep {}), written to {}{shards_note}",
        args.keep,
        output.display()
    );
    let tail = super::summary_tail(args) + &super::exact::summary(&check) + &kept;
    summary.print(
        &super::pairs_in(args, &super::files_mode(args)),
        &tail,
        start,
    );
    // The job is the kept records: a corpus without duplicates is no failure (a pipeline
    // under `set -e` goes on), a line left out is.
    Ok(u8::from(counts.failed > 0))
}

/// Refuses a pass 1 that fingerprinted no record: none could be read, or none had a text
/// (a `--text-field` naming no field is a mistake, not a dataset to copy as it is).
fn some_fingerprinted(counts: &records::Counts) -> Result<()> {
    if counts.records == 0 && counts.failed > 0 {
        anyhow::bail!(
            "no record of the input could be read ({} failed, see above): nothing written",
            counts.failed
        );
    }
    let unjudged = counts.unjudged.len() as u64;
    if unjudged > 0 && unjudged == counts.records {
        anyhow::bail!(
            "none of the {unjudged} records could be fingerprinted (see above): nothing \
             written; check --text-field (the field holding each record's text) or \
             --id-field (each record's id: a string or a whole number), as the messages above \
             say"
        );
    }
    Ok(())
}

/// The item numbers `kept` (increasing) and those of the records kept unjudged (no
/// fingerprint: [`records::Counts::unjudged`]), in order.
fn with_unjudged(mut kept: Vec<u64>, unjudged: &[u64]) -> Vec<u64> {
    if !unjudged.is_empty() {
        kept.extend_from_slice(unjudged);
        kept.sort_unstable();
    }
    kept
}

/// What [`decide`] decided: the item numbers of the records kept, the pairs found, the
/// cluster sizes and what the check of the pairs near the threshold did.
type Decided = (Vec<u64>, u64, BTreeMap<usize, u64>, ExactCheck);

/// Clusters the records of pass 1 by the keep policy (writing `--clusters`); returns the
/// item numbers of the records kept, the pairs found and the cluster sizes.
fn decide(args: &Args, pass1: Pass1) -> Result<Decided> {
    let Pass1 {
        items,
        fps,
        sketches,
        ranks,
        origins,
        partial,
        ..
    } = pass1;
    let order = keep::order(&args.keep, &ranks);
    drop(ranks);
    let grouping = super::grouping(args, fps.len()).context("dedup failed")?;
    let records = (&fps[..], &sketches[..], order);
    let texts = (&items, partial.as_slice());
    let (mut clusters, check) =
        super::exact::clusters(args, texts, records, &grouping, |_, _, _| Ok(()))
            .context("dedup failed")?;
    let kept = clusters.kept(args.keep == Keep::None);
    if args.clusters.is_some() || args.report.is_some() {
        let sets = clusters.sets(2);
        let records = provenance::Records {
            fps: &fps,
            sketches: &sketches,
            kept: &kept,
            exact: clusters.exact(),
        };
        let origin = |i: u32| {
            let (id, place) = &origins[i as usize];
            provenance::Origin {
                id,
                place: Some(place),
            }
        };
        if let Some(path) = &args.clusters {
            provenance::write(path, &sets, &records, origin)?;
        }
        if let Some(path) = &args.report {
            let report = Report::new(&sets, &records, |i| items.get(i as usize), origin);
            super::write_report(path, args, report)?;
        }
    }
    drop((fps, sketches, origins));
    let items = (items.iter().zip(&kept))
        .filter_map(|(item, &keep)| keep.then_some(item))
        .collect();
    Ok((items, clusters.pairs(), clusters.set_sizes(2), check))
}

/// Whether `path` is a named pipe.
fn is_fifo(path: &str) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// Refuses what is not written back (a --format other than jsonl, parquet or auto), and an
/// output that is one of the inputs.
pub(super) fn check_inputs(args: &Args, output: &Path) -> Result<()> {
    if !matches!(
        args.format,
        super::Format::Auto | super::Format::Jsonl | super::Format::Parquet
    ) {
        anyhow::bail!(
            "dedup --output writes records back as JSONL lines or Parquet rows: use --format \
             jsonl or parquet (or auto)"
        );
    }
    if let Some(input) = crate::cli::outfile::input_holding(output, &args.files) {
        anyhow::bail!(
            "--output {} is the input {input} or inside it: write the kept records elsewhere",
            output.display()
        );
    }
    Ok(())
}

/// `import --dedup --output`: writes the items numbered `kept` of JSONL `inputs` to
/// `output` as JSON lines (see [`copy_kept`]); returns how many.
pub fn copy_kept_as_lines(
    inputs: (&[String], super::Format),
    kept: &[u64],
    pass1: (u64, &[crate::cli::input::Stamp]),
    output: &Path,
    bar: &indicatif::ProgressBar,
) -> Result<u64> {
    let target = Target {
        path: output,
        parquet: false,
        compression: None,
        shard_rows: usize::MAX,
        text: String::new(),
    };
    Ok(copy_kept(inputs, kept, pass1, &target, bar)?.0)
}

/// Pass 2: reads the inputs again and writes the items numbered `kept` (increasing) to
/// `target`; returns how many, and how many Parquet shards hold them. `pass1` is what
/// pass 1 read: the number of items and the files' [`Stamp`]s. Another file, size, modification or status change time or bytes read, a different
/// count, or a kept item that is no longer a JSONL line, means the input changed: an
/// error, and the output is left as it was (written through to a FIFO or a device, what
/// was written stays written).
pub fn copy_kept(
    (files, format): (&[String], super::Format),
    kept: &[u64],
    pass1: (u64, &[Stamp]),
    target: &Target,
    bar: &ProgressBar,
) -> Result<(u64, usize)> {
    let (items, stamps) = pass1;
    let output = target.path;
    let changed = |name: Option<&str>| {
        let what = name.map_or_else(|| "the input".to_owned(), |n| format!("the input {n}"));
        anyhow::anyhow!(
            "{what} changed between the two passes of dedup --output (fingerprints, then \
             the kept lines): nothing written to {}; leave the input unchanged while dedup \
             runs, then run it again",
            output.display()
        )
    };
    let mut out = KeptOut::for_lines(target)?;
    let mut inputs = Inputs::new(files, format, Some(bar.clone())).stamped();
    let (mut item, mut next) = (0u64, kept.iter().peekable());
    loop {
        let chunk = inputs.next_chunk(4096)?;
        if chunk.is_empty() {
            break;
        }
        for (place, raw) in chunk {
            if item == 0
                && let Ok(Raw::Json(line)) = &raw
            {
                out.first_line(line);
            }
            if next.peek() == Some(&&item) {
                next.next();
                let Ok(Raw::Json(line)) = raw else {
                    return Err(changed(Some(&place.name)));
                };
                out.push_line(&line)?;
            }
            item += 1;
        }
    }
    let again = inputs.take_stamps();
    if let Some(s) = again
        .iter()
        .zip(stamps)
        .find(|(now, then)| now.differs_from(then))
    {
        return Err(changed(Some(&s.0.path.to_string_lossy())));
    }
    if item != items || next.peek().is_some() || again.len() != stamps.len() {
        return Err(changed(None));
    }
    let shards = out.finish(output)?;
    Ok((kept.len() as u64, shards))
}
