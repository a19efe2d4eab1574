//! A crawler's listing pages must not merge: pages of one site that share a heading and an
//! intro and differ only in their lists of links (which the HTML reader leaves out of the
//! main text) are each new to a store of the default quality mode, while an article and its
//! copy on another site, each with a short list of related links, are still one page. Both
//! through the library (memory and RocksDB stores) and through `import --dedup`.

use simstore::read::parse_html;
use simstore::{CheckOutcome, Document, Rule, Store, StoreBuilder};

use crate::util::{BACKENDS, TestCommand, answer, http, store_builder};

/// A deterministic stream of English words, a stop word between every two or three others,
/// so that no two link lists or articles share more than chance.
struct Words(u64);

/// The words the texts are made of.
const VOCABULARY: &str = "harbour boat storm river city market council school teacher \
    doctor garden winter summer island bridge tower village farmer engine train station \
    letter window mountain forest valley office mayor budget report festival music painter \
    museum library student village kitchen bakery bread coffee morning evening journey \
    captain sailor lighthouse fisher net rope anchor island cliff beach wave tide moon \
    rain snow wind cloud field orchard apple cherry horse cattle meadow fence road \
    lorry driver factory worker union strike wage price shop street corner square park \
    bench fountain statue church bell clock tower poet novel chapter reader critic stage \
    actor theatre ticket crowd player match goal season league coach trophy medal runner \
    swimmer pool bicycle helmet camera picture film screen radio signal engineer machine \
    opened closed built found lost carried painted wrote sold bought crossed climbed";

impl Words {
    fn word(&mut self) -> String {
        const STOP: [&str; 8] = ["the", "of", "and", "to", "in", "a", "with", "on"];
        let vocabulary: Vec<&str> = VOCABULARY.split_whitespace().collect();
        let n = self.next() as usize;
        match n % 3 {
            0 => STOP[(n / 3) % STOP.len()].to_owned(),
            _ => vocabulary[(n / 3) % vocabulary.len()].to_owned(),
        }
    }

    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn words(&mut self, n: usize) -> String {
        (0..n).map(|_| self.word()).collect::<Vec<_>>().join(" ")
    }

    /// An unmarked list of `n` links of 3-6 words.
    fn links(&mut self, n: usize) -> String {
        let items: String = (0..n)
            .map(|i| {
                let len = 3 + (self.next() % 4) as usize;
                format!("<li><a href=\"/p/{i}\">{}</a></li>", self.words(len))
            })
            .collect();
        format!("<ul>{items}</ul>")
    }
}

/// A page of site `site`'s template: a menu, the heading, the paragraphs, then `after`.
fn page(site: usize, heading: &str, paragraphs: &[String], after: &str) -> String {
    let body: String = paragraphs.iter().map(|p| format!("<p>{p}</p>")).collect();
    format!(
        "<!doctype html><html><head><title>{heading}</title></head><body>\
         <nav><a href=\"/\">Home</a> <a href=\"/news\">News</a> <a href=\"/about\">Site {site}</a></nav>\
         <h1>{heading}</h1>{body}{after}<footer>Copyright site {site}</footer></body></html>"
    )
}

/// A page's document as a crawler gives it: main text, title, and what the reader left out.
fn document(id: &str, raw: &str, with_left_out: bool) -> Document {
    let p = parse_html(raw);
    let doc = Document::new(id, p.text).with_title(p.title.unwrap_or_default());
    match with_left_out {
        true => doc.with_left_out(p.left_out),
        false => doc,
    }
}

/// Twelve listing pages of one intro, each with its own 20 links.
fn listing_pages(w: &mut Words) -> Vec<(String, String)> {
    let intro = vec![w.words(25)];
    (0..12)
        .map(|i| {
            (
                format!("list-{i}"),
                page(1, "All the stories", &intro, &w.links(20)),
            )
        })
        .collect()
}

