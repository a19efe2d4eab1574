//! Reads from Redis Cluster. Redis has no snapshots: a "snapshot" reads the live keys, and
//! the logic above, written for a backend atomic per key, drops what a concurrent write
//! has half done (see [`crate::store::backend`]).

use redis::Value;
use redis::cluster::cluster_pipe;

use super::{RedisBackend, meta_field};
use crate::error::{Error, Result};
use crate::store::backend::{DocItem, IdItem, MetaKey, Snapshot, Span};
use crate::store::codec::redis::DOCS_PER_BUCKET_BITS;
use crate::store::codec::redis::decode_table_member;
use crate::store::codec::{self, IdValue, decode_exact_key};
use crate::types::StoredDoc;

/// Buckets read per pipelined round trip by a full scan.
const SCAN_CHUNK: usize = 512;

/// What [`RedisSnapshot::hscan`] calls with each field and value.
type FieldFn<'a> = dyn FnMut(&[u8], &[u8]) -> Result<bool> + 'a;

/// One `ZRANGEBYLEX` of a scan: a bucket key, its bounds, and the span it serves.
struct LexRange {
    group: usize,
    key: String,
    lo: Vec<u8>,
    hi: Vec<u8>,
}

/// A read view of a store on Redis Cluster.
pub(super) struct RedisSnapshot<'a> {
    b: &'a RedisBackend,
}

impl<'a> RedisSnapshot<'a> {
    pub(super) fn new(b: &'a RedisBackend) -> Self {
        Self { b }
    }

    /// Runs the commands as one cluster pipeline and returns the replies in order.
    fn pipeline(&self, cmds: &[redis::Cmd]) -> Result<Vec<Value>> {
        if cmds.is_empty() {
            return Ok(Vec::new());
        }
        self.b.pool.run(|c| {
            let mut pipe = cluster_pipe();
            for cmd in cmds {
                pipe.add_command(cmd.clone());
            }
            pipe.query::<Vec<Value>>(c)
        })
    }

    /// `ZRANGEBYLEX key lo hi` of every range, [`SCAN_CHUNK`] per pipelined round trip:
    /// `each(group, member)` in order; once it returns `false` for a group, the rest of
    /// that group's members are skipped.
    fn zscan(
        &self,
        ranges: &[LexRange],
        groups: usize,
        each: &mut dyn FnMut(usize, &[u8]) -> Result<bool>,
    ) -> Result<()> {
        let mut stopped = vec![false; groups];
        for chunk in ranges.chunks(SCAN_CHUNK) {
            let cmds: Vec<redis::Cmd> = chunk
                .iter()
                .map(|r| {
                    let mut c = redis::cmd("ZRANGEBYLEX");
                    c.arg(&r.key).arg(&r.lo[..]).arg(&r.hi[..]);
                    c
                })
                .collect();
            for (r, reply) in chunk.iter().zip(self.pipeline(&cmds)?) {
                for member in members(reply)? {
                    if stopped[r.group] {
                        break;
                    }
                    stopped[r.group] = !each(r.group, &member)?;
                }
            }
        }
        Ok(())
    }

