//! `simstore dedup NEW... --against STORE [--add]`: a new dump deduplicated against what a
//! store already holds, and among itself, in one pass in input order.
//!
//! Each record is checked as `check_and_insert` checks it, but as a dataset's record
//! (`rule::for_records`: the quality mode's rule at a dataset's threshold, or
//! `--k`/`--verify`; a short text repeated is a copy; digits count in the content hash): a
//! record whose content, or a near duplicate of it, is in
//! the store, or among the records of the run kept before it, is dropped; the others are
//! kept. With `--add` the kept records are stored (so dump N+1 is deduplicated against
//! dumps 1..N); without, the store is only read and the records kept so far are held in a
//! scratch store in memory with the store's layout. `--keep longest|newest:F|oldest:F`
//! checks the records in the policy's order instead (all are read and fingerprinted
//! first), so the preferred of two near copies is kept unless the store holds one.
//! `--output` writes the kept records' lines (a second pass, as a dataset dedup does),
//! `--clusters` one row per dropped record.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::ProgressBar;
use rayon::prelude::*;
use simstore::input::reader::{self, Fields, Record, RecordError};
use simstore::store::RedisUrl;
use simstore::{CheckOutcome, Entry, Fingerprinter, MatchRule, QueryKey, Store, StoreBuilder};

use super::Args;
use super::keep::{Keep, Rank};
use super::kept::Target;
use super::records::{self, Skip};
use super::{dataset, shards};
use crate::cli::input::{self, Inputs, Place, Raw, Stamp};
use crate::cli::{Code, output};

mod damaged;
mod report;

/// Records read and checked at a time.
const CHUNK_ITEMS: usize = 2048;

/// A record read: its item number, where it is, its entry (or why it has none).
type Read = (u64, Place, Result<Entry, Skip>);

/// A record dropped: where it is, and the document it duplicates.
struct Dropped {
    /// Its item number.
    item: u64,
    /// Its id (its line number when it has none).
    id: String,
    place: Place,
    /// The id of the document it duplicates.
    of: String,
    distance: u32,
    /// Whether that document was in the store before the run.
    stored: bool,
}

/// What the pass over the inputs found.
#[derive(Default)]
struct Found {
    /// Item numbers of the records kept, increasing.
    kept: Vec<u64>,
    dropped: Vec<Dropped>,
    /// Records read, failed, and items read.
    records: u64,
    failed: u64,
    /// With `--output`: of the records kept, those that could not be fingerprinted (no
    /// text, a field too long to store...), kept as they are, unchecked and not stored.
    unjudged: u64,
    /// With `--add`: of the records kept, those not stored because their id was stored
    /// already (before the run, or by an earlier record of it).
    taken: u64,
    /// With `--add`: of the records kept, those not stored because they have no id (they
    /// are checked, named by their line numbers, as without `--add`).
    unnamed: u64,
    /// With `--add`: records the store held under their own id with their fingerprint
    /// before the run: kept with `--resume` (a killed run stored them), else dropped.
    own: u64,
    items: u64,
    stamps: Vec<Stamp>,
}

/// The stores a record is checked against: the reference store, and a scratch store in
/// memory (its ids item numbers) of the records kept so far (without `--add`) or of those
/// kept but not stored (with).
struct Against<'a> {
    store: &'a Store,
    scratch: Option<Store>,
    rule: MatchRule,
    /// The store's fingerprinter, counting digits in the content hash
    /// ([`simstore::Fingerprinter::counting_digits`]): records that differ in their
    /// numbers are no exact duplicates.
    fingerprinter: Fingerprinter,
    fields: Fields,
    /// The ids of the records in the scratch store (`scratch` or `unstored`), by the item
    /// number it names them by.
    ids: HashMap<u64, String>,
    /// With `--add`: the ids of the records stored by the run.
    added: HashSet<String>,
    /// With `--add`: the records kept but not stored (their ids were taken), by item number
    /// (their ids in `ids`), so that later records are checked against them too.
    unstored: Option<Store>,
    /// `--resume`: see [`Found::own`].
    resume: bool,
    /// With `--add`: the item numbers of the records read without an id (named by their
    /// line numbers: checked, never stored), until they are checked.
    unnamed: HashSet<u64>,
    /// Whether a record that cannot be fingerprinted is kept as it is (`--output`: a dedup
    /// drops a record only for a duplicate it found), else skipped.
    keeps_unjudged: bool,
}

