//! The documents a dedup without `--output` compares, by column: read from the input
//! files (pass 1's [`records::Sink`]), or from a store for `--verify`.

use anyhow::Result;
use simstore::{Sketch, Store};

use super::{Args, items, keep, records, shards};
use crate::cli::input::Place;

/// The documents read from the input files (or, with `--verify`, from a store), by
/// column: ids and fingerprints; titles when they are printed, places when `--clusters` or
/// `--report` name them (else empty, as of a store's); sketches (when the rule verifies)
/// and ranks (when the keep policy ranks).
#[derive(Default)]
pub(super) struct FileDocs {
    pub ids: Vec<String>,
    pub fps: Vec<u64>,
    pub titles: Vec<Option<String>>,
    pub places: Vec<Place>,
    pub sketches: Vec<Option<Sketch>>,
    pub ranks: Vec<keep::Rank>,
    /// The documents' item numbers among the items of the inputs (empty for a store's).
    pub items: items::Items,
    /// The partial records (none of a store's).
    pub partial: records::Partial,
}

/// Every document of `store` with its sketch, for a dedup `--verify` of the store (titles
/// are read from the store when printed).
pub(super) fn stored_docs(store: &Store) -> simstore::Result<FileDocs> {
    let n = store.len() as usize;
    let mut files = FileDocs {
        ids: Vec::with_capacity(n),
        fps: Vec::with_capacity(n),
        sketches: Vec::with_capacity(n),
        ..FileDocs::default()
    };
    store.for_each_doc(|d| {
        files.ids.push(d.id);
        files.fps.push(d.fp);
        files.sketches.push(d.sketch);
        Ok(())
    })?;
    Ok(files)
}

/// The documents read from the input files, with their item numbers (to drop those read
/// from a damaged gzip member).
struct ReadDocs {
    files: FileDocs,
    sketch: bool,
    titles: bool,
    places: bool,
}

impl records::Sink for ReadDocs {
    fn push(&mut self, r: records::Read) {
        self.files.items.push(r.item);
        self.files.partial.push(self.files.fps.len(), r.partial);
        self.files.ids.push(r.id);
        self.files.fps.push(r.fp);
        if self.titles {
            self.files.titles.push(r.title);
        }
        if self.places {
            self.files.places.push(r.place);
        }
        if self.sketch {
            self.files.sketches.push(r.sketch);
        }
        if r.rank != keep::Rank::Unranked {
            self.files.ranks.push(r.rank);
        }
    }

    fn reserve(&mut self, n: usize) {
        self.files.ids.reserve_exact(n);
        self.files.fps.reserve_exact(n);
        if self.sketch {
            self.files.sketches.reserve_exact(n);
        }
    }

    fn drop_items(&mut self, items: std::ops::Range<u64>) -> u64 {
        let files = &mut self.files;
        let at = files.items.drop_range(items);
        files.partial.drop_range(at.clone());
        records::drain(&mut files.ids, at.clone());
        records::drain(&mut files.fps, at.clone());
        records::drain(&mut files.titles, at.clone());
        records::drain(&mut files.places, at.clone());
        records::drain(&mut files.sketches, at.clone());
        records::drain(&mut files.ranks, at.clone());
        at.len() as u64
    }
}

/// Reads and fingerprints every record of the inputs, in input order (a progress bar on
/// a terminal), with their titles when `pretty` prints them; also the number of records
/// that failed (each reported on stderr).
pub(super) fn read_inputs(args: &Args, pretty: bool) -> Result<(FileDocs, u64)> {
    let opts = records::ReadOptions::of(args);
    let bar = records::progress(&args.files, "fingerprinting");
    let mut read = ReadDocs {
        files: FileDocs::default(),
        sketch: opts.sketch,
        titles: pretty,
        places: args.clusters.is_some() || args.report.is_some(),
    };
    let counts = match shards::inputs(&args.files, args.format)? {
        Some(files) => shards::read_records(&files, &opts, &bar, &mut read)?.0,
        None => records::read_records(args, &opts, &bar, &mut read)?,
    };
    let files = read.files;
    bar.finish_and_clear();
    if counts.records == 0 && counts.failed > 0 {
        anyhow::bail!(
            "no record of the input could be read ({} failed, see above): nothing to compare",
            counts.failed
        );
    }
    Ok((files, counts.failed))
}
