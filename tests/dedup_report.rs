//! `dedup --report FILE.html`: the page holds the histograms and the sampled clusters with
//! their texts and marked differences, and renders in a real headless browser (Debian's
//! chromium) at a phone's width.

use std::path::Path;
use std::process::Command;

use crate::util::{TestCommand, code, gen_text, rng, stderr};

/// The headless browser: chromium (installed by .ci/run), or None after saying why.
fn browser() -> Option<&'static str> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    if found.is_none() {
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "0" && v != "false");
        let why = "skipping the browser check: chromium not found (apt-get install chromium)";
        assert!(!ci, "{why}");
        eprintln!("{why}");
    }
    found
}

/// Runs the browser headless on `page` with `args`.
fn headless(browser: &str, page: &Path, args: &[&str]) -> std::process::Output {
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap()
}

#[test]
fn the_report_shows_clusters_side_by_side_and_renders_in_a_browser() {
    let t = TestCommand::new();
    let mut r = rng(9);
    let mut recent = Vec::new();
    let lines: String = (0..400)
        .map(|i| {
            let text = gen_text(&mut r, &mut recent);
            format!(
                "{}\n",
                serde_json::json!({"id": format!("d{i}"), "text": text})
            )
        })
        .collect();
    t.write("in.jsonl", lines.as_bytes());
    let o = t.run(&[
        "dedup",
        "in.jsonl",
        "--report",
        "r.html",
        "-o",
        "kept.jsonl",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let html = std::fs::read_to_string(t.path("r.html")).unwrap();
    for part in [
        "Cluster sizes",
        "Distance to the representative",
        "Sketch similarity",
        "<mark>",
        "(largest)",
        "(random)",
        "name=\"viewport\"",
    ] {
        assert!(html.contains(part), "the report has {part:?}");
    }
    assert_eq!(
        html.matches("<section class=\"cluster\">").count(),
        20,
        "10 largest and 10 random"
    );
    assert!(
        !html.contains("http://") && !html.contains("https://") && !html.contains("<script"),
        "self-contained"
    );
    let o = t.run(&["dedup", "in.jsonl", "--report", "in.jsonl"]);
    assert!(
        code(&o) == 2 && stderr(&o).contains("an input or the --output"),
        "{}",
        stderr(&o)
    );
    let Some(browser) = browser() else {
        return;
    };
    let page = t.path("r.html");
    let dom = headless(browser, &page, &["--dump-dom"]);
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert_eq!(
        dom.matches("class=\"cluster\"").count(),
        20,
        "rendered: {}",
        &dom[..dom.len().min(500)]
    );
    assert!(dom.contains("class=\"member rep\""));
    let shot = t.path("phone.png");
    let o = headless(
        browser,
        &page,
        &[
            "--window-size=390,844",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    let png = std::fs::read(&shot).unwrap_or_default();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "a screenshot: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}
