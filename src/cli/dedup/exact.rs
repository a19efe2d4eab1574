//! The pairs a dedup of files finds near its threshold, decided by the texts: the inputs
//! are read again for the records of those pairs alone, and the exact similarity of their
//! shingle sets replaces the sketches' estimate (`Clusters::checked`). The estimate's
//! standard error (about 0.06 at similarity 0.5–0.6) otherwise joins a record to another
//! well below the threshold, and drops it, about as often as it misses a copy.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use anyhow::Result;
use rayon::prelude::*;
use simstore::Fingerprinter;
use simstore::Sketch;
use simstore::index::groups::{Clusters, Grouping};
use simstore::index::near::{ExactCheck, ExactSimilarities, MAX_EXACT_PAIRS, NearPairs, Texts};
use simstore::input::reader::Record;
use simstore::text::shingles::ShingleSets;

use super::Args;
use super::items::Items;
use super::records;
use crate::cli::output;

/// How much a round of the check holds: about `bytes` of shingles (32-bit hashes, about
/// 4 bytes a word of text) of records whose partners are still to come, beside the
/// `chunk` records shingled at a time (in parallel). Pairs whose records did not fit are
/// checked in further rounds, each reading the inputs again.
#[derive(Debug, Clone, Copy)]
struct Rounds {
    bytes: usize,
    chunk: usize,
}

/// The rounds of a dedup: 256 MiB, 4,096 records at a time.
const ROUNDS: Rounds = Rounds {
    bytes: 256 << 20,
    chunk: 4096,
};

/// The clusters of the records read (`fps`, `sketches`, in `order`), the pairs near the
/// threshold and those of the `partial` records decided by the texts when the inputs can
/// be read again (`items`: each record's item number among the inputs' items); `on_pair`
/// as [`Clusters::new`]'s.
pub(super) fn clusters(
    args: &Args,
    (items, partial): (&Items, &[u32]),
    records: (&[u64], &[Option<Sketch>], Option<Vec<u32>>),
    grouping: &Grouping,
    on_pair: impl FnMut(u32, u32, u32) -> simstore::Result<()>,
) -> simstore::Result<(Clusters, ExactCheck)> {
    // Stdin or a pipe cannot be read again: its pairs near the threshold are counted,
    // unchecked.
    let rereadable = records::once_only(&args.files).is_none();
    let mut exact = |pairs: NearPairs| match rereadable {
        true => similarities(args, (items, partial), pairs, ROUNDS).map_err(|e| {
            let e = e.context("cannot read the inputs again to check the pairs near the threshold");
            simstore::Error::Io(std::io::Error::other(format!("{e:#}")))
        }),
        false => Ok(ExactSimilarities::new()),
    };
    let texts = Texts {
        exact: &mut exact,
        partial,
    };
    Clusters::checked(records, grouping, Some(texts), on_pair)
}

/// Fails a dedup of files whose inputs changed while it read them (its pairs near the
/// threshold were decided by texts read again): the clusters could mix old and new texts.
pub(super) fn unchanged(snapshot: &crate::cli::input::Snapshot) -> Result<()> {
    match snapshot.changed() {
        Some(path) => anyhow::bail!(
            "{} changed while dedup read it (the pairs near the threshold read its texts \
             again): the clusters could mix its old and new records, and none is printed; \
             leave the input unchanged while dedup runs, then run it again",
            path.display()
        ),
        None => Ok(()),
    }
}

/// The exact similarities of `pairs` (records' positions; `items` maps them to item
/// numbers, increasing; the `partial` records are compared whole too), from the inputs
/// read again in rounds ([`round`]) until every pair is scored; a pair whose record no
/// longer reads is left out.
fn similarities(
    args: &Args,
    (items, partial): (&Items, &[u32]),
    mut pairs: NearPairs,
    rounds: Rounds,
) -> Result<ExactSimilarities> {
    let mut out = ExactSimilarities::with_capacity(pairs.len());
    while !pairs.is_empty() {
        let (scored, unread) = round(args, (items, partial), &pairs, rounds)?;
        if scored.is_empty() {
            break;
        }
        out.extend(scored);
        let read = |at: &u32| unread.binary_search(at).is_err();
        pairs.retain(|p| !out.contains_key(p) && read(&p.0) && read(&p.1));
    }
    Ok(out)
}

