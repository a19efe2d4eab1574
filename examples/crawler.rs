//! A crawler loop that embeds simstore: every fetched page goes through
//! `Store::check_and_insert`, which stores it only when it is new, and says of a duplicate
//! which stored page it repeats.
//!
//! ```sh
//! cargo run --release --example crawler                  # data/sample.jsonl, temporary store
//! cargo run --release --example crawler -- pages.jsonl /tmp/pages.db
//! ```
//!
//! The "fetches" are the shipped sample pages (100 articles and 200 reposts of them), then
//! a mirror of every tenth page under another URL (exact duplicates) and a re-crawl of the
//! first 30 URLs (unchanged pages: exact duplicates of themselves).

use std::collections::BTreeMap;
use std::io::BufRead;
use std::sync::Arc;

use simstore::read::parse_jsonl;
use simstore::{CheckOutcome, Document, Rule, Store};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let input = args
        .next()
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/data/sample.jsonl").into());
    let tmp = tempfile::tempdir()?;
    let kept: Option<std::path::PathBuf> = args.next().map(Into::into);
    let keep = kept.is_some();
    let path = kept.unwrap_or_else(|| tmp.path().join("pages.db"));

    // The store is Send + Sync: a real crawler shares one Arc<Store> between its fetcher
    // threads; check_and_insert is atomic, so two threads fetching copies of one page at
    // once never both store it.
    let store = Arc::new(Store::builder(&path).open()?);

    let mut pages: Vec<Document> = Vec::new();
    for line in std::io::BufReader::new(std::fs::File::open(&input)?).lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        match parse_jsonl(line.as_bytes()) {
            Ok(record) => pages.push(record.to_document()),
            Err(e) => eprintln!("skipping a bad record: {e}"),
        }
    }
    // The frontier: every page, then mirrors of every tenth page, then a re-crawl.
    let mirrors = pages.iter().step_by(10).map(|p| Document {
        id: format!("{}#mirror", p.id),
        url: Some(format!("https://mirror.example.net/{}", p.id)),
        ..p.clone()
    });
    let recrawl = pages.iter().take(30).cloned();
    let frontier: Vec<Document> = pages
        .iter()
        .cloned()
        .chain(mirrors)
        .chain(recrawl)
        .collect();

    let (mut new, mut exact, mut near) = (0u64, 0u64, 0u64);
    let mut distances: BTreeMap<u32, u64> = BTreeMap::new();
    for page in &frontier {
        // The store's quality mode (standard, the default): candidates from its tables and
        // its sketch bands, kept when the texts' shingle sketches agree.
        match store.check_and_insert(page, Rule::Mode) {
            Ok(CheckOutcome::New { .. }) => new += 1,
            Ok(CheckOutcome::ExactDuplicate { .. }) => exact += 1,
            Ok(CheckOutcome::NearDuplicate { of, distance, .. }) => {
                near += 1;
                *distances.entry(distance).or_default() += 1;
                if near <= 5 {
                    println!("  {} repeats {of} (distance {distance})", page.id);
                }
            }
            Ok(other) => println!("  {}: {other:?}", page.id),
            // A page with nothing to fingerprint is the crawler's problem, not a reason to stop.
            Err(e) => eprintln!("  {}: {e}", page.id),
        }
    }
    println!(
        "crawled {} pages: {new} new (stored), {exact} exact duplicates, {near} near duplicates (the {} mode)",
        frontier.len(),
        store.quality()
    );
    println!("near duplicates by distance: {distances:?}");
    if keep {
        println!(
            "the store at {} holds {} pages",
            path.display(),
            store.len()
        );
    } else {
        println!(
            "the store held {} pages (a temporary one, deleted now; give a second argument, a path, to keep it)",
            store.len()
        );
    }
    Ok(())
}
