//! The item numbers of the records a dedup of files read (their positions among the items
//! of the inputs), held by where they step past their record's index: a corpus without
//! blank lines or failed records holds nothing for them, where a number per record held
//! 8 bytes each (80 MB at 10M records).

use std::ops::Range;

/// Increasing item numbers, by record index.
#[derive(Default, Debug, PartialEq)]
pub(super) struct Items {
    len: usize,
    /// `(index, offset)`: from `index` on, a record's item number is its index + `offset`
    /// (until the next step); increasing in both.
    steps: Vec<(usize, u64)>,
}

impl Items {
    /// Whether no record was read.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds the next record's item number (greater than the last).
    pub fn push(&mut self, item: u64) {
        let offset = item - self.len as u64;
        if offset != self.steps.last().map_or(0, |s| s.1) {
            self.steps.push((self.len, offset));
        }
        self.len += 1;
    }

    /// The item number of record `index` (one of those pushed).
    pub fn get(&self, index: usize) -> u64 {
        index as u64 + self.offset(index)
    }

    fn offset(&self, index: usize) -> u64 {
        match self.steps.partition_point(|s| s.0 <= index) {
            0 => 0,
            n => self.steps[n - 1].1,
        }
    }

    /// The index of the first record whose item number is `item` or more (the number of
    /// records before it).
    pub fn position(&self, item: u64) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.get(mid) < item {
                true => lo = mid + 1,
                false => hi = mid,
            }
        }
        lo
    }

    /// Every item number, in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len).map(|i| self.get(i))
    }

    /// Removes the records whose item numbers are in `range` (read from a damaged gzip
    /// member); returns their indexes, to remove from the vectors kept beside these.
    pub fn drop_range(&mut self, range: Range<u64>) -> Range<usize> {
        let at = self.position(range.start)..self.position(range.end);
        let kept: Vec<u64> = (self.iter().enumerate())
            .filter(|(i, _)| !at.contains(i))
            .map(|(_, item)| item)
            .collect();
        *self = Items::default();
        kept.into_iter().for_each(|item| self.push(item));
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation agrees with a plain vector of the same item numbers, with runs,
    /// gaps and a range dropped anywhere.
    #[test]
    fn items_hold_what_a_vector_holds() {
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        for _ in 0..200 {
            let (mut items, mut model, mut item) = (Items::default(), Vec::new(), 0u64);
            for _ in 0..next() % 60 {
                item += 1 + u64::from(next() % 4 == 0) * (next() % 5);
                items.push(item);
                model.push(item);
            }
            assert_eq!(items.iter().count(), model.len());
            assert!(model.iter().enumerate().all(|(i, &m)| items.get(i) == m));
            for probe in 0..item + 2 {
                assert_eq!(items.position(probe), model.partition_point(|&m| m < probe));
            }
            let (a, b) = (next() % (item + 2), next() % (item + 2));
            let range = a.min(b)..a.max(b);
            let at = items.drop_range(range.clone());
            let want = model.partition_point(|&m| m < range.start)
                ..model.partition_point(|&m| m < range.end);
            assert_eq!(at, want);
            model.drain(want);
            assert_eq!(items.iter().collect::<Vec<_>>(), model);
        }
        let mut dense = Items::default();
        (0..1000).for_each(|i| dense.push(i));
        assert!(
            dense.steps.is_empty(),
            "a corpus without gaps holds no steps"
        );
    }
}
