//! `simstore bench --check-insert`: `Store::check_and_insert` throughput, one thread and
//! many, against plain inserts of the same documents.

use std::time::Instant;

use anyhow::Result;
use simstore::{DocMeta, Fingerprint, Store};

use super::{Args, Code, Rng, new_store, work_dir};

/// `simstore bench --check-insert`: documents checked and inserted per second.
pub(super) fn run(args: &Args) -> Result<Code> {
    let n = args.n as usize;
    let k = args.k;
    let threads = args
        .threads
        .unwrap_or_else(rayon::current_num_threads)
        .max(1);
    let mut rng = Rng(args.seed);
    // (fingerprint, content hash): half new, a quarter exact and a quarter near copies.
    let mut docs: Vec<(u64, u128)> = Vec::with_capacity(n);
    for i in 0..n {
        let doc = match (i, rng.next() % 4) {
            (0, _) | (_, 0 | 1) => (rng.next(), u128::from(rng.next()) << 64 | i as u128),
            (_, 2) => docs[(rng.next() % i as u64) as usize],
            _ => {
                let (fp, _) = docs[(rng.next() % i as u64) as usize];
                let d = 1 + (rng.next() % u64::from(k.max(1))) as u32;
                (rng.flip(fp, d), u128::from(rng.next()) << 64 | i as u128)
            }
        };
        docs.push(doc);
    }
    let dir = work_dir(args)?;
    let fresh = |name: &str| new_store(&dir.join(name), args);
    let meta = |h: u128| DocMeta {
        content_hash: Some(h),
        ..DocMeta::default()
    };
    let check = |store: &Store, i: usize| {
        let (fp, h) = docs[i];
        store
            .check_and_insert(
                &simstore::Entry::new(format!("d{i}"), Fingerprint(fp), meta(h)),
                k,
            )
            .map(|o| o.is_new())
    };
    let layout = fresh("layout.db")?.layout().clone();
    println!(
        "simstore bench --check-insert: N = {n} (1/2 new, 1/4 exact, 1/4 near copies), k = {k}, layout {layout}, {threads} threads, {}",
        if args.sync {
            "every write fsynced (--sync)"
        } else {
            "writes not fsynced (the library's default)"
        }
    );
    // Baseline: plain inserts of every document, one per write.
    let store = fresh("insert.db")?;
    let t = Instant::now();
    for (i, &(fp, h)) in docs.iter().enumerate() {
        store.insert_fingerprint(&format!("d{i}"), Fingerprint(fp), meta(h))?;
    }
    let insert = t.elapsed().as_secs_f64();
    drop(store);
    // One thread.
    let store = fresh("one.db")?;
    let t = Instant::now();
    let mut new = 0usize;
    for i in 0..n {
        new += usize::from(check(&store, i)?);
    }
    let one = t.elapsed().as_secs_f64();
    drop(store);
    // Many threads, each taking every threads-th document.
    let store = fresh("many.db")?;
    let t = Instant::now();
    let new_many = std::thread::scope(|s| -> Result<usize> {
        let handles: Vec<_> = (0..threads)
            .map(|w| {
                let (store, check) = (&store, &check);
                s.spawn(move || -> simstore::Result<usize> {
                    let mut new = 0;
                    for i in (w..n).step_by(threads) {
                        new += usize::from(check(store, i)?);
                    }
                    Ok(new)
                })
            })
            .collect();
        let mut total = 0;
        for h in handles {
            total += h
                .join()
                .map_err(|_| anyhow::anyhow!("a bench thread panicked"))??;
        }
        Ok(total)
    })?;
    let many = t.elapsed().as_secs_f64();
    drop(store);
    println!("{:<40} {:>10} {:>14}", "method", "seconds", "docs/s");
    for (name, secs) in [
        ("insert_fingerprint, 1 thread (baseline)", insert),
        ("check_and_insert, 1 thread", one),
        (&*format!("check_and_insert, {threads} threads"), many),
    ] {
        println!("{name:<40} {secs:>10.2} {:>14.0}", n as f64 / secs);
    }
    println!(
        "stored {new} of {n} as new (1 thread), {new_many} ({threads} threads: the order differs, so near-duplicate chains may resolve differently)"
    );
    Ok(0)
}