/// Four articles of 160 words and their copies on another site, each page with six related
/// links of its own: (id of the article, its page, the copy's page).
fn articles(w: &mut Words) -> Vec<(String, String, String)> {
    (0..4)
        .map(|i| {
            let heading = w.words(5);
            let text: Vec<String> = (0..4).map(|_| w.words(40)).collect();
            let original = page(1, &heading, &text, &w.links(6));
            let copy = page(2, &heading, &text, &w.links(6));
            (format!("article-{i}"), original, copy)
        })
        .collect()
}

/// Checks every listing page and article, then every copy, into `store`: the listing
/// pages' and articles' outcomes, and per copy the id it was found a duplicate of.
fn crawl(store: &Store, with_left_out: bool) -> (Vec<CheckOutcome>, Vec<Option<String>>) {
    let mut w = Words(7);
    let (lists, arts) = (listing_pages(&mut w), articles(&mut w));
    let mut firsts = Vec::new();
    let originals = arts.iter().map(|(id, a, _)| (id.clone(), a.clone()));
    for (id, raw) in lists.iter().cloned().chain(originals) {
        let doc = document(&id, &raw, with_left_out);
        firsts.push(store.check_and_insert(&doc, Rule::Mode).unwrap());
    }
    let copies = arts
        .iter()
        .map(|(id, _, copy)| {
            let doc = document(&format!("{id}-copy"), copy, with_left_out);
            let out = store.check_and_insert(&doc, Rule::Mode).unwrap();
            out.duplicate_of().map(str::to_owned)
        })
        .collect();
    (firsts, copies)
}

fn assert_pages_apart(store: &Store) {
    let (firsts, copies) = crawl(store, true);
    for (i, out) in firsts.iter().enumerate() {
        assert!(out.is_new(), "page {i} was taken for a duplicate: {out:?}");
    }
    let expected: Vec<Option<String>> = (0..4).map(|i| Some(format!("article-{i}"))).collect();
    assert_eq!(copies, expected, "each copy is its article's duplicate");
}

/// A page's analysis as a store keeps it: title, main text and what the reader left out.
fn analyze(raw: &str) -> simstore::Analysis {
    let (f, p) = (simstore::Fingerprinter::new(), parse_html(raw));
    simstore::index::page::analyze_page(&f, p.title.as_deref(), &p.text, Some(&p.left_out)).unwrap()
}

/// Runs `check` on a new store of the default layout on each backend.
fn on_each_backend(check: fn(&Store)) {
    for backend in BACKENDS {
        let dir = tempfile::tempdir().unwrap();
        check(&store_builder(backend, dir.path()).open().unwrap());
    }
}

#[test]
fn listing_pages_stay_apart_and_copies_join() {
    on_each_backend(assert_pages_apart);
}

/// Each listing page, stored, finds itself when queried with its page, and its re-crawl
/// with a story added to its list is its duplicate — never another listing page of its
/// intro's (the rest of the pages decides, `index::page::rest_agrees`).
fn assert_listing_pages_find_themselves(store: &Store) {
    let lists = listing_pages(&mut Words(7));
    for (id, raw) in &lists {
        let out = store.check_and_insert(&document(id, raw, true), Rule::Mode);
        assert!(out.unwrap().is_new(), "{id}");
    }
    for (id, raw) in &lists {
        let doc = document(id, raw, true);
        let found: Vec<String> = (store.query(&doc, Rule::Mode).unwrap().into_iter())
            .map(|m| m.doc.id)
            .collect();
        assert_eq!(found, [id.as_str()], "{id} queried with its own page");
        let story = "<li><a href=\"/p/new\">The night the lighthouse went dark</a></li>";
        let recrawl = raw.replacen("<ul>", &format!("<ul>{story}"), 1);
        let again = document(&format!("{id}-again"), &recrawl, true);
        let out = store.check_and_insert(&again, Rule::Mode).unwrap();
        assert_eq!(
            out.duplicate_of(),
            Some(id.as_str()),
            "{id} re-crawled: {out:?}"
        );
    }
}

