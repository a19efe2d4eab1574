#!/usr/bin/env python3
"""Trials of how a store compares web pages compared whole (docs/quality.md).

    scripts/page_trials.py recrawls CORPUS.jsonl OUT.jsonl
        For every listing page of a corpus of scripts/gen_dedup_corpus_html.py, three
        re-crawls: a link of another page added at the top of its list (`add`), its last
        link gone (`drop`), three links replaced by other pages' (`swap3`); ids `ID~TAG`.
    scripts/page_trials.py score-recrawls QUERIES.jsonl
        Counts, per kind of re-crawl, the `simstore query --batch` answers that hold its
        own page (`own`, `own+others`), only others (`other`) or nothing (`none`).
    scripts/page_trials.py reports WHERE SEED OUT.jsonl
        60 templated match reports of one site, each followed by one list of most-read
        links inside its <article> (WHERE = article), in an <aside> (aside) or not at all
        (none): `dedup --against` of them says how many different reports join.
"""
import collections
import json
import random
import re
import sys


def recrawls(corpus, out_path):
    rng = random.Random(11)
    pages = [json.loads(line) for line in open(corpus, encoding="utf-8")]
    listing = [r for r in pages if r.get("kind") == "listing"]
    items = [li for r in listing for li in re.findall(r"<li>.*?</li>", r["html"])]
    with open(out_path, "w", encoding="utf-8") as out:
        for r in listing:
            html, lis = r["html"], re.findall(r"<li>.*?</li>", r["html"])
            if len(lis) < 6:
                continue
            swapped = html
            for li in rng.sample(lis, 3):
                swapped = swapped.replace(li, rng.choice(items), 1)
            variants = {
                "add": html.replace(lis[0], rng.choice(items) + lis[0], 1),
                "drop": html.replace(lis[-1], "", 1),
                "swap3": swapped,
            }
            for tag, v in variants.items():
                out.write(json.dumps({"id": f"{r['id']}~{tag}", "html": v}) + "\n")


def score_recrawls(queries):
    counts = collections.Counter()
    for line in open(queries, encoding="utf-8"):
        r = json.loads(line)
        own, tag = r["query"].split("~")
        ids = [m["id"] for m in r["matches"]]
        if not ids:
            answer = "none"
        elif own in ids:
            answer = "own" if len(ids) == 1 else "own+others"
        else:
            answer = "other"
        counts[(tag, answer)] += 1
    for (tag, answer), n in sorted(counts.items()):
        print(f"{tag}\t{answer}\t{n}")


TEAMS = "Arsenal Chelsea Liverpool Everton Newcastle Fulham Brentford Burnley Watford Leeds \
Wolves Southampton Brighton Villa Forest Bournemouth".split()
VENUES = ["Anfield", "Molineux", "Goodison", "Craven Cottage", "Villa Park", "Elland Road",
          "Turf Moor", "Vicarage Road", "St James Park"]
PLAYERS = "Thompson Jones Johnson Robinson Hughes Harris Walker Wright Green Hall Wood Clarke \
Lewis Young King Scott".split()
PLACES = "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split()
HEADLINES = [
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
]


def report_text(rng):
    a, b = rng.sample(TEAMS, 2)
    p = rng.sample(PLAYERS, 3)
    verb = rng.choice(["beat", "edged", "thrashed", "overcame", "saw off", "dispatched"])
    day = rng.choice("Monday Tuesday Wednesday Saturday Sunday".split())
    stands = rng.choice(["mid-table", "in the relegation zone", "in the top half", "in tenth"])
    return (
        f"{a} {verb} {b} {rng.randint(1, 5)}-{rng.randint(0, 1)} at {rng.choice(VENUES)} on "
        f"{day}. Goals from {p[0]} and {p[1]} settled the match before {p[2]} pulled one back "
        f"late on. The result lifts {a} to {rng.choice(PLACES)} in the table while {b} remain "
        f"{stands}. Manager reaction and full report to follow."
    )


def reports(where, seed, out_path):
    rng = random.Random(int(seed))
    links = "".join(f'<li><a href="/news/{i}">{t}</a></li>' for i, t in enumerate(HEADLINES * 4))
    most_read = f"<h3>Most read</h3><ul>{links}</ul>"
    with open(out_path, "w", encoding="utf-8") as out:
        for i in range(60):
            report = f"<h1>Match report</h1><p>{report_text(rng)}</p>"
            body = {
                "article": f"<article>{report}{most_read}</article>",
                "aside": f"<article>{report}</article><aside>{most_read}</aside>",
                "none": f"<article>{report}</article>",
            }[where]
            html = (f"<html><head><title>Match report {i}</title></head><body>"
                    f"<nav><a href='/'>Home</a></nav>{body}</body></html>")
            out.write(json.dumps({"id": f"r{i}", "html": html}) + "\n")


if __name__ == "__main__":
    commands = {"recrawls": recrawls, "score-recrawls": score_recrawls, "reports": reports}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    commands[sys.argv[1]](*sys.argv[2:])