/// One read of the inputs (a block nested loop): each record a pair needs is shingled as
/// it is read, in input order, its pairs with the records held scored, and its shingles
/// held until its last partner is read, while the held ones fit `rounds`' bytes. Copies
/// usually sit near one another, so few are held at once; when the block is full, a
/// record with no partner held is passed over, and its pairs with records not held are
/// left to the next round. Also the positions of the records wanted that did not read,
/// increasing.
fn round(
    args: &Args,
    (items, partial): (&Items, &[u32]),
    pairs: &[(u32, u32)],
    rounds: Rounds,
) -> Result<(Scored, Vec<u32>)> {
    let mut edges: Vec<(u32, u32)> = pairs.iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect();
    edges.par_sort_unstable();
    // Sorted by position, so by item number too.
    let mut wanted: Vec<u64> = edges.iter().map(|e| items.get(e.0 as usize)).collect();
    wanted.dedup();
    let mut block = Block {
        edges: &edges,
        partial,
        shingles: HashMap::new(),
        until: BinaryHeap::new(),
        bytes: 0,
        rounds,
        scored: Vec::new(),
    };
    let position = |item: u64| items.position(item) as u32;
    // The records wanted before the one read that did not come: they did not read.
    let (mut unread, mut passed) = (Vec::new(), 0);
    let mut batch: Vec<(u32, Record)> = Vec::with_capacity(rounds.chunk);
    records::each_record(args, &wanted, |item, r| {
        let at = position(item);
        let skipped = wanted[passed..].partition_point(|&i| i < item);
        unread.extend(
            wanted[passed..passed + skipped]
                .iter()
                .map(|&i| position(i)),
        );
        passed += skipped + 1;
        if !block.full() || block.partners(at).any(|p| block.shingles.contains_key(&p)) {
            batch.push((at, r));
        }
        if batch.len() == rounds.chunk {
            block.take(&mut batch);
        }
        true
    })?;
    block.take(&mut batch);
    unread.extend(
        wanted[passed.min(wanted.len())..]
            .iter()
            .map(|&i| position(i)),
    );
    Ok((block.scored, unread))
}

/// Pairs scored: records' positions and their texts' similarity.
type Scored = Vec<((u32, u32), f64)>;

/// The block of a [`round`]: the shingles of the records read whose later partners are
/// still to come, by position.
struct Block<'a> {
    /// Both directions of every pair, sorted.
    edges: &'a [(u32, u32)],
    /// The partial records, whose whole texts count ([`ShingleSets::similarity`]).
    partial: &'a [u32],
    shingles: HashMap<u32, ShingleSets>,
    /// The records held, by the position of their last partner (the first to let go on
    /// top).
    until: BinaryHeap<Reverse<(u32, u32)>>,
    bytes: usize,
    rounds: Rounds,
    scored: Scored,
}

impl Block<'_> {
    fn full(&self) -> bool {
        self.bytes >= self.rounds.bytes
    }

    /// The records paired with the record at position `at`.
    fn partners(&self, at: u32) -> impl Iterator<Item = u32> + '_ {
        let from = self.edges.partition_point(|e| e.0 < at);
        self.edges[from..]
            .iter()
            .take_while(move |e| e.0 == at)
            .map(|e| e.1)
    }

    /// Shingles the records of `batch` (in parallel, increasing positions), scores each
    /// pair whose earlier record is held or in the batch, lets go of those whose last
    /// partner has been read, and holds those with partners still to come while there is
    /// room.
    fn take(&mut self, batch: &mut Vec<(u32, Record)>) {
        let Some(end) = batch.last().map(|b| b.0) else {
            return;
        };
        let f = Fingerprinter::new();
        let partial = self.partial;
        let text = |at: u32, r: &Record| {
            let (title, text) = (r.title.as_deref(), r.text.as_deref().unwrap_or(""));
            let whole = partial.binary_search(&at).is_ok();
            f.shingle_sets(
                title,
                text,
                whole.then(|| r.left_out.as_deref().unwrap_or("")),
            )
        };
        let done: Vec<(u32, ShingleSets)> = batch
            .par_drain(..)
            .map(|(at, r)| (at, text(at, &r)))
            .collect();
        let ats: Vec<u32> = done.iter().map(|d| d.0).collect();
        self.shingles.extend(done);
        let this = &*self;
        let scored: Scored = ats
            .par_iter()
            .flat_map_iter(|&at| {
                let own = &this.shingles[&at];
                this.partners(at)
                    .filter(move |&p| p < at)
                    .filter_map(move |p| {
                        let other = this.shingles.get(&p)?;
                        Some(((p, at), other.similarity(own)))
                    })
            })
            .collect();
        self.scored.extend(scored);
        while let Some(&Reverse((last, at))) = self.until.peek()
            && last <= end
        {
            self.until.pop();
            let held = self.shingles.remove(&at).map_or(0, |s| held_bytes(&s));
            self.bytes -= held;
        }
        for at in ats {
            match self.partners(at).max().filter(|&last| last > end) {
                Some(last) if !self.full() => {
                    self.bytes += held_bytes(&self.shingles[&at]);
                    self.until.push(Reverse((last, at)));
                }
                _ => drop(self.shingles.remove(&at)),
            }
        }
    }
}