#[test]
fn a_listing_page_finds_itself_and_its_recrawl() {
    on_each_backend(assert_listing_pages_find_themselves);
}

/// `explain --files` of a listing page and its re-crawl decides as the store does: near
/// duplicates; of two listing pages of one intro: not.
#[test]
fn explain_takes_a_listing_page_and_its_recrawl_not_a_sibling() {
    let lists = listing_pages(&mut Words(7));
    let t = TestCommand::new();
    let story = "<li><a href=\"/p/new\">The night the lighthouse went dark</a></li>";
    t.write("a.html", lists[0].1.as_bytes());
    t.write(
        "again.html",
        lists[0]
            .1
            .replacen("<ul>", &format!("<ul>{story}"), 1)
            .as_bytes(),
    );
    t.write("b.html", lists[1].1.as_bytes());
    assert!(t.run(&["init"]).status.success());
    assert!(explained_near(&t, "a.html", "again.html"), "the re-crawl");
    assert!(
        !explained_near(&t, "a.html", "b.html"),
        "another listing page"
    );
}

/// Two reports of one template, the same teams the other way round, each with one list of
/// most-read links in its `<article>`: their fingerprints are within `k` and their whole
/// pages agree, but the one's report is not in the other's page (`index::page::main_in_page`),
/// so both are new (`scripts/page_trials.py reports article 2`, records r15 and r50).
#[test]
fn reports_of_one_template_near_by_their_fingerprints_stay_apart() {
    const A: &str = "Fulham edged Liverpool 2-0 at Vicarage Road on Sunday. Goals from Robinson \
        and Wright settled the match before Wood pulled one back late on. The result lifts \
        Fulham to second in the table while Liverpool remain mid-table. Manager reaction and \
        full report to follow.";
    const B: &str = "Liverpool edged Fulham 3-1 at Anfield on Sunday. Goals from Walker and \
        Robinson settled the match before Clarke pulled one back late on. The result lifts \
        Liverpool to third in the table while Fulham remain mid-table. Manager reaction and \
        full report to follow.";
    const READ: [&str; 10] = [
        "Transfer deadline day live: every deal as it happens",
        "Manager sacked after run of five defeats",
        "Fans protest outside the ground over ticket prices",
        "Injury blow as striker ruled out for season",
        "Academy graduate signs first professional contract",
        "Stadium expansion plans approved by council",
        "Referee chief admits error in weekend decision",
        "Women's team reach cup final for first time",
        "Club confirms record profits for last season",
        "Former captain named new assistant coach",
    ];
    let links: String = (0..40)
        .map(|i| format!("<li><a href=\"/news/{i}\">{}</a></li>", READ[i % 10]))
        .collect();
    let report = |n: u32, text: &str| {
        format!(
            "<html><head><title>Match report {n}</title></head><body><nav><a href='/'>Home</a>\
             </nav><article><h1>Match report</h1><p>{text}</p><h3>Most read</h3><ul>{links}</ul>\
             </article></body></html>"
        )
    };
    let (a, b) = (report(15, A), report(50, B));
    let (x, y) = (analyze(&a), analyze(&b));
    let rule = simstore::Quality::Standard.rule(3);
    let d = x.fingerprint.distance(y.fingerprint);
    assert!(
        d <= rule.k,
        "the premise: the fingerprints are within k ({d})"
    );
    assert!(
        rule.accepts(d, x.sketch.as_ref(), y.sketch.as_ref()),
        "the premise: the pages agree"
    );
    let store = StoreBuilder::in_memory().open().unwrap();
    for (id, raw) in [("r15", &a), ("r50", &b)] {
        let out = store.check_and_insert(&document(id, raw, true), Rule::Mode);
        assert!(out.unwrap().is_new(), "{id}");
    }
}

