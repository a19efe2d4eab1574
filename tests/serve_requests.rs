//! `simstore serve`: requests a normal client would not send (sent over raw TCP), and what
//! each endpoint says about a field it does not take.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::serve_limits::raw;
use crate::util::{TestCommand, answer, http};

/// A GET of `target` with the given header lines, its connection closed after the answer.
fn get(target: &str, headers: &str) -> Vec<u8> {
    format!("GET {target} HTTP/1.1\r\n{headers}Connection: close\r\n\r\n").into_bytes()
}

/// A POST of a document to /insert at `target` with the given header lines.
fn post(target: &str, headers: &str) -> Vec<u8> {
    let body = r#"{"id": "x", "text": "a page a browser should not be able to store"}"#;
    format!(
        "POST {target} HTTP/1.1\r\n{headers}Content-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Issue: the Host check accepted `127.0.0.1:80@evil.com`, a second Host header after a
/// loopback one, and an absolute request-target naming another host.
#[test]
fn hosts_that_only_look_like_loopback_are_refused() {
    let t = TestCommand::new();
    let s = t.serve(&[]);
    let port = s.addr().port();
    let refused = [
        get("/health", "Host: 127.0.0.1:80@evil.com\r\n"),
        get("/health", "Host: localhost@evil.com\r\n"),
        get("/health", "Host: localhost.evil.com\r\n"),
        get("/health", "Host: 127.0.0.1:80x\r\n"),
        get("/health", "Host: 127.0.0.1\r\nHost: evil.com\r\n"),
        get("http://evil.com/health", "Host: 127.0.0.1\r\n"),
        get(
            &format!("http://evil.com:{port}/health"),
            "Host: 127.0.0.1\r\n",
        ),
        post("http://evil.com/insert", "Host: 127.0.0.1\r\n"),
        post("/insert", "Host: 127.0.0.1:80@evil.com\r\n"),
        post("/insert", "Host: 127.0.0.1\r\nHost: evil.com\r\n"),
    ];
    for request in &refused {
        let got = raw(&s, request);
        let head = String::from_utf8_lossy(&request[..request.len().min(120)]);
        // hyper itself may refuse a malformed head (400); anything but a 2xx will do, and
        // the server's own refusal is 403.
        assert!(
            got.starts_with("HTTP/1.1 403") || got.starts_with("HTTP/1.1 400"),
            "{head:?} got {got}"
        );
        assert!(!got.starts_with("HTTP/1.1 2"), "{head:?}");
    }
    let (_, v) = answer(http().get(s.at("/stats")).call());
    assert_eq!(v["docs"], 0, "a refused request stored something");
    // The loopback forms are served, the absolute one too.
    for request in [
        get("/health", &format!("Host: 127.0.0.1:{port}\r\n")),
        get("/health", "Host: localhost\r\n"),
        get("/health", "Host: [::1]:80\r\n"),
        get(
            &format!("http://127.0.0.1:{port}/health"),
            &format!("Host: 127.0.0.1:{port}\r\n"),
        ),
    ] {
        let got = raw(&s, &request);
        assert!(
            got.starts_with("HTTP/1.1 200"),
            "{}: {got}",
            String::from_utf8_lossy(&request)
        );
    }
}

/// The field names an error lists after "expected one of" (serde's words).
fn listed(error: &str) -> BTreeSet<String> {
    let (_, list) = error
        .split_once("expected one of ")
        .unwrap_or_else(|| panic!("no list of fields in {error:?}"));
    // "`id`, `title`, ... `fp` at line 1 column 30": the names are between backticks.
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// Issue: an unknown field sent to /insert got an error listing `k` and `verify` as
/// allowed, which /insert then refused. Each endpoint lists its own fields, and takes
/// each one it lists.
#[test]
fn each_endpoint_lists_the_fields_it_takes() {
    let t = TestCommand::new();
    let s = t.serve(&[]);
    let h = http();
    let text =
        "The rivers of the north run cold and clear in spring, and the mountains keep their snow.";
    let doc = ["id", "title", "text", "html", "url", "fp"];
    let query = [
        "url", "id", "text", "title", "html", "fp", "k", "limit", "verify",
    ];
    let cases: [(&str, Vec<&str>, Value); 4] = [
        (
            "/insert",
            doc.to_vec(),
            json!({"id": "a", "text": text, "txt": 1}),
        ),
        (
            "/check_and_insert",
            [&doc[..], &["k", "verify"]].concat(),
            json!({"id": "a", "text": text, "txt": 1}),
        ),
        ("/query", query.to_vec(), json!({"text": text, "txt": 1})),
        (
            "/query/batch",
            query.to_vec(),
            json!([{"text": text, "txt": 1}]),
        ),
    ];
    for (path, fields, body) in cases {
        let (st, v) = answer(h.post(s.at(path)).send_json(&body));
        assert_eq!(st, 400, "{path}: {v}");
        let e = v["error"].as_str().unwrap();
        assert!(e.contains("unknown field `txt`"), "{path}: {e}");
        let want: BTreeSet<String> = fields.iter().map(|f| f.to_string()).collect();
        assert_eq!(listed(e), want, "{path}: {e}");
    }
    // /insert refuses `k` and `verify` by the same list, which names neither.
    for field in ["k", "verify"] {
        let mut body = json!({"id": "a", "text": text});
        body[field] = json!(1);
        let (st, v) = answer(h.post(s.at("/insert")).send_json(&body));
        assert_eq!(st, 400, "{v}");
        let e = v["error"].as_str().unwrap();
        assert!(e.contains(&format!("unknown field `{field}`")), "{e}");
        assert!(!listed(e).contains(field), "{e}");
    }
    // Every field /check_and_insert and /query list is taken.
    let (st, v) = answer(h.post(s.at("/check_and_insert")).send_json(json!({
        "id": "b", "title": "t", "text": text, "url": "https://e.com/b", "k": 3, "verify": 0.2
    })));
    assert_eq!(st, 200, "{v}");
    let (st, v) = answer(h.post(s.at("/query")).send_json(json!({
        "id": "q", "url": "https://e.com/q", "title": "t", "text": text, "k": 3, "limit": 5,
        "verify": 0.2
    })));
    assert_eq!(st, 200, "{v}");
}
