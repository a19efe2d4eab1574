//! The pairs a dedup of files finds near its threshold, decided by the texts: the inputs
//! are read again for the records of those pairs alone, and the exact similarity of their
//! shingle sets replaces the sketches' estimate (`Clusters::checked`). The estimate's
//! standard error (about 0.06 at similarity 0.5) otherwise joins a record to another it
//! shares a third of its shingles with, and drops it, about as often as it misses a copy.

use std::collections::{BTreeSet, HashMap, HashSet};

use anyhow::Result;
use rayon::prelude::*;
use simstore::Fingerprinter;
use simstore::Sketch;
use simstore::index::groups::{Clusters, Grouping};
use simstore::index::near::{ExactCheck, ExactSimilarities, MAX_EXACT_PAIRS, NearPairs};
use simstore::input::reader::Record;
use simstore::text::sketch::jaccard;

use super::Args;
use super::records;
use crate::cli::output;

/// How much a round of the check holds: about `bytes` of shingles (32-bit hashes, about
/// 4 bytes a word of text), computed `chunk` records at a time (in parallel), at least
/// one chunk. More pairs than fit are checked in further rounds, each reading the inputs
/// again.
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
/// threshold decided by the texts when the inputs can be read again (`items`: each
/// record's item number among the inputs' items); `on_pair` as [`Clusters::new`]'s.
pub(super) fn clusters(
    args: &Args,
    items: &[u64],
    records: (&[u64], &[Option<Sketch>], Option<Vec<u32>>),
    grouping: &Grouping,
    on_pair: impl FnMut(u32, u32, u32) -> simstore::Result<()>,
) -> simstore::Result<(Clusters, ExactCheck)> {
    // Stdin cannot be read again: its pairs near the threshold are counted, unchecked.
    let rereadable = !args.files.iter().any(|f| f == "-");
    let mut exact = |pairs: NearPairs| match rereadable {
        true => similarities(args, items, pairs, ROUNDS).map_err(|e| {
            let e = e.context("cannot read the inputs again to check the pairs near the threshold");
            simstore::Error::Io(std::io::Error::other(format!("{e:#}")))
        }),
        false => Ok(ExactSimilarities::new()),
    };
    Clusters::checked(records, grouping, Some(&mut exact), on_pair)
}

/// The exact similarities of `pairs` (records' positions; `items` maps them to item
/// numbers, increasing), from the inputs read again in rounds ([`round`]) until every
/// pair is scored; a pair whose record no longer reads is left out.
fn similarities(
    args: &Args,
    items: &[u64],
    mut pairs: NearPairs,
    rounds: Rounds,
) -> Result<ExactSimilarities> {
    let mut out = ExactSimilarities::with_capacity(pairs.len());
    while !pairs.is_empty() {
        let (scored, unread) = round(args, items, &pairs, rounds)?;
        if scored.is_empty() {
            break;
        }
        out.extend(scored);
        pairs.retain(|p| !out.contains_key(p) && !unread.contains(&p.0) && !unread.contains(&p.1));
    }
    Ok(out)
}

