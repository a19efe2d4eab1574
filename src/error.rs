//! Typed errors of the simstore library.
//!
//! Every error carries what was found and, where the user can act on it, what to do.
//! The binary adds context (file names, line numbers) on top of these.

use std::path::PathBuf;

/// The result type of every fallible simstore operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An [`Error::Storage`] of `backend` from its error or a message.
    pub(crate) fn storage(
        backend: &'static str,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Error {
        Error::Storage {
            backend,
            source: source.into(),
        }
    }
}

/// Everything that can go wrong in the simstore library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The path exists but does not hold a simstore store.
    #[error(
        "{path} is not a simstore store ({reason}); open another path, or create a store in a new or empty directory"
    )]
    NotAStore {
        /// The path that was opened.
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },

    /// No store exists at the path and the builder was not asked to create one.
    #[error("no store at {path}; create one (StoreBuilder::create_if_missing)")]
    NoStore {
        /// The path that was opened.
        path: PathBuf,
    },

    /// The store was written with an on-disk format this build cannot read.
    #[error(
        "store format version {found} is not supported by this build (it reads {}); {hint}", readable(.oldest, .expected)
    )]
    FormatVersion {
        /// The format version found in the store.
        found: u32,
        /// The oldest format version this build reads on the store's backend.
        oldest: u32,
        /// The format version this build writes (the newest it reads).
        expected: u32,
        /// What to do about it.
        hint: &'static str,
    },

    /// The store's fingerprints were made under another fingerprint spec.
    #[error(
        "the store's fingerprints were made with fingerprint spec {found}, this build computes spec {expected}; \
         fingerprints of different specs are not comparable: re-import the documents into a new store \
         (or use a simstore build that has spec {found})"
    )]
    SpecMismatch {
        /// The spec found in the store, in its display form.
        found: String,
        /// The spec of this build, in its display form.
        expected: String,
    },

    /// Another process (or another `Store` in this process) holds the store open for writing.
    #[error(
        "the store at {path} is locked by another writer (one writer at a time: another process, or another open handle of the store in this process): {detail}"
    )]
    Locked {
        /// The store path.
        path: PathBuf,
        /// RocksDB's message.
        detail: String,
    },

    /// The store's write-ahead log is damaged before its end: the writes it holds after
    /// the damage cannot be replayed. The store is not opened and nothing is changed;
    /// [`crate::StoreBuilder::salvage`] opens it dropping the damaged records.
    #[error(
        "the write-ahead log of the store at {path} is damaged ({detail}): the writes after \
         the damage cannot be replayed, so the store was not opened and nothing was changed; \
         salvage it to keep every intact write and drop the damaged ones, which are counted \
         (StoreBuilder::salvage), or restore a backup"
    )]
    DamagedLog {
        /// The store path.
        path: PathBuf,
        /// RocksDB's message and what the log holds: damaged places, bytes, intact batches.
        detail: String,
    },

    /// The store's own bookkeeping files are damaged (a MANIFEST that does not read, a
    /// missing CURRENT, a damaged file found while opening). Nothing is changed.
    #[error(
        "the store at {path} is damaged: {detail}; nothing was changed: salvage it (RocksDB \
         rebuilds its file list from the files, then the derived data is rebuilt: \
         StoreBuilder::salvage), or restore a backup"
    )]
    Damaged {
        /// The store path.
        path: PathBuf,
        /// What is damaged (RocksDB's message).
        detail: String,
    },

    /// The stored data is damaged: a manifest, record or key could not be decoded.
    #[error("corrupt store: {0}; Store::check gives a full report")]
    Corrupt(String),

    /// An invalid layout was asked for (e.g. k_max not smaller than the number of blocks).
    #[error("invalid layout: {0}")]
    InvalidLayout(String),

    /// A store URL that cannot be used.
    #[error("invalid store URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A write reached the cluster's masters, but fewer replicas than asked acknowledged
    /// it in time: it would not survive a failover of a master that has not replicated it.
    #[error(
        "a write was applied but only {acked} of {wanted} replicas acknowledged it within \
         {timeout_ms} ms (a replica down or lagging?); retry it, or ask for fewer with \
         ?replicas-ack=N on the store URL (0: do not wait for replicas)"
    )]
    ReplicasBehind {
        /// Replicas that acknowledged (the fewest over the masters written).
        acked: u32,
        /// Replicas asked for.
        wanted: u32,
        /// How long the write waited.
        timeout_ms: u64,
    },

    /// A job is larger than this build can handle in one piece (e.g. more documents than a
    /// dedup can cluster).
    #[error("too large: {0}")]
    TooLarge(String),

    /// A query asked for a Hamming distance the store's tables cannot answer exactly.
    #[error(
        "k = {k} exceeds this store's k_max = {k_max}: its tables only answer k <= {k_max} exactly; \
         rebuild them for k = {k} (Store::relayout), or scan every document \
         (Store::query with Rule::Exhaustive)"
    )]
    KTooLarge {
        /// The k asked for.
        k: u32,
        /// The store's k_max.
        k_max: u32,
    },

    /// A document had no text to fingerprint.
    #[error(
        "document has no text to fingerprint (empty or only punctuation/whitespace); give it a title or text"
    )]
    EmptyDocument,

    /// A document id was empty or too long.
    #[error("invalid document id: {0}")]
    InvalidId(String),

    /// A stored field of a document (its title or url) is longer than the store keeps
    /// ([`crate::types::MAX_TITLE_BYTES`], [`crate::types::MAX_URL_BYTES`]). Its text is
    /// not bounded: it is fingerprinted, not stored.
    #[error(
        "document {id:?}: its {field} is {bytes} bytes; a stored {field} is at most {max} bytes: \
         shorten it (the text has no such limit: it is fingerprinted, not stored)"
    )]
    FieldTooLong {
        /// The document's id.
        id: String,
        /// `"title"` or `"url"`.
        field: &'static str,
        /// Its length, in bytes.
        bytes: usize,
        /// The most that is stored, in bytes.
        max: usize,
    },

    /// A fingerprint could not be parsed.
    #[error(
        "invalid fingerprint {input:?}: expected exactly 16 hexadecimal digits (e.g. 0f3a5c7e9b1d2f40)"
    )]
    InvalidFingerprint {
        /// The text that was given.
        input: String,
    },

    /// A reader that follows a writer (a secondary instance) can no longer follow it.
    #[error("the store changed under this reader: {0}; open it again")]
    Stale(String),

    /// A write was attempted on a store opened read-only.
    #[error(
        "the store was opened read-only (or as a secondary instance); open it without read_only to write"
    )]
    ReadOnly,

    /// A bulk load through this handle failed after part of it reached the store, so the
    /// handle's counters no longer say which sequence numbers are used: it takes no more
    /// writes until [`crate::Store::repair`] (or a new open) finishes or undoes the load.
    #[error(
        "a bulk load through this handle failed midway ({0}); it takes no more writes until \
         the load is recovered: call Store::repair on it, or open the store again (the next \
         writable open recovers it)"
    )]
    BulkLoadFailed(String),

    /// An argument no call can act on as asked (a retention of 0, a backup into an empty
    /// path, keeping no backup): the message says what to give instead.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// An operation this kind of store does not have (a salvage of a Redis store, say).
    #[error("not supported: {0}")]
    Unsupported(String),

    /// An error reported by a storage backend, or by the store's own threads that drive it.
    /// The backend's error is kept whole as the source (`rocksdb::Error`,
    /// `redis::RedisError`), behind a trait object so that the public type names no
    /// backend's types.
    #[error("storage error: {}{source}", if *backend == "redis" { "Redis: " } else { "" })]
    Storage {
        /// Which backend: `"rocksdb"`, `"redis"`, `"memory"`, or `"store"` (the store's own
        /// threads and checks).
        backend: &'static str,
        /// The backend's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// An I/O error outside RocksDB.
    #[error("I/O error: {0}")]
    Io(std::io::Error),
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

/// The format versions a build reads, in words: "version 5", "versions 3 to 5".
fn readable(oldest: &u32, newest: &u32) -> String {
    if oldest == newest {
        format!("version {newest}")
    } else {
        format!("versions {oldest} to {newest}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The backend's error is kept as the source, and the message reads as before.
    #[test]
    fn a_storage_error_keeps_its_source() {
        let e = Error::storage("rocksdb", std::io::Error::other("disk on fire"));
        assert_eq!(e.to_string(), "storage error: disk on fire");
        let source = std::error::Error::source(&e).expect("a source");
        assert!(source.downcast_ref::<std::io::Error>().is_some());
        assert!(matches!(
            e,
            Error::Storage {
                backend: "rocksdb",
                ..
            }
        ));
        let redis = Error::storage("redis", "MOVED 3999 127.0.0.1:6381");
        assert_eq!(
            redis.to_string(),
            "storage error: Redis: MOVED 3999 127.0.0.1:6381"
        );
    }

    /// A library error says what is wrong and which API to call: an embedder never reads a
    /// command line (`simstore init`, `--db`) in its logs; the binary words them for its
    /// users (`cli/hints.rs`).
    #[test]
    fn messages_name_apis_not_commands() {
        let path = PathBuf::from("pages.db");
        let errors = [
            Error::NotAStore {
                path: path.clone(),
                reason: "a file".into(),
            },
            Error::NoStore { path: path.clone() },
            Error::DamagedLog {
                path: path.clone(),
                detail: "bad record".into(),
            },
            Error::Damaged {
                path: path.clone(),
                detail: "no CURRENT".into(),
            },
            Error::Corrupt("a record".into()),
            Error::KTooLarge { k: 5, k_max: 3 },
            Error::BulkLoadFailed("disk full".into()),
            Error::FormatVersion {
                found: 1,
                oldest: 5,
                expected: 8,
                hint: crate::store::codec::version_hint(1),
            },
            Error::ReadOnly,
        ];
        for e in errors {
            let text = e.to_string();
            assert!(
                !text.contains("`simstore") && !text.contains("--"),
                "{text}"
            );
        }
    }
}
