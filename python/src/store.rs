//! `simstore.Store`: one engine store, shared by any number of Python threads.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rayon::prelude::*;
use simstore::index::quality::RuleValue;
use simstore::{DocMeta, Document, InsertOutcome, Quality, QueryKey, Rule};

use crate::convert::{Id, Query, Text, Whole, fingerprint_arg, query_arg, text_of, whole};
use crate::errors::{invalid_argument, to_py};
use crate::handle::{Handle, InCall};
use crate::results::{CheckResult, Match, StoredDocument};

mod docs;
pub(crate) mod lifecycle;

/// A persistent store of SimHash fingerprints: a RocksDB directory (created if missing), or a
/// store on a Redis Cluster (`redis://HOST:PORT[,HOST:PORT...]/NAME`).
///
/// `quality` ("standard", the default, or "high") is the store's quality mode: what
/// `check_and_insert` and `query` count as a near duplicate when given no `k` or `verify`
/// (candidates up to 12 bits away — high: 14, and spans of the text's weak bits besides the
/// tables' — whose texts' shingle sketches agree, besides every stored document within
/// k_max). `k_max` (default: the mode's, 3) is the largest Hamming
/// distance the tables answer exactly and `expected_docs` (default 1,000,000) picks the
/// table layout. All three only matter when the store is created. `read_only=True` opens an existing store for queries beside a writer
/// process (seeing the data as of opening; no lock is taken). `sync_writes=True` fsyncs
/// every write before it returns (survives power loss, not only a crash of the process).
///
/// A context manager (`with simstore.Store("pages.db") as store: ...` closes it). One
/// process may write a store at a time (`LockedError` otherwise). A `Store` may be shared
/// by threads: every call releases the GIL while the engine works, and `check_and_insert`
/// is atomic (of many threads checking copies of one page, exactly one gets "new").
///
/// A `Store` belongs to the process that opened it: in a child of `fork()` (`os.fork`, a
/// `multiprocessing` worker of the fork start method) every call raises `ForkedError`, and
/// the child never writes, flushes or closes the parent's store. Open the store after
/// forking, in the child; or use the spawn/forkserver start method.
#[pyclass(module = "simstore", frozen)]
pub struct Store {
    /// The engine store: the process that opened it, the calls in progress.
    handle: Handle,
    read_only: bool,
}

impl Store {
    /// The open engine store for one call: `ForkedError` in a forked child, `ClosedError`
    /// once closed. A close waits until it is dropped.
    fn engine(&self, py: Python<'_>) -> PyResult<InCall<'_>> {
        self.handle.acquire(py)
    }

    /// Runs `f` on the engine store with the GIL released; engine errors become exceptions.
    fn call<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&simstore::Store) -> simstore::Result<T> + Send,
    ) -> PyResult<T> {
        let store = self.engine(py)?;
        let engine: &simstore::Store = &store;
        py.detach(move || f(engine)).map_err(|e| to_py(py, e))
    }
}

/// A document of an id, a text and optional title and URL, and for a web page what its
/// reader left out of the text (`extract_page(html, left_out=True)`).
fn document(
    id: String,
    body: Text,
    (title, url): (Option<Text>, Option<Text>),
    left_out: Option<Text>,
) -> Document {
    Document {
        id,
        title: text_of(title),
        text: body.0,
        url: text_of(url),
        left_out: text_of(left_out),
    }
}

#[pymethods]
impl Store {
    #[new]
    #[pyo3(signature = (path_or_url, *, k_max = None, quality = None, expected_docs = None, read_only = false, sync_writes = false))]
    #[allow(clippy::too_many_arguments, reason = "the Python signature")]
    fn new(
        py: Python<'_>,
        path_or_url: PathBuf,
        k_max: Option<Whole<u32>>,
        quality: Option<&str>,
        expected_docs: Option<Whole<u64>>,
        read_only: bool,
        sync_writes: bool,
    ) -> PyResult<Self> {
        let (k_max, expected_docs) = (whole(k_max), whole(expected_docs));
        let quality = match quality {
            Some(q) => q.parse::<Quality>().map_err(|e| invalid_argument(py, e))?,
            None => Quality::default(),
        };
        let mut builder = simstore::Store::builder(&path_or_url)
            .quality(quality)
            .read_only(read_only)
            .sync_writes(sync_writes);
        if let Some(k) = k_max {
            builder = builder.k_max(k);
        }
        if let Some(n) = expected_docs {
            builder = builder.expected_docs(n);
        }
        let store = py
            .detach(move || builder.open())
            .map_err(|e| to_py(py, e))?;
        Ok(Store {
            handle: Handle::new(store, path_or_url.to_string_lossy().into_owned()),
            read_only,
        })
    }

