//! Reads of the RocksDB backend from one consistent view.

use std::sync::{Mutex, RwLockReadGuard};

use rocksdb::{DBRawIterator, ReadOptions};

use super::options::{DOCS, IDS, META};
use super::pool::{Kind, Lease};
use super::{RocksBackend, meta_key, storage};
use crate::error::Result;
use crate::store::backend::{DocItem, IdItem, MetaKey, Snapshot, Space, Span};

use crate::store::codec::bucket::{self, Bucket};
use crate::store::codec::{self, IdValue};
use crate::types::StoredDoc;

/// A RocksDB snapshot, or on a secondary instance (which has no snapshots, and changes only
/// in a catch-up) a shared hold on the catch-up lock; or, for queries
/// ([`RocksSnapshot::live`]), the latest state, tables read through kept iterators.
pub(super) struct RocksSnapshot<'a> {
    /// On a live view, the kept iterator of each table this view has read, held until the
    /// view is dropped: a query's spans of one table share one iterator, leased from the
    /// pool and refreshed once (not once per span). Declared first: the iterators go back
    /// to the pool before a secondary's catch-up lock is released (a catch-up empties the
    /// pool, and must not find them put back after it).
    held: Mutex<Vec<Option<Lease<'a>>>>,
    backend: &'a RocksBackend,
    snap: Option<rocksdb::Snapshot<'a>>,
    _guard: Option<RwLockReadGuard<'a, ()>>,
}

impl<'a> RocksSnapshot<'a> {
    pub(super) fn new(backend: &'a RocksBackend) -> Self {
        if backend.secondary {
            RocksSnapshot {
                backend,
                snap: None,
                _guard: Some(backend.catch_up.read().unwrap_or_else(|e| e.into_inner())),
                held: Mutex::default(),
            }
        } else {
            RocksSnapshot {
                backend,
                snap: Some(backend.db.snapshot()),
                _guard: None,
                held: Mutex::default(),
            }
        }
    }

    /// A view of the latest state for queries: no RocksDB snapshot (taking one locks the
    /// database's mutex), tables read through the backend's kept iterators. On a secondary
    /// instance it is as consistent as [`RocksSnapshot::new`]'s (nothing changes while the
    /// catch-up lock is held).
    pub(super) fn live(backend: &'a RocksBackend) -> Self {
        RocksSnapshot {
            backend,
            snap: None,
            _guard: backend
                .secondary
                .then(|| backend.catch_up.read().unwrap_or_else(|e| e.into_inner())),
            held: Mutex::default(),
        }
    }

    /// Table `t`'s iterator for a probe of this live view: the one an earlier probe of
    /// the view held, else one leased from the pool (refreshed: it sees every write
    /// acknowledged before this call). Probes of the view on other threads at the same
    /// time lease their own.
    fn lease(&self, t: usize) -> Result<Lease<'a>> {
        let held = self.held().get_mut(t).and_then(Option::take);
        match held {
            Some(lease) => Ok(lease),
            None => self.backend.kept_iter(Kind::Table(t)),
        }
    }

    /// Holds `lease` (of table `t`) for the view's next probe of the table; a second one
    /// goes back to the pool.
    fn hold(&self, t: usize, lease: Lease<'a>) {
        let mut held = self.held();
        if held.len() <= t {
            held.resize_with(t + 1, || None);
        }
        if held[t].is_none() {
            held[t] = Some(lease);
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Vec<Option<Lease<'a>>>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Read options that read from this view, in total order (`exact` has a prefix
    /// extractor; only [`Snapshot::first_exact`] seeks by prefix).
    fn ro(&self) -> ReadOptions {
        let mut ro = ReadOptions::default();
        ro.set_total_order_seek(true);
        if let Some(snap) = &self.snap {
            ro.set_snapshot(snap);
        }
        ro
    }

    /// One span of a query's: its range read through the view's iterator of the table
    /// (a live view's kept one), without the entries its `near` filter leaves out.
    pub(super) fn scan_span(
        &self,
        span: &Span,
        each: &mut dyn FnMut(Result<(u64, u64)>) -> Result<bool>,
    ) -> Result<()> {
        let t = span.table;
        let bits = self.backend.table(t)?.1;
        if self.snap.is_none() {
            let mut lease = self.lease(t)?;
            scan_buckets(lease.iter(), bits, span, each)?;
            self.hold(t, lease);
            return Ok(());
        }
        let mut it = self.iter(Space::Table(t), self.ro())?;
        scan_buckets(&mut it, bits, span, each)
    }

    fn iter(&self, space: Space, ro: ReadOptions) -> Result<DBRawIterator<'a>> {
        let cf = self.backend.space_cf(space)?;
        Ok(self.backend.db.raw_iterator_cf_opt(cf, ro))
    }
}

