//! Bulk loads on Redis Cluster: no staging area, but the sorted runs are written as
//! variadic commands, one per bucket (`ZADD key 0 m1 0 m2 ...`, `HSET key f1 v1 ...`):
//! a run in key order fills one bucket after another, so a load of N documents into t
//! tables costs about `t × 2^bucket_bits` commands instead of `t × N`. Entries are visible
//! as they are written (the bulk-load marker stays set until the load is committed, and a
//! load interrupted by a crash is rebuilt from `docs` on the next writable open).

use std::collections::BTreeMap;

use redis::cluster::cluster_pipe;

use super::RedisBackend;
use super::conn::Retry;
use crate::error::{Error, Result};
use crate::store::backend::{BulkIngest, SortedEntry, SortedRun, SortedWriter, Space, Staging};
use crate::store::codec;
use crate::store::codec::redis::table_member;

/// Arguments (members, fields, values) gathered before they are written: runs in bucket
/// order (tables, `docs`) fill one bucket after another; `ids` and `exact` come in another
/// order, so more of them are gathered to fill their buckets.
const FLUSH_ARGS: usize = 64 * 1024;
const FLUSH_ARGS_UNORDERED: usize = 4 << 20;

/// Commands per pipelined round trip.
const PIPELINE: usize = 4096;

impl BulkIngest for RedisBackend {
    fn sorted_writer(&self, space: Space) -> Result<Box<dyn SortedWriter + '_>> {
        Ok(Box::new(BucketWriter {
            b: self,
            space,
            groups: BTreeMap::new(),
            args: 0,
        }))
    }

    fn ingest(&self, _runs: Vec<SortedRun>) -> Result<()> {
        Ok(())
    }

    fn discard_staged(&self) {}

    /// No staging area: runs are visible as they are written.
    fn staging(&self) -> Staging {
        Staging::default()
    }
}

/// Groups a run's entries by bucket key and writes each group as one command.
struct BucketWriter<'a> {
    b: &'a RedisBackend,
    space: Space,
    /// Bucket key → its members (sorted sets) or field, value pairs (hashes), flat.
    groups: BTreeMap<String, Vec<Vec<u8>>>,
    args: usize,
}

impl BucketWriter<'_> {
    fn add(&mut self, key: String, items: [Vec<u8>; 2]) -> Result<()> {
        self.groups.entry(key).or_default().extend(items);
        self.args += 2;
        let limit = match self.space {
            Space::Ids | Space::Exact => FLUSH_ARGS_UNORDERED,
            _ => FLUSH_ARGS,
        };
        if self.args >= limit {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the groups gathered so far, one command each, in one pipeline; waits for
    /// replicas as a write does.
    fn flush(&mut self) -> Result<()> {
        if self.groups.is_empty() {
            return Ok(());
        }
        let command = match self.space {
            Space::Docs | Space::Ids => "HSET",
            _ => "ZADD",
        };
        let groups: Vec<_> = std::mem::take(&mut self.groups).into_iter().collect();
        for chunk in groups.chunks(PIPELINE) {
            let mut pipe = cluster_pipe();
            for (key, items) in chunk {
                pipe.cmd(command).arg(key).arg(items);
            }
            self.b.pool.retrying(|c| {
                pipe.exec(c).map_err(Retry::from)?;
                self.b.wait_for_replicas(c)
            })?;
        }
        self.args = 0;
        Ok(())
    }
}

impl SortedWriter for BucketWriter<'_> {
    fn put(&mut self, entry: SortedEntry<'_>) -> Result<()> {
        let k = &self.b.keys;
        let (key, items) = match (entry, self.space) {
            (SortedEntry::Doc(seq, doc), Space::Docs) => (
                k.doc(seq),
                [codec::doc_key(seq).to_vec(), codec::encode_doc(doc)],
            ),
            (SortedEntry::Id(id, value), Space::Ids) => (
                k.id(id),
                [id.as_bytes().to_vec(), codec::encode_id_value(value)],
            ),
            (SortedEntry::Exact(hash, seq), Space::Exact) => (
                k.exact(hash),
                [b"0".to_vec(), codec::exact_key(hash, seq).to_vec()],
            ),
            (SortedEntry::Table(permuted, seq), Space::Table(t)) => (
                k.table_bucket(t, k.table_bucket_of(permuted)),
                [b"0".to_vec(), table_member(permuted, seq)?.to_vec()],
            ),
            (_, space) => {
                return Err(Error::storage(
                    "redis",
                    format!("an entry of another space was given to the bulk run of {space:?}"),
                ));
            }
        };
        self.add(key, items)
    }

    fn finish(mut self: Box<Self>) -> Result<Option<SortedRun>> {
        self.flush()?;
        Ok(None)
    }
}
