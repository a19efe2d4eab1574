//! `docs` rewritten without its damaged parts: a file that fails its checksum would stop
//! every later compaction that reads it (and with it every write), so a repair that stepped
//! over damaged document records rewrites `docs` from what can be read.
//!
//! RocksDB can drop a column family without reading it, but cannot rename one; so the
//! readable records are copied into `docs.rewrite`, a marker is written (fsynced), `docs`
//! is dropped and made anew, the records copied back, and `docs.rewrite` and the marker
//! removed. A writer opening a store with `docs.rewrite` finishes the rewrite when the
//! marker says the copy was complete, and drops the partial copy otherwise (`docs` is
//! then untouched).

use rocksdb::{DB, WriteBatch, WriteOptions};

use super::options::{self, DOCS, META};
use super::{RocksBackend, cf, storage};
use crate::error::Result;
use crate::store::codec;

/// The column family the readable records are copied into.
const REWRITE: &str = "docs.rewrite";
/// The `meta` key saying `docs.rewrite` is complete.
const MARKER: &[u8] = b"docs-rewrite-complete";
/// Records copied per write.
const CHUNK: usize = 10_000;

impl RocksBackend {
    /// Rewrites `docs` without the records in `unreadable` (inclusive ranges of sequence
    /// numbers that a read could not get past).
    pub(super) fn rewrite_docs_without(&mut self, unreadable: &[(u64, u64)]) -> Result<()> {
        self.iters.clear();
        drop_if_present(&mut self.db, REWRITE)?;
        self.db
            .create_cf(REWRITE, &options::cf_options(DOCS, &self.cache))
            .map_err(storage)?;
        copy_readable(&self.db, DOCS, REWRITE, unreadable)?;
        put_marker(&self.db, true)?;
        finish(&mut self.db, &self.cache)
    }
}

/// At a writer's open: finishes a rewrite whose copy was complete, or drops the copy of one
/// that was cut short. `names` are the column families opened.
pub(super) fn recover(db: &mut DB, cache: &rocksdb::Cache, names: &[String]) -> Result<()> {
    if !names.iter().any(|n| n == REWRITE) {
        return Ok(());
    }
    let meta = cf(db, META)?;
    if db.get_cf(meta, MARKER).map_err(storage)?.is_some() {
        return finish(db, cache);
    }
    db.drop_cf(REWRITE).map_err(storage)
}

/// The second half: `docs` made anew from the complete copy, then the copy dropped.
fn finish(db: &mut DB, cache: &rocksdb::Cache) -> Result<()> {
    drop_if_present(db, DOCS)?;
    db.create_cf(DOCS, &options::cf_options(DOCS, cache))
        .map_err(storage)?;
    copy_readable(db, REWRITE, DOCS, &[])?;
    put_marker(db, false)?;
    db.drop_cf(REWRITE).map_err(storage)
}

fn drop_if_present(db: &mut DB, name: &str) -> Result<()> {
    if db.cf_handle(name).is_some() {
        db.drop_cf(name).map_err(storage)?;
    }
    Ok(())
}

/// Writes (`set`) or removes the marker, fsynced: the copies before it are durable then.
fn put_marker(db: &DB, set: bool) -> Result<()> {
    let meta = cf(db, META)?;
    let mut batch = WriteBatch::default();
    if set {
        batch.put_cf(meta, MARKER, []);
    } else {
        batch.delete_cf(meta, MARKER);
    }
    let mut wo = WriteOptions::default();
    wo.set_sync(true);
    db.write_opt(batch, &wo).map_err(storage)
}

/// Copies every record of `from` into `to`, stepping over `skip`: a read that fails inside
/// one of those ranges goes on after it.
fn copy_readable(db: &DB, from: &str, to: &str, skip: &[(u64, u64)]) -> Result<()> {
    let (src, dst) = (cf(db, from)?, cf(db, to)?);
    let mut it = db.raw_iterator_cf(src);
    it.seek_to_first();
    let mut batch = WriteBatch::default();
    // One past the last sequence number copied: where a failed read stopped.
    let mut reached = 0u64;
    loop {
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            batch.put_cf(dst, k, v);
            reached = codec::decode_doc_key(k)?.saturating_add(1);
            if batch.len() >= CHUNK {
                db.write(std::mem::take(&mut batch)).map_err(storage)?;
            }
            it.next();
        }
        let Err(e) = it.status() else { break };
        let Some(&(_, end)) = skip.iter().find(|(_, end)| *end >= reached) else {
            return Err(storage(e));
        };
        let Some(next) = end.checked_add(1) else {
            break;
        };
        it.seek(codec::doc_key(next));
    }
    db.write(batch).map_err(storage)
}