    /// `HGETALL` of every key, [`SCAN_CHUNK`] at a time: `each(field, value)` (fields of one
    /// key sorted) until it returns `false`.
    fn hscan(&self, keys: impl Iterator<Item = String>, each: &mut FieldFn<'_>) -> Result<()> {
        let keys: Vec<String> = keys.collect();
        for chunk in keys.chunks(SCAN_CHUNK) {
            let cmds: Vec<redis::Cmd> = chunk
                .iter()
                .map(|key| {
                    let mut c = redis::cmd("HGETALL");
                    c.arg(key);
                    c
                })
                .collect();
            for reply in self.pipeline(&cmds)? {
                let mut pairs = field_pairs(reply)?;
                pairs.sort();
                for (f, v) in pairs {
                    if !each(&f, &v)? {
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }

    /// `HGET key field` for each pair, in one pipeline.
    fn hget_many(&self, pairs: Vec<(String, Vec<u8>)>) -> Result<Vec<Option<Vec<u8>>>> {
        let cmds: Vec<redis::Cmd> = pairs
            .into_iter()
            .map(|(key, f)| {
                let mut c = redis::cmd("HGET");
                c.arg(key).arg(f);
                c
            })
            .collect();
        self.pipeline(&cmds)?.into_iter().map(bytes).collect()
    }

    /// The table bucket keys a span of table `t` covers.
    fn span_keys(&self, span: &Span) -> Vec<String> {
        let k = &self.b.keys;
        let first = k.table_bucket_of(span.lo);
        let last = span
            .hi
            .map_or(k.buckets() - 1, |hi| k.table_bucket_of(hi - 1));
        (first..=last)
            .map(|b| k.table_bucket(span.table, b))
            .collect()
    }
}

impl Snapshot for RedisSnapshot<'_> {
    fn meta(&self, key: MetaKey) -> Result<Option<Vec<u8>>> {
        if key == MetaKey::Counters {
            let (next, live) = crate::store::backend::Shared::counters(self.b)?;
            return Ok(Some(codec::encode_counters(next, live).to_vec()));
        }
        let meta = self.b.keys.meta();
        self.b
            .pool
            .run(|c| redis::cmd("HGET").arg(&meta).arg(meta_field(key)).query(c))
    }

    fn ids(&self, ids: &[&str]) -> Result<Vec<Option<IdValue>>> {
        let pairs = ids
            .iter()
            .map(|id| (self.b.keys.id(id), id.as_bytes().to_vec()))
            .collect();
        self.hget_many(pairs)?
            .into_iter()
            .map(|v| v.map(|v| codec::decode_id_value(&v)).transpose())
            .collect()
    }

    fn docs(&self, seqs: &[u64]) -> Result<Vec<Option<StoredDoc>>> {
        let pairs = seqs
            .iter()
            .map(|&s| (self.b.keys.doc(s), codec::doc_key(s).to_vec()))
            .collect();
        self.hget_many(pairs)?
            .into_iter()
            .map(|v| v.map(|v| codec::decode_doc(&v)).transpose())
            .collect()
    }

    fn scan_spans(
        &self,
        spans: &[Span],
        each: &mut dyn FnMut(usize, Result<(u64, u64)>) -> Result<bool>,
    ) -> Result<()> {
        let mut ranges = Vec::new();
        for (group, span) in spans.iter().enumerate() {
            let lo = [b"[".as_slice(), &codec::table_bound(span.lo)].concat();
            let hi = match span.hi {
                Some(hi) => [b"(".as_slice(), &codec::table_bound(hi)].concat(),
                None => b"+".to_vec(),
            };
            for key in self.span_keys(span) {
                let (lo, hi) = (lo.clone(), hi.clone());
                ranges.push(LexRange { group, key, lo, hi });
            }
        }
        self.zscan(&ranges, spans.len(), &mut |i, m| {
            each(i, decode_table_member(m))
        })
    }

    fn first_exact(&self, hash: u128) -> Result<Option<u64>> {
        let (lo, hi) = exact_range(hash);
        let key = self.b.keys.exact(hash);
        let first: Vec<Vec<u8>> = self.b.pool.run(|c| {
            redis::cmd("ZRANGEBYLEX")
                .arg(&key)
                .arg(&lo[..])
                .arg(&hi[..])
                .arg("LIMIT")
                .arg(0)
                .arg(1)
                .query(c)
        })?;
        first
            .first()
            .map(|m| decode_exact_key(m).map(|(_, seq)| seq))
            .transpose()
    }

    fn scan_exact(&self, each: &mut dyn FnMut(Result<(u128, u64)>) -> Result<bool>) -> Result<()> {
        let k = &self.b.keys;
        let ranges: Vec<LexRange> = (0..k.buckets())
            .map(|b| LexRange {
                group: 0,
                key: k.exact_bucket(b),
                lo: b"-".to_vec(),
                hi: b"+".to_vec(),
            })
            .collect();
        self.zscan(&ranges, 1, &mut |_, m| each(decode_exact_key(m)))
    }

    fn scan_docs(
        &self,
        from: u64,
        each: &mut dyn FnMut(DocItem<'_>) -> Result<bool>,
    ) -> Result<()> {
        let (next, _) = crate::store::backend::Shared::counters(self.b)?;
        let first = from >> DOCS_PER_BUCKET_BITS;
        let last = next >> DOCS_PER_BUCKET_BITS;
        let k = &self.b.keys;
        self.hscan((first..=last).map(|b| k.doc_bucket(b)), &mut |f, v| {
            let item = codec::decode_doc_key(f).and_then(|seq| Ok((seq, codec::decode_doc(v)?)));
            if matches!(item, Ok((seq, _)) if seq < from) {
                return Ok(true);
            }
            each((f, item))
        })
    }

    fn scan_ids(&self, each: &mut dyn FnMut(IdItem<'_>) -> Result<bool>) -> Result<()> {
        let k = &self.b.keys;
        self.hscan((0..k.buckets()).map(|b| k.id_bucket(b)), &mut |f, v| {
            each((f, codec::decode_id_value(v)))
        })
    }
}

/// The `ZRANGEBYLEX` bounds of the `exact` members of `hash`.
pub(super) fn exact_range(hash: u128) -> (Vec<u8>, Vec<u8>) {
    let lo = [b"[".as_slice(), &codec::exact_prefix(hash)].concat();
    let hi = match hash.checked_add(1) {
        Some(h) => [b"(".as_slice(), &codec::exact_prefix(h)].concat(),
        None => b"+".to_vec(),
    };
    (lo, hi)
}

fn members(v: Value) -> Result<Vec<Vec<u8>>> {
    match v {
        Value::Array(items) => items
            .into_iter()
            .map(|i| bytes(i)?.ok_or_else(bad_reply))
            .collect(),
        Value::Nil => Ok(Vec::new()),
        other => Err(unexpected(other)),
    }
}

fn field_pairs(v: Value) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let flat = match v {
        Value::Array(items) => items,
        Value::Map(pairs) => pairs.into_iter().flat_map(|(a, b)| [a, b]).collect(),
        Value::Nil => Vec::new(),
        other => return Err(unexpected(other)),
    };
    let mut it = flat.into_iter();
    let mut out = Vec::new();
    while let (Some(f), Some(v)) = (it.next(), it.next()) {
        out.push((
            bytes(f)?.ok_or_else(bad_reply)?,
            bytes(v)?.ok_or_else(bad_reply)?,
        ));
    }
    Ok(out)
}

fn bytes(v: Value) -> Result<Option<Vec<u8>>> {
    match v {
        Value::BulkString(b) => Ok(Some(b)),
        Value::Nil => Ok(None),
        other => Err(unexpected(other)),
    }
}

fn bad_reply() -> Error {
    Error::storage("redis", "a nil where a value was expected")
}

fn unexpected(v: Value) -> Error {
    match v {
        Value::ServerError(e) => Error::storage("redis", format!("{e:?}")),
        other => Error::storage("redis", format!("unexpected reply {other:?}")),
    }
}
