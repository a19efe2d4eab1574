//! Deleting many documents at once: `Store::delete_many` against a model on every backend,
//! and `POST /delete` of `simstore serve` over real HTTP.

use std::collections::BTreeMap;

use rand::Rng;
use serde_json::json;
use simstore::{DocMeta, Fingerprint};

use crate::util::{BACKENDS, TestCommand, answer, brute_force, flip, http, new_store, rng, shape};

/// Random batches of present, missing and repeated ids: what stays is the model's, every
/// query answers as brute force over it, and `check` finds nothing wrong.
#[test]
fn delete_many_matches_a_model_on_every_backend() {
    for backend in BACKENDS {
        let dir = tempfile::tempdir().unwrap();
        let store = new_store(backend, dir.path(), 3, 6);
        let mut r = rng(42);
        let mut model: BTreeMap<String, u64> = BTreeMap::new();
        for i in 0..600 {
            let (id, fp) = (format!("doc-{i}"), r.random::<u64>() >> (i % 3));
            store
                .insert_fingerprint(&id, Fingerprint(fp), DocMeta::default())
                .unwrap();
            model.insert(id, fp);
        }
        for round in 0..20 {
            let ids: Vec<String> = (0..r.random_range(1..60))
                .map(|_| format!("doc-{}", r.random_range(0..700)))
                .collect();
            let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
            let found = store.delete_many(&refs).unwrap();
            let mut expected = Vec::new();
            for id in &ids {
                expected.push(model.remove(id).is_some());
            }
            assert_eq!(found, expected, "{backend:?}, round {round}");
            assert_eq!(store.len(), model.len() as u64, "{backend:?}");
        }
        let entries: Vec<(String, u64)> = model.iter().map(|(k, &v)| (k.clone(), v)).collect();
        for (i, (_, &fp)) in model.iter().take(60).enumerate() {
            let q = flip(&mut r, fp, i as u32 % 4);
            let mut got = shape(&store.query(Fingerprint(q), 3).unwrap());
            got.sort();
            assert_eq!(got, brute_force(&entries, q, 3), "{backend:?}");
        }
        assert!(store.check().unwrap().is_ok(), "{backend:?}");
    }
}

#[test]
fn post_delete_removes_many_ids_at_once() {
    let t = TestCommand::new();
    let s = t.serve(&[]);
    let h = http();
    for i in 0..5 {
        let doc = json!({"id": format!("p{i}"), "fp": format!("{:016x}", i * 0x1111)});
        let (st, v) = answer(h.post(s.at("/insert")).send_json(&doc));
        assert_eq!(st, 200, "{v}");
    }
    let body = json!({"ids": ["p1", "p3", "nope", "p1"]});
    let (st, v) = answer(h.post(s.at("/delete")).send_json(&body));
    assert_eq!((st, v), (200, json!({"deleted": 2, "missing": ["nope"]})));
    for (id, status) in [("p1", 404), ("p3", 404), ("p0", 200), ("p4", 200)] {
        let (st, _) = answer(h.get(s.at(&format!("/docs/{id}"))).call());
        assert_eq!(st, status, "{id}");
    }
    let (st, v) = answer(h.get(s.at("/stats")).call());
    assert_eq!((st, v["docs"].as_u64()), (200, Some(3)));

    // Refusals do nothing and say why.
    let too_many: Vec<String> = (0..10_001).map(|i| format!("p{}", i % 5)).collect();
    let (st, v) = answer(
        h.post(s.at("/delete"))
            .send_json(json!({ "ids": too_many })),
    );
    assert_eq!(st, 400, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("at most 10000"),
        "{v}"
    );
    let (st, v) = answer(
        h.post(s.at("/delete"))
            .send_json(json!({"ids": ["p0"], "k": 3})),
    );
    assert_eq!(st, 400, "{v}");
    assert!(
        v["error"].as_str().unwrap().contains("unknown field `k`"),
        "{v}"
    );
    let (st, v) = answer(h.post(s.at("/delete")).send_json(json!({"ids": "p0"})));
    assert_eq!(st, 400, "{v}");
    let (st, v) = answer(h.get(s.at("/stats")).call());
    assert_eq!((st, v["docs"].as_u64()), (200, Some(3)), "nothing deleted");
    let (st, v) = answer(h.post(s.at("/delete")).send_json(json!({"ids": []})));
    assert_eq!((st, v), (200, json!({"deleted": 0, "missing": []})));
    drop(s);
    let o = t.run(&["check"]);
    assert_eq!(o.status.code(), Some(0), "{}", crate::util::stderr(&o));
}

#[test]
fn post_delete_needs_the_token() {
    let t = TestCommand::new();
    let token = t.write("token", b"tok-123\n");
    let s = t.serve(&["--token-file", token.to_str().unwrap()]);
    let h = http();
    let doc = json!({"id": "a", "fp": "00000000000000ff"});
    let auth = "Bearer tok-123";
    let (st, _) = answer(
        h.post(s.at("/insert"))
            .header("authorization", auth)
            .send_json(&doc),
    );
    assert_eq!(st, 200);
    let body = json!({"ids": ["a"]});
    let (st, _) = answer(h.post(s.at("/delete")).send_json(&body));
    assert_eq!(st, 401);
    let (st, v) = answer(
        h.post(s.at("/delete"))
            .header("authorization", auth)
            .send_json(&body),
    );
    assert_eq!((st, v), (200, json!({"deleted": 1, "missing": []})));
}