/// Runs the dedup against the store at `reference`; see the module documentation.
pub(super) fn run(args: &Args, reference: &Path, start: Instant) -> Result<Code> {
    check_args(args)?;
    // Parquet shards (a directory of them, or files) are read as records, row by row.
    let shards = shards::inputs(&args.files, args.format)?;
    let target = match &args.output {
        Some(out) => Some(Target::checked(args, out, shards.is_some())?),
        None => None,
    };
    let stamps: Vec<shards::Stamp> = match &shards {
        Some(paths) => paths
            .iter()
            .map(|p| shards::stamp(p))
            .collect::<Result<_>>()?,
        None => Vec::new(),
    };
    let files: Vec<String> = match &shards {
        Some(paths) => paths
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
        None => args.files.clone(),
    };
    let store = open(reference, args.add)?;
    let rule = crate::cli::rule::for_records(&store, args.k_arg, args.verify);
    store.layout().tables_for_k(rule.k).context("--k")?;
    let (scratch, unstored) = match args.add {
        true => (None, Some(scratch_store(&store)?)),
        false => (Some(scratch_store(&store)?), None),
    };
    let mut against = Against {
        store: &store,
        scratch,
        rule,
        fingerprinter: store.fingerprinter().clone().counting_digits(),
        fields: fields(args),
        ids: HashMap::new(),
        keeps_unjudged: args.output.is_some(),
        added: HashSet::new(),
        unstored,
        resume: args.resume,
        unnamed: HashSet::new(),
    };
    let bar = records::progress(&args.files, "checking");
    let found = against.read_all((&files, args), &bar)?;
    bar.finish_and_clear();
    let written = match &target {
        Some(target) => {
            let bar = records::progress(&args.files, "writing kept records");
            let (n, _) = match &shards {
                Some(paths) => shards::copy_kept(paths, &stamps, &found.kept, target, &bar)?,
                None => {
                    let stamps = (found.items, &found.stamps[..]);
                    let inputs = (&args.files[..], args.format);
                    dataset::copy_kept(inputs, &found.kept, stamps, target, &bar)?
                }
            };
            bar.finish_and_clear();
            format!(", written to {}", target.path.display())
                + &format!(" ({})", output::count(n, "record"))
        }
        None => String::new(),
    };
    if let Some(path) = &args.clusters {
        report::write_dropped(path, &found.dropped)?;
    }
    report::summary((args, &against.rule), &store, &found, &written, start);
    // Writing or storing the kept records, finding no duplicate is no failure.
    let job = args.output.is_some() || args.add;
    Ok(u8::from(
        found.failed > 0 || (!job && found.dropped.is_empty()),
    ))
}

/// Refuses what a dedup against a store does not do.
fn check_args(args: &Args) -> Result<()> {
    if args.keep == Keep::None {
        anyhow::bail!(
            "--keep none does not apply with --against: a record kept is checked against at \
             once (and with --add stored), so it cannot be dropped later for a copy found after \
             it; use first, longest, newest:FIELD or oldest:FIELD"
        );
    }
    if args.transitive || args.pairs || args.quality.is_some() {
        anyhow::bail!(
            "--transitive, --pairs and --quality do not apply with --against: the store's rule \
             decides (or --k / --verify)"
        );
    }
    if args.report.is_some() {
        anyhow::bail!(
            "--report does not apply with --against: --clusters FILE lists each record dropped \
             and the document it duplicates"
        );
    }
    Ok(())
}

/// The store at `path`: read only, or with `add` open for writing (created, in the standard
/// mode, when missing, as `import` does).
fn open(path: &Path, add: bool) -> Result<Store> {
    if !add {
        return super::super::open_for_reading(path);
    }
    let new = !path.exists() && !path.to_str().is_some_and(RedisUrl::is_redis);
    let store = Store::builder(path)
        .open()
        .with_context(|| format!("cannot open or create {}", path.display()))?;
    if new {
        eprintln!(
            "note: {} did not exist: created it (empty, so this run dedups the records among \
             themselves only, and stores the ones kept)",
            path.display()
        );
    }
    Ok(store)
}