/// The values of a multi-get, decoded (`None` where a key is absent).
fn decode_each<T>(
    values: Vec<std::result::Result<Option<rocksdb::DBPinnableSlice<'_>>, rocksdb::Error>>,
    decode: impl Fn(&[u8]) -> Result<T>,
) -> Result<Vec<Option<T>>> {
    values
        .into_iter()
        .map(|v| v.map_err(storage)?.map(|bytes| decode(&bytes)).transpose())
        .collect()
}

/// Steps `it` on until it is exhausted or `each` says stop, then reports its status.
fn drain(
    it: &mut DBRawIterator<'_>,
    mut each: impl FnMut(&[u8], &[u8]) -> Result<bool>,
) -> Result<()> {
    while let (Some(k), Some(v)) = (it.key(), it.value()) {
        if !each(k, v)? {
            break;
        }
        it.next();
    }
    it.status().map_err(storage)
}

/// [`drain`] for a space whose keys say everything (`exact`: empty values): the
/// values are not read, each read of one being a call into RocksDB.
fn drain_keys(
    it: &mut DBRawIterator<'_>,
    mut each: impl FnMut(&[u8]) -> Result<bool>,
) -> Result<()> {
    while let Some(k) = it.key() {
        if !each(k)? {
            break;
        }
        it.next();
    }
    it.status().map_err(storage)
}

/// The sequence number of the first `exact` key under `prefix` (a content hash).
fn first_with_prefix(it: &mut DBRawIterator<'_>, prefix: &[u8]) -> Result<Option<u64>> {
    it.seek(prefix);
    let found = match it.key() {
        Some(key) if key.starts_with(prefix) => Some(codec::decode_exact_key(key)?.1),
        _ => None,
    };
    it.status().map_err(storage)?;
    Ok(found)
}

/// [`RocksSnapshot::scan_span`] over the buckets of a table of `bits` prefix bits
/// (`codec::bucket`): seeks the bucket of `lo`, then reads bucket after bucket, each entry
/// in place, until the bucket that holds `hi − 1`, leaving out what the span's `near`
/// filter does not want. No upper bound is set (that would allocate one per probe). A
/// bucket that cannot be read is passed on as an error and the scan goes on.
fn scan_buckets(
    it: &mut DBRawIterator<'_>,
    bits: u32,
    span: &Span,
    each: &mut dyn FnMut(Result<(u64, u64)>) -> Result<bool>,
) -> Result<()> {
    let Span { lo, hi, near, .. } = *span;
    let past = |p: u64| hi.is_some_and(|hi| p >= hi);
    it.seek(bucket::bucket_key(lo, bits));
    drain(it, |k, v| {
        let bucket = match Bucket::decode(k, v, bits) {
            Ok(b) => b,
            Err(e) => return each(Err(e)),
        };
        if past(bucket.base()) {
            return Ok(false);
        }
        let first = if lo > bucket.base() {
            bucket.lower_bound(lo)
        } else {
            0
        };
        for i in first..bucket.len() {
            let entry = bucket.get(i);
            if past(entry.0) {
                return Ok(false);
            }
            // The filter of a probe: most candidates end here, without a call.
            if near.is_some_and(|n| !n.wants(entry.0)) {
                continue;
            }
            if !each(Ok(entry))? {
                return Ok(false);
            }
        }
        // A span that ends in this bucket (a probe's always does) needs no step to the
        // next one, which may be in the next block.
        Ok(bucket.last() != u64::MAX && !past(bucket.last() + 1))
    })
}

