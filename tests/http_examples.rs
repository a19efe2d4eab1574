//! The HTTP examples of docs/http.md (its section "Serving crawlers over HTTP"), run in
//! order against a real `simstore serve` on a new store, as the page starts one: each answer
//! must be the one the page shows, so the examples cannot rot.
//!
//! Each `post`/`curl` line is read as a shell command (single-quoted bodies, `-X METHOD`,
//! `-d BODY`); what it shows is its comment, on the same line or the next: a leading status
//! (`# 400 {...}`, else 200), then a JSON answer, compared whole (`"…"` stands for any
//! value, `"time"` is any number), or, where the JSON is abridged with a bare `…`, the keys
//! it names; free text is checked for the metric names it quotes. A line of another kind
//! fails the test, so a new kind of example gets read too.

use serde_json::Value;

use crate::util::{TestCommand, http};

/// One example: the request and what docs/http.md says it answers.
#[derive(Debug)]
struct Example {
    line: String,
    method: String,
    path: String,
    body: Option<String>,
    shown: String,
}

/// The first ```sh block of docs/http.md's HTTP section.
fn http_block() -> Vec<String> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/http.md")).unwrap();
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Serving crawlers over HTTP"))
        .expect("docs/http.md has a section \"Serving crawlers over HTTP\"");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("the HTTP section has a ```sh block");
    block.lines().map(str::to_owned).collect()
}

/// `line` split as a shell would (whitespace, single and double quotes) up to an unquoted
/// `#`; the comment after it.
fn shell_words(line: &str) -> (Vec<String>, Option<String>) {
    let (mut words, mut word, mut quote, mut in_word) = (Vec::new(), String::new(), None, false);
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => (quote, in_word) = (Some(c), true),
            (None, '#') if !in_word => return (words, Some(line[i + 1..].trim().to_owned())),
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                }
                in_word = false;
            }
            (None, c) => (word, in_word) = (word + &c.to_string(), true),
        }
    }
    assert!(quote.is_none(), "unclosed quote in {line:?}");
    if in_word {
        words.push(word);
    }
    (words, None)
}

/// The examples of the block, in order.
fn examples() -> Vec<Example> {
    let lines = http_block();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let (words, comment) = shell_words(line);
        let Some(first) = words.first() else { continue };
        match first.as_str() {
            "post" | "curl" => {}
            "simstore" if words.iter().any(|w| w == "serve") => continue,
            "alias" => continue,
            w if w.starts_with("U=") => continue,
            _ => panic!("a docs/http.md example line this test cannot read: {line:?}"),
        }
        let shown = comment
            .or_else(|| {
                let next = lines.get(i + 1)?.trim_start();
                Some(next.strip_prefix('#')?.trim().to_owned())
            })
            .unwrap_or_default();
        out.push(request(line, &words, shown));
    }
    out
}

/// The request of a `post ...` or `curl ...` line.
fn request(line: &str, words: &[String], shown: String) -> Example {
    let mut method = (words[0] == "post").then(|| "POST".to_owned());
    let (mut path, mut body) = (None, None);
    let mut args = words[1..].iter();
    while let Some(a) = args.next() {
        match a.as_str() {
            "-s" => {}
            "-X" => method = args.next().cloned(),
            "-d" => body = args.next().cloned(),
            a if a.starts_with("$U/") => path = Some(a[2..].to_owned()),
            a => panic!("an argument this test cannot read: {a:?} in {line:?}"),
        }
    }
    Example {
        line: line.to_owned(),
        method: method.unwrap_or_else(|| "GET".into()),
        path: path.unwrap_or_else(|| panic!("no $U/PATH in {line:?}")),
        body,
        shown,
    }
}

/// Whether `answer` is what `shown` shows: `"…"` matches anything, `"time"` any number,
/// objects must have the same keys.
fn same(shown: &Value, answer: &Value, key: &str) -> bool {
    match (shown, answer) {
        (Value::String(s), _) if s == "…" => true,
        (_, Value::Number(_)) if key == "time" => true,
        (Value::Object(s), Value::Object(a)) => {
            s.len() == a.len()
                && s.iter()
                    .all(|(k, v)| a.get(k).is_some_and(|av| same(v, av, k)))
        }
        (Value::Array(s), Value::Array(a)) => {
            s.len() == a.len() && s.iter().zip(a).all(|(s, a)| same(s, a, key))
        }
        (s, a) => s == a,
    }
}

/// Checks one answer (`status`, `text`) against what docs/http.md shows.
fn check(e: &Example, status: u16, text: &str) {
    let shown = e.shown.as_str();
    let (want, rest) = match shown.split_once(' ') {
        Some((code, rest)) if code.len() == 3 && code.parse::<u16>().is_ok() => {
            (code.parse().unwrap(), rest)
        }
        _ => (200, shown),
    };
    assert_eq!(status, want, "{}\nanswered {text}", e.line);
    if rest.starts_with('{') {
        let answer: Value = serde_json::from_str(text)
            .unwrap_or_else(|_| panic!("{}: not a JSON answer: {text}", e.line));
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        match values.next() {
            Some(Ok(v)) => assert!(
                same(&v, &answer, ""),
                "{}\ndocs/http.md shows {v}\nthe server answers {answer}",
                e.line
            ),
            // Abridged with a bare `…`: the keys it names are in the answer.
            _ => {
                for key in rest.split('"').skip(1).step_by(2) {
                    let named = format!("\"{key}\":");
                    if rest.contains(&named) {
                        assert!(text.contains(&named), "{}: no {named} in {text}", e.line);
                    }
                }
            }
        }
    }
    for word in rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if word.starts_with("simstore_") {
            assert!(text.contains(word), "{}: no {word} in the answer", e.line);
        }
    }
}

#[test]
fn every_http_example_answers_what_the_page_shows() {
    let examples = examples();
    assert!(
        examples.len() >= 10,
        "the HTTP examples of docs/http.md were not found: {examples:#?}"
    );
    let t = TestCommand::new();
    let s = t.serve(&[]);
    let h = http();
    for e in &examples {
        let url = s.at(&e.path);
        let r = match (e.method.as_str(), &e.body) {
            ("POST", Some(body)) => h
                .post(&url)
                .header("content-type", "application/json")
                .send(body.as_str()),
            ("GET", None) => h.get(&url).call(),
            ("DELETE", None) => h.delete(&url).call(),
            _ => panic!("an example this test cannot send: {e:#?}"),
        };
        let r = r.unwrap();
        let status = r.status().as_u16();
        let text = r.into_body().read_to_string().unwrap();
        check(e, status, &text);
    }
}

#[test]
fn shell_words_read_quotes_and_comments() {
    let (w, c) = shell_words(r#"post $U/x -d '{"a": "b # c"}'   # 400 {"e":1}"#);
    assert_eq!(w, ["post", "$U/x", "-d", r#"{"a": "b # c"}"#]);
    assert_eq!(c.as_deref(), Some(r#"400 {"e":1}"#));
    let (w, c) = shell_words(r#"alias post='curl -s -H "Content-Type: application/json"'"#);
    assert_eq!(
        w,
        [
            "alias",
            r#"post=curl -s -H "Content-Type: application/json""#
        ]
    );
    assert_eq!(c, None);
}