    /// The path or URL the store was opened with.
    #[getter]
    fn path(&self) -> &str {
        self.handle.path()
    }

    /// The largest k its tables answer exactly (fixed when the store was created).
    #[getter]
    fn k_max(&self, py: Python<'_>) -> PyResult<u32> {
        Ok(self.engine(py)?.layout().k_max())
    }

    /// The store's quality mode, "standard" or "high" (fixed when the store was created).
    #[getter]
    fn quality(&self, py: Python<'_>) -> PyResult<&'static str> {
        Ok(self.engine(py)?.quality().name())
    }

    /// True when opened with read_only=True.
    #[getter]
    fn read_only(&self) -> bool {
        self.read_only
    }

    /// True once closed.
    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        self.handle.is_closed(py)
    }

    /// Closes the store and releases its lock (a no-op when closed). Calls in progress in
    /// other threads finish first (close waits for them, the GIL released; calls made
    /// meanwhile raise `ClosedError`): when it returns, the store is closed and the same
    /// path can be opened again. Every later call raises `ClosedError`. Acknowledged writes
    /// are already durable; nothing is lost by not closing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.handle.close(py)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.handle.close(py)?;
        Ok(false)
    }

    /// Fingerprints the text (and title) and stores it under `id`, replacing a document with
    /// that id. Returns "inserted" or "replaced". `left_out`: for a web page, what its reader
    /// left out of the text (`extract_page(html, left_out=True)`), as `check_and_insert`.
    #[pyo3(signature = (id, text, *, title = None, url = None, left_out = None))]
    fn insert(
        &self,
        py: Python<'_>,
        id: Id,
        text: Text,
        title: Option<Text>,
        url: Option<Text>,
        left_out: Option<Text>,
    ) -> PyResult<&'static str> {
        let doc = document(id.0, text, (title, url), left_out);
        self.call(py, move |s| s.insert(&doc)).map(insert_status)
    }

    /// Stores a precomputed fingerprint (an int, a `Fingerprint`, or 16 hex digits) under
    /// `id`, replacing a document with that id. Returns "inserted" or "replaced". Stored
    /// without words, it is found as a near duplicate (distance 0), never as an exact one.
    #[pyo3(signature = (id, fp, *, title = None, url = None))]
    fn insert_fingerprint(
        &self,
        py: Python<'_>,
        id: Id,
        fp: &Bound<'_, PyAny>,
        title: Option<Text>,
        url: Option<Text>,
    ) -> PyResult<&'static str> {
        let fp = fingerprint_arg(py, fp)?;
        let meta = DocMeta {
            title: text_of(title),
            url: text_of(url),
            ..DocMeta::default()
        };
        self.call(py, move |s| s.insert_fingerprint(&id.0, fp, meta))
            .map(insert_status)
    }

    /// The crawler's call: stores the page unless a stored document duplicates it, atomically.
    /// First an exact duplicate (the same words after normalization), else the nearest
    /// near duplicate (ties: smallest id), else the page is stored. Near duplicate: by the
    /// store's quality mode when neither `k` nor `verify` is given (within k_max, or up to 8
    /// bits away with agreeing sketches: `distance` may then exceed k_max); within `k` bits
    /// with `k` alone; with `verify` (0..1), within `k` (default k_max) and at least that
    /// similar by sketch. Returns a `CheckResult` (`status`, `of`, `distance`, `fp`).
    /// Re-crawling an unchanged page (same id, same text) is an exact duplicate of itself.
    /// `left_out`: for a web page, what its reader left out of the text (its link lists:
    /// `extract_page(html, left_out=True)`); when that is more than a tenth of the page,
    /// the page is compared by its whole visible text too, so that two listing pages under
    /// one intro are not duplicates.
    #[pyo3(signature = (id, text, *, title = None, url = None, k = None, verify = None, left_out = None))]
    #[allow(clippy::too_many_arguments, reason = "the Python signature")]
    fn check_and_insert(
        &self,
        py: Python<'_>,
        id: Id,
        text: Text,
        title: Option<Text>,
        url: Option<Text>,
        k: Option<Whole<u32>>,
        verify: Option<f64>,
        left_out: Option<Text>,
    ) -> PyResult<CheckResult> {
        check_similarity(py, verify)?;
        let k = whole(k);
        let doc = document(id.0, text, (title, url), left_out);
        let outcome = self.call(py, move |s| {
            s.check_and_insert(&doc, Rule::options(k, verify))
        })?;
        CheckResult::new(py, &outcome)
    }

    /// The near duplicates of a text (with its title) or of a fingerprint `fp`, nearest
    /// first (ties: by id), at most `limit`. Given neither `k` nor `verify`: by the store's
    /// quality mode (a text: every stored document within k_max, and those up to 12 bits away
    /// — high: 14 — whose shingle sketch agrees; `fp`, which has no sketch: within k_max). `k` alone:
    /// every stored document within Hamming distance `k`, exact for k <= k_max
    /// (`KTooLargeError` above). `verify` (0..1, with a text only) keeps only the matches
    /// within `k` (default k_max) whose shingle sketch is at least that similar (e.g. k=8,
    /// verify=0.4 on a store made with k_max=8: the two-stage query). `left_out`: for a web
    /// page, what its reader left out (`extract_page(html, left_out=True)`), so the page is
    /// compared as `check_and_insert` stored it. Returns a list of `Match`.
    #[pyo3(signature = (text = None, *, fp = None, title = None, k = None, limit = None, verify = None, left_out = None))]
    #[allow(clippy::too_many_arguments, reason = "the Python signature")]
    fn query(
        &self,
        py: Python<'_>,
        text: Option<Text>,
        fp: Option<&Bound<'_, PyAny>>,
        title: Option<Text>,
        k: Option<Whole<u32>>,
        limit: Option<Whole<usize>>,
        verify: Option<f64>,
        left_out: Option<Text>,
    ) -> PyResult<Vec<Match>> {
        check_similarity(py, verify)?;
        let (k, limit) = (whole(k), whole(limit));
        let by_text = text.is_some() || title.is_some();
        let matches = match (fp, by_text, verify) {
            (Some(_), true, _) => {
                return Err(invalid_argument(
                    py,
                    "query with a text or a fingerprint, not both",
                ));
            }
            (Some(_), false, Some(_)) => {
                return Err(invalid_argument(
                    py,
                    "verify needs a text (a fingerprint has no sketch)",
                ));
            }
            (None, false, _) => {
                return Err(invalid_argument(
                    py,
                    "nothing to query with: give a text (or title=) or fp=",
                ));
            }
            (Some(fp), false, None) => {
                let fp = fingerprint_arg(py, fp)?;
                self.call(py, move |s| s.query(fp, Rule::options(k, None)))?
            }
            (None, true, verify) => {
                let body = text.unwrap_or(Text(String::new()));
                let doc = document(String::new(), body, (title, None), left_out);
                self.call(py, move |s| s.query(&doc, Rule::options(k, verify)))?
            }
        };
        matches_to_py(py, matches, limit)
    }

    /// `query` for many queries at once, from one snapshot (texts fingerprinted in parallel):
    /// one list of `Match` per query, in order. A query is a text (str), a fingerprint (int
    /// or `Fingerprint`), or a dict with "text" (and "title") or "fp". Given no `k`, the
    /// store's quality mode (as `query`); a fingerprint query then matches within k_max.
    #[pyo3(signature = (queries, *, k = None, limit = None))]
    fn query_batch(
        &self,
        py: Python<'_>,
        queries: &Bound<'_, PyAny>,
        k: Option<Whole<u32>>,
        limit: Option<Whole<usize>>,
    ) -> PyResult<Vec<Vec<Match>>> {
        let (k, limit) = (whole(k), whole(limit));
        let queries = queries
            .try_iter()?
            .enumerate()
            .map(|(i, q)| query_arg(py, i, &q?))
            .collect::<PyResult<Vec<Query>>>()?;
        let store = self.engine(py)?;
        let engine: &simstore::Store = &store;
        let answers = py.detach(move || batch(engine, &queries, k));
        drop(store);
        let answers = answers.map_err(|(i, e)| match i {
            None => to_py(py, e),
            Some(i) => {
                let e = to_py(py, e);
                let msg = format!("query {i}: {}", e.value(py));
                PyErr::from_type(e.get_type(py), msg)
            }
        })?;
        answers
            .into_iter()
            .map(|m| matches_to_py(py, m, limit))
            .collect()
    }

    /// The stored document `id` as a `StoredDocument`, or None.
    fn get(&self, py: Python<'_>, id: Id) -> PyResult<Option<StoredDocument>> {
        match self.call(py, move |s| s.get(&id.0))? {
            Some(d) => Ok(Some(StoredDocument::new(py, d)?)),
            None => Ok(None),
        }
    }

    /// Deletes the document `id`; returns whether it existed.
    fn delete(&self, py: Python<'_>, id: Id) -> PyResult<bool> {
        self.call(py, move |s| s.delete(&id.0))
    }

    /// Deletes `ids` in one change set (atomic on RocksDB): for each, whether it was stored.
    fn delete_many(&self, py: Python<'_>, ids: Vec<Id>) -> PyResult<Vec<bool>> {
        let ids: Vec<String> = ids.into_iter().map(|i| i.0).collect();
        self.call(py, move |s| s.delete_many(&docs::refs(&ids)))
    }

    /// The stored ids in insertion order, `chunk` per read (see `_simstore.pyi`).
    #[pyo3(signature = (*, from_seq = 0, chunk = 10000))]
    fn ids(slf: Py<Self>, from_seq: u64, chunk: usize) -> docs::Scan {
        docs::Scan::new(slf, docs::Yield::Id, from_seq, chunk)
    }

    /// The stored documents as dicts in insertion order, `chunk` per read.
    #[pyo3(signature = (*, from_seq = 0, chunk = 10000))]
    fn export(slf: Py<Self>, from_seq: u64, chunk: usize) -> docs::Scan {
        docs::Scan::new(slf, docs::Yield::Doc, from_seq, chunk)
    }

    #[pyo3(signature = (id, text, *, title = None))]
    fn similarity(
        &self,
        py: Python<'_>,
        id: Id,
        text: Text,
        title: Option<Text>,
    ) -> PyResult<Option<f64>> {
        docs::similarity(self, py, (id.0, text.0, text_of(title)))
    }

    /// Figures about the store, as a dict with the keys of `simstore stats --json` (docs,
    /// spec, k_max, blocks, tables, prefix_bits, disk_bytes, candidates per query...).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (s, observed, quality, mode) = self.call(py, |s| {
            Ok((
                s.stats()?,
                s.observed_candidates(200)?,
                s.quality(),
                s.rule(Rule::Mode),
            ))
        })?;
        let l = &s.layout;
        let d = PyDict::new(py);
        d.set_item("path", self.handle.path())?;
        d.set_item("docs", s.docs)?;
        d.set_item("format_version", s.format_version)?;
        d.set_item("spec", s.spec.to_string())?;
        d.set_item("spec_version", s.spec.version)?;
        d.set_item("k_max", l.k_max())?;
        let blocks: Vec<u32> = l.widths().iter().map(|&w| u32::from(w)).collect();
        d.set_item("blocks", blocks)?;
        d.set_item("tables", l.tables().len())?;
        let prefixes: Vec<u32> = l.tables().iter().map(|t| t.prefix_bits()).collect();
        d.set_item("prefix_bits", prefixes)?;
        d.set_item("band_tables", s.band_tables)?;
        d.set_item("disk_bytes", s.disk_bytes)?;
        d.set_item("memory_bytes", s.memory_bytes)?;
        d.set_item("expected_candidates_per_query", s.expected_candidates)?;
        d.set_item("observed_candidates_per_query", observed.mean())?;
        d.set_item("observed_candidates_max", observed.max)?;
        d.set_item("observed_queries", observed.queries)?;
        d.set_item("expected_query_us", l.expected_query_us(s.docs as f64))?;
        d.set_item("quality", quality.name())?;
        let rule = PyDict::new(py);
        for (name, value) in mode.fields() {
            match value {
                RuleValue::Count(n) => rule.set_item(name, n)?,
                RuleValue::Share(t) => rule.set_item(name, t)?,
            }
        }
        d.set_item("quality_rule", rule)?;
        Ok(d)
    }

    /// Verifies that tables, ids and documents agree (as `simstore check --json`): a dict
    /// with "ok", "docs", "ids", "table_entries", "exact_entries", "problem_count" and
    /// "problems" (the first 100 described). Writers go on meanwhile.
    fn check<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.call(py, |s| s.check())?;
        let d = PyDict::new(py);
        d.set_item("ok", r.is_ok())?;
        d.set_item("docs", r.docs)?;
        d.set_item("ids", r.ids)?;
        d.set_item("table_entries", r.table_entries.clone())?;
        d.set_item("exact_entries", r.exact_entries)?;
        d.set_item("problem_count", r.problem_count)?;
        d.set_item("problems", PyList::new(py, &r.problems)?)?;
        Ok(d)
    }

    /// Every cluster of near duplicates in the store (the pairs within `k` bits; given no
    /// `k`, the pairs of the store's quality mode), as `simstore dedup`: in insertion order,
    /// each document joins the nearest earlier kept document it duplicates, or is kept (no
    /// chains). A list of clusters, each a sorted list of ids, ordered by their first id.
    #[pyo3(signature = (k = None))]
    fn dedup(&self, py: Python<'_>, k: Option<Whole<u32>>) -> PyResult<Vec<Vec<String>>> {
        self.call(py, move |s| match whole(k) {
            Some(k) => s.dedup(k),
            None => s.dedup(Rule::Mode),
        })
        .map(|r| r.clusters)
    }

    /// Deletes the documents stored (by="stored") or last seen (by="seen") before a time:
    /// `older_than` an age ("90d", "12h", or seconds as an int) or `before` a time (Unix
    /// seconds, or "2026-01-01T00:00:00Z"); `by` defaults to the retention policy's. In
    /// atomic batches; with `dry_run` only counts. Returns a dict: expired, scanned,
    /// batches, full_scan, before, by.
    #[pyo3(signature = (*, older_than = None, before = None, by = None, dry_run = false))]
    fn expire<'py>(
        &self,
        py: Python<'py>,
        older_than: Option<Bound<'py, PyAny>>,
        before: Option<Bound<'py, PyAny>>,
        by: Option<String>,
        dry_run: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        lifecycle::expire(self, py, (older_than, before), by, dry_run)
    }

    /// The retention policy: a dict with retain_secs (None: keep everything), by
    /// ("stored" or "seen") and track_seen.
    fn retention<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.call(py, |s| Ok(s.retention()))?;
        lifecycle::retention_dict(py, &r)
    }

    /// Changes the retention policy (the settings given only): `retain` an age ("90d", or
    /// seconds) after which documents are expired by `simstore serve`; `keep_all` drops
    /// that limit; `track_seen` whether duplicates found refresh the stored document's
    /// last-seen time; `by` the time `retain` counts from ("stored" or "seen"). Returns
    /// the new policy.
    #[pyo3(signature = (*, retain = None, keep_all = false, track_seen = None, by = None))]
    fn set_retention<'py>(
        &self,
        py: Python<'py>,
        retain: Option<Bound<'py, PyAny>>,
        keep_all: bool,
        track_seen: Option<bool>,
        by: Option<String>,
    ) -> PyResult<Bound<'py, PyDict>> {
        lifecycle::set_retention(self, py, (retain, keep_all, track_seen, by))
    }

    /// Gives back the disk space deletes, replacements and expiries left (compacts the
    /// whole store now, as `simstore compact`); reads and writes go on meanwhile.
    fn compact(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |s| s.compact())
    }

    /// Takes an online backup into directory `dest` (as `simstore backup`): a consistent
    /// point in time, incremental; with `keep`, only the newest `keep` backups stay.
    /// Returns a dict: id, time, bytes, files.
    #[pyo3(signature = (dest, *, keep = None))]
    fn backup<'py>(
        &self,
        py: Python<'py>,
        dest: PathBuf,
        keep: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let info = self.call(py, move |s| s.backup(&dest, keep))?;
        lifecycle::backup_dict(py, &info)
    }

    /// Flushes buffered writes to the store's files (not needed for durability).
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |s| s.flush())
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.call(py, |s| Ok(s.len()))? as usize)
    }

    fn __contains__(&self, py: Python<'_>, id: Id) -> PyResult<bool> {
        self.call(py, move |s| s.get(&id.0)).map(|d| d.is_some())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let path = self.handle.path();
        if self.handle.check_process(py).is_err() {
            return format!("simstore.Store({path:?}, unusable in this forked process)");
        }
        match self.engine(py) {
            Ok(s) => format!(
                "simstore.Store({path:?}, docs={}, k_max={}, quality={:?})",
                s.len(),
                s.layout().k_max(),
                s.quality().name()
            ),
            Err(_) => format!("simstore.Store({path:?}, closed)"),
        }
    }
}