/// An empty store in memory with `store`'s layout and quality mode, for the records kept so
/// far by a run that does not add them.
fn scratch_store(store: &Store) -> Result<Store> {
    StoreBuilder::in_memory()
        .with_layout(store.layout().clone())
        .quality(store.quality())
        .open()
        .context("cannot make the scratch store")
}

/// The fields records are read by: with `--add`, an id is a key, read as written (a record
/// without one is read again by [`Against::record_of`]).
fn fields(args: &Args) -> Fields {
    Fields {
        id: args.fields.id_field.clone(),
        optional_id: !args.add,
        names_only: !args.add,
        text: args.fields.text_field.clone(),
        line_prefix: String::new(),
    }
}

impl Against<'_> {
    /// Reads, checks (and with `--add` stores) every record of the inputs (`files`: the
    /// arguments, or the Parquet files they name), in input order, or with a ranking
    /// `--keep` in its order once all are read.
    fn read_all(&mut self, (files, args): (&[String], &Args), bar: &ProgressBar) -> Result<Found> {
        let mut found = Found::default();
        let mut inputs = Inputs::new(files, args.format, Some(bar.clone()));
        if args.output.is_some() {
            inputs = inputs.stamped();
        }
        let (mut ranked, mut ranks) = (Vec::new(), Vec::new());
        loop {
            let chunk = inputs.next_chunk(CHUNK_ITEMS)?;
            if chunk.is_empty() {
                break;
            }
            let first = found.items;
            found.items += chunk.len() as u64;
            let entries = self.entries(first, chunk, (args.output.is_some(), &args.keep));
            let entries: Vec<(Read, Rank)> = (entries.into_iter())
                .map(|(e, rank, unnamed)| {
                    if unnamed {
                        self.unnamed.insert(e.0);
                    }
                    (e, rank)
                })
                .collect();
            if !args.keep.ranks() {
                self.check_chunk(entries.into_iter().map(|e| e.0).collect(), &mut found, bar)?;
            } else {
                for (e, rank) in entries {
                    ranked.push(e);
                    ranks.push(rank);
                }
            }
            for damaged in inputs.take_damaged() {
                match args.keep.ranks() {
                    true => damaged::left_out(&damaged, (&mut found, &mut ranked, &mut ranks), bar),
                    false => self.forget(&damaged.items, &mut found, bar, &damaged)?,
                }
            }
        }
        if let Some(order) = super::keep::order(&args.keep, &ranks) {
            let mut ranked: Vec<Option<Read>> = ranked.into_iter().map(Some).collect();
            for at in order.chunks(CHUNK_ITEMS) {
                let chunk = at
                    .iter()
                    .filter_map(|&i| ranked[i as usize].take())
                    .collect();
                self.check_chunk(chunk, &mut found, bar)?;
            }
            found.kept.sort_unstable();
            found.dropped.sort_by_key(|d| d.item);
        }
        found.stamps = inputs.take_stamps();
        Ok(found)
    }

    /// Parses and fingerprints a chunk (item numbers from `first`) in parallel (by
    /// [`Against::fingerprinter`]), each with its rank by `keep` and whether it has no id
    /// of its own (see [`Self::record_of`]).
    fn entries(
        &self,
        first: u64,
        chunk: Vec<input::Item>,
        (jsonl_only, keep): (bool, &Keep),
    ) -> Vec<(Read, Rank, bool)> {
        let f = &self.fingerprinter;
        chunk
            .into_par_iter()
            .enumerate()
            .map(|(i, (place, raw))| {
                let (mut rank, mut unnamed) = (Rank::Missing, false);
                let not_a_record = |message: String| Skip {
                    message,
                    record: false,
                };
                let entry = raw.map_err(not_a_record).and_then(|raw| {
                    if jsonl_only && !matches!(raw, Raw::Json(_)) {
                        return Err(not_a_record(
                            "--output writes JSONL lines back, and this input is not JSONL: \
                             dedup it without --output"
                                .to_owned(),
                        ));
                    }
                    let by_field = keep.rank_item(&raw);
                    let record;
                    (record, unnamed) = self.record_of(raw, place.number())?;
                    rank = keep.rank_text(by_field, record.text.as_deref());
                    record.into_entry(f).map_err(|e| Skip {
                        message: e.to_string(),
                        record: true,
                    })
                });
                ((first + i as u64, place, entry), rank, unnamed)
            })
            .collect()
    }

    /// The record of `raw` (line `line` of its input), and whether it has no id of its
    /// own: with `--add` a JSONL record without one is named by its line number, as
    /// without, and checked but never stored (a line number would name records of
    /// different files alike, and replace the stored one).
    fn record_of(&self, raw: Raw, line: u64) -> Result<(Record, bool), Skip> {
        if let (Raw::Json(bytes), true) = (&raw, self.unstored.is_some()) {
            let lenient = || Fields {
                optional_id: true,
                ..self.fields.clone()
            };
            let unnamed = match reader::parse_jsonl_fields(bytes, &self.fields, line) {
                Err(RecordError::MissingId) => reader::parse_jsonl_fields(bytes, &lenient(), line),
                read => return read.map(|r| (r, false)).map_err(Skip::of),
            };
            return unnamed.map(|r| (r, true)).map_err(Skip::of);
        }
        records::record_of(raw, &self.fields, line).map(|r| (r, false))
    }

    /// Checks the entries of a chunk in order.
    fn check_chunk(
        &mut self,
        entries: Vec<Read>,
        found: &mut Found,
        bar: &ProgressBar,
    ) -> Result<()> {
        let stored = self.stored_matches(&entries)?;
        let taken = self.taken_ids(&entries)?;
        for (((item, place, entry), stored), taken) in entries.into_iter().zip(stored).zip(taken) {
            let entry = match entry {
                Ok(e) => e,
                Err(e) if e.record && self.keeps_unjudged => {
                    found.records += 1;
                    found.unjudged += 1;
                    found.kept.push(item);
                    let msg = &e.message;
                    bar.suspend(|| {
                        eprintln!(
                            "warning: {place}: {msg}; kept as it is, unchecked and not stored"
                        )
                    });
                    continue;
                }
                Err(e) => {
                    found.failed += 1;
                    let msg = &e.message;
                    bar.suspend(|| eprintln!("error: {place}: {msg}; {} skipped", place.skipped()));
                    continue;
                }
            };
            found.records += 1;
            let unnamed = self.unnamed.remove(&item);
            let taken = taken || unnamed || self.added.contains(&entry.id);
            let dup = match (stored, self.unstored_match(&entry)?) {
                (Some(m), _) => Some((m.doc.id, m.distance, true)),
                (None, Some(dup)) => Some(dup),
                (None, None) if taken => self.check_only(&entry)?,
                (None, None) => self.check(item, entry.clone())?,
            };
            let own = self.unstored.is_some()
                && !unnamed
                && matches!(&dup, Some((of, 0, true)) if *of == entry.id);
            found.own += u64::from(own);
            match dup {
                _ if own && self.resume => found.kept.push(item),
                None if unnamed => {
                    found.kept.push(item);
                    found.unnamed += 1;
                    self.hold_unstored(item, &entry)?;
                    bar.suspend(|| {
                        eprintln!(
                            "warning: {place}: no id: kept, not stored (--add stores a record \
                             by its id; give each record one)"
                        )
                    });
                }
                None if taken => {
                    found.kept.push(item);
                    found.taken += 1;
                    self.hold_unstored(item, &entry)?;
                    let id = output::escape_field(&entry.id);
                    bar.suspend(|| {
                        eprintln!(
                            "warning: {place}: id {id} is stored already, as another document: \
                             kept, not stored (--add never replaces a stored document; give \
                             each record an id of its own)"
                        )
                    });
                }
                None => {
                    found.kept.push(item);
                    match self.scratch {
                        Some(_) => self.ids.insert(item, entry.id).map(drop),
                        None => self.added.insert(entry.id).then_some(()),
                    };
                }
                Some((of, distance, stored)) => found.dropped.push(Dropped {
                    item,
                    id: entry.id,
                    place,
                    of,
                    distance,
                    stored,
                }),
            }
        }
        Ok(())
    }

    /// Without `--add`: the nearest stored document each entry duplicates (in one batch of
    /// queries of the read-only store); with `--add`, none (the check finds them).
    fn stored_matches(&self, entries: &[Read]) -> Result<Vec<Option<simstore::Match>>> {
        if self.scratch.is_none() {
            return Ok(entries.iter().map(|_| None).collect());
        }
        let keys: Vec<QueryKey> = (entries.iter())
            .map(|(_, _, e)| {
                e.as_ref()
                    .map_or(QueryKey::from(simstore::Fingerprint(0)), QueryKey::from)
            })
            .collect();
        let answers = self
            .store
            .query_batch(keys, self.rule)
            .context("cannot query the store")?;
        Ok(answers
            .into_iter()
            .zip(entries)
            .map(|(matches, (_, _, e))| e.as_ref().ok().and(nearest(matches)))
            .collect())
    }

    /// With `--add`: whether each entry's id is stored (before this chunk), in one lookup;
    /// without, none is (the scratch store names records by their item numbers).
    fn taken_ids(&self, entries: &[Read]) -> Result<Vec<bool>> {
        if self.scratch.is_some() {
            return Ok(vec![false; entries.len()]);
        }
        let ids: Vec<&str> = (entries.iter())
            .map(|(_, _, e)| e.as_ref().map_or("", |e| e.id.as_str()))
            .collect();
        let stored = self.store.contains(&ids).context("cannot read the store")?;
        Ok(stored
            .into_iter()
            .zip(entries)
            .map(|(s, e)| s && e.2.is_ok())
            .collect())
    }

    /// With `--add`, an entry whose id is stored already: the stored document it
    /// duplicates, as [`Self::check`] says, found by a query (nothing stored).
    fn check_only(&self, entry: &Entry) -> Result<Option<(String, u32, bool)>> {
        let matches = (self.store.query(QueryKey::from(entry), self.rule))
            .with_context(|| format!("cannot check record {}", entry.id))?;
        Ok(nearest(matches).map(|m| {
            let stored = !self.added.contains(&m.doc.id);
            (m.doc.id, m.distance, stored)
        }))
    }

    /// With `--add`: the record kept but not stored earlier in the run that `entry`
    /// duplicates, as [`Self::check`] says.
    fn unstored_match(&self, entry: &Entry) -> Result<Option<(String, u32, bool)>> {
        let Some(held) = self.unstored.as_ref().filter(|s| !s.is_empty()) else {
            return Ok(None);
        };
        let matches = held
            .query(QueryKey::from(entry), self.rule)
            .context("the scratch store")?;
        match nearest(matches) {
            Some(m) => Ok(Some((self.scratch_id(&m.doc.id)?, m.distance, false))),
            None => Ok(None),
        }
    }

    /// The id of the record a scratch store names by its item number `of`.
    fn scratch_id(&self, of: &str) -> Result<String> {
        let item: u64 = of.parse().context("a scratch id")?;
        Ok(self.ids[&item].clone())
    }

    /// With `--add`: holds a record kept but not stored, for the records after it.
    fn hold_unstored(&mut self, item: u64, entry: &Entry) -> Result<()> {
        if let Some(held) = &self.unstored {
            let held_entry = Entry::new(item.to_string(), entry.fp, entry.meta.clone());
            held.insert_batch([held_entry])
                .context("the scratch store")?;
            self.ids.insert(item, entry.id.clone());
        }
        Ok(())
    }

    /// Checks one entry against the records kept so far (with `--add`, the store, which
    /// holds them): the document it duplicates, its distance, and whether it was stored
    /// before the run; `None` when it is kept (and stored, in the store or the scratch one).
    fn check(&mut self, item: u64, mut entry: Entry) -> Result<Option<(String, u32, bool)>> {
        let (target, id) = match &self.scratch {
            Some(scratch) => (scratch, item.to_string()),
            None => (self.store, entry.id.clone()),
        };
        let name = entry.id.clone();
        entry.id = id;
        let outcome = target
            .check_and_insert(&entry, self.rule)
            .with_context(|| format!("cannot check record {name}"))?;
        let (Some(of), Some(distance)) = (outcome.duplicate_of(), outcome.distance()) else {
            return Ok(None);
        };
        if matches!(outcome, CheckOutcome::New { .. }) {
            return Ok(None);
        }
        Ok(Some(match self.scratch {
            Some(_) => (self.scratch_id(of)?, distance, false),
            None => (of.to_owned(), distance, !self.added.contains(of)),
        }))
    }
}

/// The nearest of `matches` (ties: the smallest id).
fn nearest(matches: Vec<simstore::Match>) -> Option<simstore::Match> {
    matches
        .into_iter()
        .min_by(|a, b| (a.distance, &a.doc.id).cmp(&(b.distance, &b.doc.id)))
}