/// What holding a record's shingles costs a block: 4 bytes a shingle and the map's entry.
fn held_bytes(shingles: &ShingleSets) -> usize {
    shingles.heap_bytes() + 72
}

/// The summary's words on the check (empty when no pair was near the threshold).
pub(super) fn summary(check: &ExactCheck) -> String {
    let mut out = String::new();
    if check.checked > 0 {
        out += &format!(
            "; {} near the threshold (or of records the cleaner cut down) decided by the \
             texts (against the sketches' verdict: {} taken, {} refused)",
            output::count(check.checked, "pair"),
            check.accepted,
            check.rejected
        );
    }
    if check.unchecked > 0 {
        out += &format!(
            "; {} near the threshold decided by the sketches alone (their records could \
             not be read again: stdin or a pipe, an input changed or gone, or more than {} \
             pairs)",
            output::count(check.unchecked, "pair"),
            MAX_EXACT_PAIRS
        );
    }
    if check.refused_unchecked > 0 {
        out += &format!(
            "; {} of records the cleaner cut down refused unchecked (both kept: their texts \
             could not be read again, or more than {} pairs; the sketches do not stand for \
             such records)",
            output::count(check.refused_unchecked, "pair"),
            MAX_EXACT_PAIRS
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    /// Rounds of two records give what one round gives: every pair's exact similarity,
    /// but a pair with a record that does not read (an invalid line).
    #[test]
    fn rounds_score_every_pair_that_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.jsonl");
        let words: Vec<String> = (0..40).map(|i| format!("w{}", i * 7 % 40)).collect();
        let texts: Vec<String> = (0..7).map(|i| words[i * 3..i * 3 + 16].join(" ")).collect();
        let mut lines: Vec<String> = texts
            .iter()
            .map(|t| serde_json::json!({"text": t}).to_string())
            .collect();
        lines.push("{not json".into());
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let cli = Cli::try_parse_from(["simstore", "dedup", path.to_str().unwrap()]).unwrap();
        let Command::Dedup(args) = cli.command else {
            panic!("a dedup")
        };
        let n = lines.len() as u32;
        let pairs: NearPairs = (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .collect();
        let mut items = Items::default();
        (0..u64::from(n)).for_each(|i| items.push(i));
        let one = similarities(&args, (&items, &[]), pairs.clone(), ROUNDS).unwrap();
        let tiny = Rounds { bytes: 1, chunk: 2 };
        let many = similarities(&args, (&items, &[]), pairs, tiny).unwrap();
        assert_eq!(one, many);
        let f = Fingerprinter::new();
        let shingles: Vec<ShingleSets> = texts
            .iter()
            .map(|t| f.shingle_sets(None, t, None))
            .collect();
        let last = n - 1;
        for a in 0..last {
            for b in a + 1..last {
                let want = shingles[a as usize].similarity(&shingles[b as usize]);
                assert_eq!(one[&(a, b)], want);
            }
            assert!(
                !one.contains_key(&(a, last)),
                "the invalid line has no shingles"
            );
        }
        assert_eq!(one.len(), 21);
        let values: BTreeSet<u64> = one.values().map(|v| v.to_bits()).collect();
        assert!(values.len() > 3, "pairs of several similarities");
    }

    /// A record is held only until its last partner is read: pairs of neighbours are all
    /// scored in one round that holds one record at a time.
    #[test]
    fn a_round_lets_go_of_a_record_once_its_partners_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.jsonl");
        let lines: Vec<String> = (0..8)
            .map(|i| serde_json::json!({"text": format!("words of pair {} and a few more", i / 2)}))
            .map(|v| v.to_string())
            .collect();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let cli = Cli::try_parse_from(["simstore", "dedup", path.to_str().unwrap()]).unwrap();
        let Command::Dedup(args) = cli.command else {
            panic!("a dedup")
        };
        let neighbours = vec![(0, 1), (2, 3), (4, 5), (6, 7)];
        let mut items = Items::default();
        (0..8).for_each(|i| items.push(i));
        let one_at_a_time = Rounds { bytes: 1, chunk: 1 };
        let (scored, unread) = round(&args, (&items, &[]), &neighbours, one_at_a_time).unwrap();
        let mut got: Vec<(u32, u32)> = scored.iter().map(|s| s.0).collect();
        got.sort_unstable();
        assert_eq!(got, neighbours);
        assert!(unread.is_empty());
        let far = [neighbours.clone(), vec![(1, 7)]].concat();
        let (scored, _) = round(&args, (&items, &[]), &far, one_at_a_time).unwrap();
        assert_eq!(
            scored.len(),
            2,
            "1 fills the block until 7 is read: the pairs between wait"
        );
        let all = similarities(&args, (&items, &[]), far.clone(), one_at_a_time).unwrap();
        assert_eq!(all.len(), far.len(), "later rounds score the rest");
    }
}