/// `InvalidArgumentError` unless `verify` is a similarity (0 to 1) or None.
fn check_similarity(py: Python<'_>, verify: Option<f64>) -> PyResult<()> {
    match verify {
        Some(t) if !(0.0..=1.0).contains(&t) => Err(invalid_argument(
            py,
            format!("verify={t}: the threshold is a similarity between 0 and 1"),
        )),
        _ => Ok(()),
    }
}

fn insert_status(o: InsertOutcome) -> &'static str {
    match o {
        InsertOutcome::Inserted => "inserted",
        InsertOutcome::Replaced => "replaced",
    }
}

/// The matches of one query as Python objects, at most `limit`.
fn matches_to_py(
    py: Python<'_>,
    mut matches: Vec<simstore::Match>,
    limit: Option<usize>,
) -> PyResult<Vec<Match>> {
    if limit == Some(0) {
        // An empty answer would read as "no near duplicate".
        return Err(invalid_argument(
            py,
            "limit=0 would answer no match: give at least 1, or None for every match",
        ));
    }
    if let Some(limit) = limit {
        matches.truncate(limit);
    }
    matches.into_iter().map(|m| Match::new(py, m)).collect()
}

/// An engine error of a batch, with the index of the query it came from (None: the batch's).
type BatchError = (Option<usize>, simstore::Error);

/// Fingerprints (and sketches) the text queries in parallel, then answers all from one
/// snapshot under the rule of `k` ("distance ≤ k"; given none, the store's mode).
fn batch(
    store: &simstore::Store,
    queries: &[Query],
    k: Option<u32>,
) -> Result<Vec<Vec<simstore::Match>>, BatchError> {
    let rule = store.rule(Rule::options(k, None));
    let analyzed = queries
        .par_iter()
        .enumerate()
        .map(|(i, q)| match q {
            Query::Fp(fp) => Ok(QueryKey::from(*fp)),
            Query::Text { title, text } => store
                .fingerprinter()
                .analyze(title.as_deref(), text)
                .map(|a| QueryKey::from(&a))
                .map_err(|e| (Some(i), e)),
        })
        .collect::<Result<Vec<QueryKey>, _>>()?;
    store
        .query_batch(analyzed.iter().copied(), rule)
        .map_err(|e| (None, e))
}