/// The premise: by their main texts alone the listing pages are one page, so the test
/// above fails if the store stops reading what the reader left out.
#[test]
fn by_their_main_texts_alone_the_listing_pages_are_one() {
    let store = StoreBuilder::in_memory().open().unwrap();
    let (firsts, _) = crawl(&store, false);
    let joined = firsts[..12].iter().filter(|o| !o.is_new()).count();
    assert_eq!(joined, 11, "{firsts:?}");
}

/// The same through the command line: `import --dedup` of the pages as JSONL records with
/// an "html" field reports only the copies.
#[test]
fn import_dedup_reports_only_the_copies_of_pages() {
    let t = TestCommand::new();
    let mut w = Words(7);
    let (lists, arts) = (listing_pages(&mut w), articles(&mut w));
    let mut lines = Vec::new();
    let mut push = |id: String, raw: &str| {
        lines.push(serde_json::json!({"id": id, "html": raw}).to_string());
    };
    for (id, raw) in &lists {
        push(id.clone(), raw);
    }
    for (id, original, _) in &arts {
        push(id.clone(), original);
    }
    for (id, _, copy) in &arts {
        push(format!("{id}-copy"), copy);
    }
    let input = t.path("pages.jsonl");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let db = t.path("db");
    assert!(t.run_on(&db, &["init"]).status.success());
    let o = t.run_on(&db, &["import", "--dedup", input.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut reported: Vec<(String, String)> = (stdout.lines())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let field = |f: &str| v[f].as_str().unwrap().to_owned();
            (field("id"), field("duplicate_of"))
        })
        .collect();
    reported.sort_unstable();
    let expected: Vec<(String, String)> = (0..4)
        .map(|i| (format!("article-{i}-copy"), format!("article-{i}")))
        .collect();
    assert_eq!(reported, expected, "{stdout}");
}

/// Eight short articles of one site, each followed by the same long list of popular links
/// inside its content (so the reader leaves the list out and each page is compared by its
/// whole text): their whole texts are mostly that list, their main texts are not alike, and
/// no article is taken for another.
#[test]
fn articles_that_show_one_list_of_popular_links_stay_apart() {
    let mut w = Words(11);
    let popular = w.links(30);
    let pages: Vec<String> = (0..8)
        .map(|_| page(1, &w.words(5), &[w.words(35)], &popular))
        .collect();
    let f = simstore::Fingerprinter::new();
    let sketches: Vec<simstore::Sketch> = (pages.iter())
        .map(|raw| {
            let p = parse_html(raw);
            let a = simstore::index::page::analyze_page(&f, None, &p.text, Some(&p.left_out));
            a.unwrap().sketch.unwrap()
        })
        .collect();
    // The premise: by their sketches alone the mode's threshold (0.3) would take them.
    for (i, a) in sketches.iter().enumerate() {
        for b in &sketches[i + 1..] {
            assert!(
                a.whole_text() && a.similarity(b) > 0.4,
                "{}",
                a.similarity(b)
            );
        }
    }
    let store = StoreBuilder::in_memory().open().unwrap();
    for (i, raw) in pages.iter().enumerate() {
        let out = store.check_and_insert(&document(&format!("a{i}"), raw, true), Rule::Mode);
        assert!(out.unwrap().is_new(), "article {i} was taken for another");
    }
}