impl Snapshot for RocksSnapshot<'_> {
    fn meta(&self, key: MetaKey) -> Result<Option<Vec<u8>>> {
        let cf = self.backend.cf(META)?;
        self.backend
            .db
            .get_cf_opt(cf, meta_key(key), &self.ro())
            .map_err(storage)
    }

    fn ids(&self, ids: &[&str]) -> Result<Vec<Option<IdValue>>> {
        let cf = self.backend.cf(IDS)?;
        let values = self.backend.db.batched_multi_get_cf_opt(
            cf,
            ids.iter().map(|i| i.as_bytes()),
            false,
            &self.ro(),
        );
        decode_each(values, codec::decode_id_value)
    }

    fn docs(&self, seqs: &[u64]) -> Result<Vec<Option<StoredDoc>>> {
        let cf = self.backend.cf(DOCS)?;
        let keys: Vec<[u8; 8]> = seqs.iter().map(|&seq| codec::doc_key(seq)).collect();
        let sorted = seqs.windows(2).all(|w| w[0] <= w[1]);
        let values = self
            .backend
            .db
            .batched_multi_get_cf_opt(cf, &keys, sorted, &self.ro());
        decode_each(values, codec::decode_doc)
    }

    fn scan_spans(
        &self,
        spans: &[Span],
        each: &mut dyn FnMut(usize, Result<(u64, u64)>) -> Result<bool>,
    ) -> Result<()> {
        self.backend.probes.scan(self, spans, each)
    }

    fn first_exact(&self, hash: u128) -> Result<Option<u64>> {
        let prefix = codec::exact_prefix(hash);
        if self.snap.is_none() {
            // A live view: a kept iterator in prefix mode (no upper bound to allocate).
            let mut lease = self.backend.kept_iter(Kind::Exact)?;
            return first_with_prefix(lease.iter(), &prefix);
        }
        let mut ro = self.ro();
        // By prefix: the bloom of the content hash skips the files without it.
        ro.set_total_order_seek(false);
        ro.set_prefix_same_as_start(true);
        if let Some(next) = hash.checked_add(1) {
            ro.set_iterate_upper_bound(codec::exact_prefix(next));
        }
        let mut it = self.iter(Space::Exact, ro)?;
        first_with_prefix(&mut it, &prefix)
    }

    fn scan_exact(&self, each: &mut dyn FnMut(Result<(u128, u64)>) -> Result<bool>) -> Result<()> {
        let mut it = self.iter(Space::Exact, self.ro())?;
        it.seek_to_first();
        drain_keys(&mut it, |k| each(codec::decode_exact_key(k)))
    }

    fn scan_docs(
        &self,
        from: u64,
        each: &mut dyn FnMut(DocItem<'_>) -> Result<bool>,
    ) -> Result<()> {
        let mut it = self.iter(Space::Docs, self.ro())?;
        it.seek(codec::doc_key(from));
        drain(&mut it, |k, v| {
            let item = codec::decode_doc_key(k).and_then(|seq| Ok((seq, codec::decode_doc(v)?)));
            each((k, item))
        })
    }

    fn scan_ids(&self, each: &mut dyn FnMut(IdItem<'_>) -> Result<bool>) -> Result<()> {
        let mut it = self.iter(Space::Ids, self.ro())?;
        it.seek_to_first();
        drain(&mut it, |k, v| each((k, codec::decode_id_value(v))))
    }
}

#[cfg(test)]
mod tests {
    use super::RocksSnapshot;
    use crate::store::backend::{Backend, Near, Span};

    /// A span's `near` filter leaves out, inside the bucket scan, what is farther from the
    /// query than its distance; a span narrower or wider than a bucket reads its range
    /// only, on a live view and on a snapshot alike.
    #[test]
    fn spans_read_their_range_and_only_what_near_wants() {
        let dir = tempfile::tempdir().unwrap();
        let mut b =
            super::super::open::create(&dir.path().join("s"), 1, 8 << 20, |_| Ok(())).unwrap();
        b.attach_tables(&[8]).unwrap();
        let q = 0x5a00_0000_0000_00f0u64;
        let stored = [
            q,
            q ^ 1,
            q ^ 0b111,
            q ^ 0xf,
            q ^ (1 << 40),
            q + (1 << 56),
            q - 1,
        ];
        for (seq, &p) in stored.iter().enumerate() {
            b.put_table_entry(0, p, seq as u64);
        }
        let read = |view: &RocksSnapshot, span: Span| {
            let mut got = Vec::new();
            view.scan_span(&span, &mut |e| {
                got.push(e?.0);
                Ok(true)
            })
            .unwrap();
            got
        };
        let bucket = Span::new(0, q & !(u64::MAX >> 8), Some((q | (u64::MAX >> 8)) + 1));
        for view in [RocksSnapshot::live(&b), RocksSnapshot::new(&b)] {
            let mut all: Vec<u64> = stored.iter().copied().filter(|p| p >> 56 == 0x5a).collect();
            all.sort();
            assert_eq!(read(&view, bucket), all);
            let near = Span {
                near: Some(Near {
                    permuted: q,
                    within: 3,
                }),
                ..bucket
            };
            let mut want = vec![q, q ^ 1, q ^ 0b111, q ^ (1 << 40)];
            want.sort();
            assert_eq!(read(&view, near), want);
            // Narrower than the bucket; and across two buckets.
            assert_eq!(
                read(&view, Span::new(0, q, Some(q + 8))),
                [q, q ^ 1, q ^ 0b111]
            );
            assert_eq!(
                read(&view, Span::new(0, q, None)).last(),
                Some(&(q + (1 << 56)))
            );
        }
    }
}