/// One read of the inputs (a block nested loop): the shingles of the first records the
/// pairs need, in input order, as many as `rounds` allows, are held (the block); each
/// later record with a partner in the block is shingled as it is read and its pairs with
/// the block scored. Every pair of a record of the block is scored (unless its partner
/// does not read), so the next round needs none of them. Also the records wanted that
/// did not read.
fn round(
    args: &Args,
    items: &[u64],
    pairs: &[(u32, u32)],
    rounds: Rounds,
) -> Result<(Scored, HashSet<u32>)> {
    let mut edges: Vec<(u32, u32)> = pairs.iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect();
    edges.par_sort_unstable();
    let wanted: BTreeSet<u64> = edges.iter().map(|e| items[e.0 as usize]).collect();
    let mut block = Block {
        edges: &edges,
        shingles: HashMap::new(),
        bytes: 0,
        rounds,
        scored: Vec::new(),
    };
    let position = |item: u64| items.partition_point(|&i| i < item) as u32;
    let mut unread: HashSet<u32> = wanted.iter().map(|&i| position(i)).collect();
    let mut batch: Vec<(u32, Record)> = Vec::with_capacity(rounds.chunk);
    records::each_record(args, &wanted, |item, r| {
        let at = position(item);
        unread.remove(&at);
        if !block.full() || block.partners(at).any(|p| block.shingles.contains_key(&p)) {
            batch.push((at, r));
        }
        if batch.len() == rounds.chunk {
            block.take(&mut batch);
        }
        true
    })?;
    block.take(&mut batch);
    let within = pairs.iter().filter_map(|&(a, b)| {
        let (x, y) = (block.shingles.get(&a)?, block.shingles.get(&b)?);
        Some(((a, b), jaccard(x, y)))
    });
    let mut scored = block.scored;
    scored.extend(within);
    Ok((scored, unread))
}

/// Pairs scored: records' positions and their texts' similarity.
type Scored = Vec<((u32, u32), f64)>;

/// The block of a [`round`]: its records' shingles, by position.
struct Block<'a> {
    /// Both directions of every pair, sorted.
    edges: &'a [(u32, u32)],
    shingles: HashMap<u32, Vec<u32>>,
    bytes: usize,
    rounds: Rounds,
    /// The pairs of a later record with the block, scored.
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

    /// Shingles the records of `batch` (in parallel): into the block while it has room,
    /// else scoring their pairs with the block.
    fn take(&mut self, batch: &mut Vec<(u32, Record)>) {
        let f = Fingerprinter::new();
        let text = |r: &Record| f.shingles(r.title.as_deref(), r.text.as_deref().unwrap_or(""));
        let done: Vec<(u32, Vec<u32>)> =
            batch.par_drain(..).map(|(at, r)| (at, text(&r))).collect();
        if !self.full() {
            self.bytes += done.iter().map(|(_, s)| 4 * s.len() + 48).sum::<usize>();
            self.shingles.extend(done);
            return;
        }
        let this = &*self;
        let scored: Scored = done
            .par_iter()
            .flat_map_iter(|(at, s)| {
                this.partners(*at).filter_map(move |p| {
                    let other = this.shingles.get(&p)?;
                    Some(((p.min(*at), p.max(*at)), jaccard(s, other)))
                })
            })
            .collect();
        self.scored.extend(scored);
    }
}

/// The summary's words on the check (empty when no pair was near the threshold).
pub(super) fn summary(check: &ExactCheck) -> String {
    let mut out = String::new();
    if check.checked > 0 {
        out += &format!(
            "; {} near the threshold decided by the texts (against the sketches' verdict: \
             {} taken, {} refused)",
            output::count(check.checked, "pair"),
            check.accepted,
            check.rejected
        );
    }
    if check.unchecked > 0 {
        out += &format!(
            "; {} near the threshold decided by the sketches alone (stdin, or more than \
             {} pairs, cannot be read again)",
            output::count(check.unchecked, "pair"),
            MAX_EXACT_PAIRS
        );
    }
    out
}

#[cfg(test)]
mod tests {
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
        let items: Vec<u64> = (0..u64::from(n)).collect();
        let one = similarities(&args, &items, pairs.clone(), ROUNDS).unwrap();
        let tiny = Rounds { bytes: 1, chunk: 2 };
        let many = similarities(&args, &items, pairs, tiny).unwrap();
        assert_eq!(one, many);
        let f = Fingerprinter::new();
        let shingles: Vec<Vec<u32>> = texts.iter().map(|t| f.shingles(None, t)).collect();
        let last = n - 1;
        for a in 0..last {
            for b in a + 1..last {
                let want = jaccard(&shingles[a as usize], &shingles[b as usize]);
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
}