/// Over HTTP: `/check_and_insert` with the pages' `"html"` keeps every listing page and
/// answers each copy with its article.
#[test]
fn the_server_keeps_listing_pages_given_as_html() {
    let t = TestCommand::new();
    let s = t.serve(&[]);
    let h = http();
    let mut w = Words(7);
    let (lists, arts) = (listing_pages(&mut w), articles(&mut w));
    let check = |id: &str, raw: &str| {
        let body = serde_json::json!({"id": id, "html": raw});
        let (status, v) = answer(h.post(s.at("/check_and_insert")).send_json(body));
        assert_eq!(status, 200, "{v}");
        (
            v["status"].as_str().unwrap().to_owned(),
            v["of"].as_str().map(str::to_owned),
        )
    };
    for (id, raw) in &lists {
        assert_eq!(check(id, raw).0, "new", "{id}");
    }
    // A page queried as html is compared as it was stored: never as its group.
    let query = |body: serde_json::Value| {
        let (status, v) = answer(h.post(s.at("/query")).send_json(body));
        assert_eq!(status, 200, "{v}");
        let ids = v["matches"].as_array().unwrap().iter();
        ids.map(|m| m["id"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    for (id, raw) in &lists {
        let found = query(serde_json::json!({"html": raw}));
        assert!(found.iter().all(|f| f == id), "{id}: {found:?}");
    }
    for (id, original, copy) in &arts {
        assert_eq!(check(id, original).0, "new", "{id}");
        let found = query(serde_json::json!({"html": copy}));
        assert_eq!(found, [id.as_str()], "{id}-copy queried as html");
        let (status, of) = check(&format!("{id}-copy"), copy);
        assert_ne!(status, "new", "{id}-copy");
        assert_eq!(of.as_deref(), Some(id.as_str()));
    }
}

/// Two different match reports of one site, each followed inside its `<article>` by the
/// same list of most-read links: their whole pages share the list (their sketches would
/// take them, their fingerprints are within the mode's reach), their reports do not; a
/// store compares the main text too, and keeps both. `explain --files` says the same.
#[test]
fn reports_that_show_one_list_of_most_read_links_stay_apart() {
    const A: &str = "Newcastle beat Crystal Palace 3-1 at Molineux on Sunday. Goals from \
        Thompson and Jones settled the match before Johnson pulled one back late on. The \
        result lifts Newcastle to fourth in the table while Crystal Palace remain mid-table. \
        Manager reaction and full report to follow.";
    const B: &str = "Crystal Palace thrashed Newcastle 2-0 at Stamford Bridge on Sunday. Goals \
        from Robinson and Hughes settled the match before Harris pulled one back late on. The \
        result lifts Crystal Palace to twelfth in the table while Newcastle remain in the \
        relegation zone. Manager reaction and full report to follow.";
    let most_read = format!("<h3>Most read</h3>{}", Words(5).links(40));
    let report = |text: &str| {
        format!(
            "<html><body><article><h1>Match report</h1><p>{text}</p>{most_read}</article>\
             </body></html>"
        )
    };
    let (a, b) = (report(A), report(B));
    let (x, y) = (analyze(&a), analyze(&b));
    let rule = simstore::Quality::Standard.rule(3);
    let (xs, ys) = (x.sketch.unwrap(), y.sketch.unwrap());
    assert!(
        xs.whole_text(),
        "the pages are compared by their whole texts"
    );
    assert!(
        rule.accepts(x.fingerprint.distance(y.fingerprint), Some(&xs), Some(&ys)),
        "the premise: by their whole pages' sketches alone the mode takes them"
    );
    let store = StoreBuilder::in_memory().open().unwrap();
    for (id, raw) in [("a", &a), ("b", &b)] {
        let out = store
            .check_and_insert(&document(id, raw, true), Rule::Mode)
            .unwrap();
        assert!(out.is_new(), "{id}: {out:?}");
    }
    let t = TestCommand::new();
    t.write("a.html", a.as_bytes());
    t.write("b.html", b.as_bytes());
    assert!(t.run(&["init"]).status.success());
    assert!(!explained_near(&t, "a.html", "b.html"));
}

/// Whether `explain --json --files a b` in `t`'s store calls the two files near duplicates.
fn explained_near(t: &TestCommand, a: &str, b: &str) -> bool {
    let (a, b) = (t.path(a), t.path(b));
    let files = [a.to_str().unwrap(), b.to_str().unwrap()];
    let o = t.run(&["explain", "--json", "--files", files[0], files[1]]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["near_duplicates"]
        .as_bool()
        .unwrap_or_else(|| panic!("{v}"))
}
