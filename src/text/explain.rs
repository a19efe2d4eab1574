//! Why a text has its fingerprint: the lines that count and the features that vote, with
//! their weights — the same computation as [`Fingerprinter::analyze`], kept in the open
//! (slower: for explaining one document, not for fingerprinting many).

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::text::fingerprint::Fingerprinter;
use crate::text::idf::IdfSource;
use crate::text::spec::TITLE_CAP;
use crate::text::tokens::{HanChars, for_each_token};
use crate::text::{analyze, clean, simhash, weight};
use crate::types::Fingerprint;

/// A feature of a document: a token and what it weighs.
#[derive(Debug, Clone, PartialEq)]
pub struct ExplainedFeature {
    /// The token (normalized: lowercase, NFKC; a Han word or one of its characters).
    pub token: String,
    /// Its feature hash.
    pub hash: u64,
    /// Its weight before the SimHash (term frequency and IDF, see `text::weight`).
    pub weight: f64,
    /// Its SimHash vote (fixed point, after the share limit).
    pub vote: u32,
    /// Its share of all votes, 0 to 1.
    pub share: f64,
}

/// What drove one document's fingerprint.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// The title as it counts (normalized, the site's name removed), if one was given.
    pub title: Option<String>,
    /// The normalized text's non-blank lines, each with its weight: 1 content, less for a
    /// short line inside the content, 0 for one dropped (boilerplate, header, footer).
    pub lines: Vec<(String, f32)>,
    /// The features, largest vote first (then by token).
    pub features: Vec<ExplainedFeature>,
    /// The fingerprint they make (equal to [`Fingerprinter::fingerprint`]'s).
    pub fingerprint: Fingerprint,
}

/// One feature's sums while the tokens pass.
struct Sums {
    token: String,
    idf: f32,
    body: f32,
    title: f32,
}

/// Explains the fingerprint `f` gives `title` and `text`.
///
/// Errors with [`Error::EmptyDocument`] when neither has a single token.
pub fn explain(f: &Fingerprinter, title: Option<&str>, text: &str) -> Result<Explanation> {
    let seed = f.spec().seed;
    let mut features: Vec<(u64, Sums)> = Vec::new();
    let mut index: HashMap<u64, usize> = HashMap::new();
    let (mut tokens, mut title_total, mut body_total) = (0usize, 0f32, 0f32);
    let mut tally = |token: &str, hash: u64, w: f32, is_title: bool| {
        tokens += 1;
        let i = *index.entry(hash).or_insert_with(|| {
            let idf = IdfSource::of(token).idf(hash);
            features.push((
                hash,
                Sums {
                    token: token.to_owned(),
                    idf,
                    body: 0.0,
                    title: 0.0,
                },
            ));
            features.len() - 1
        });
        let s = &mut features[i].1;
        if s.idf == 0.0 {
            return;
        }
        if is_title {
            s.title += w;
            title_total += w * s.idf;
        } else {
            s.body += w;
            body_total += w * s.idf;
        }
    };
    if let Some(t) = title {
        for_each_token(seed, Some(t), "", HanChars::Split, |t, h, w, _| {
            tally(t, h, w, true)
        });
    }
    for_each_token(seed, None, text, HanChars::Split, |t, h, w, _| {
        tally(t, h, w, false)
    });
    if tokens == 0 {
        return Err(Error::EmptyDocument);
    }
    let cap = TITLE_CAP * body_total;
    let scale = if body_total > 0.0 && title_total > cap {
        cap / title_total
    } else {
        1.0
    };
    features.retain(|(_, s)| s.idf > 0.0);
    if features.is_empty() {
        features = stop_words_only(seed, title, text);
    }
    let weighted: Vec<(u64, f64, String)> = features
        .into_iter()
        .map(|(h, s)| {
            (
                h,
                weight::feature_weight(s.body, s.title * scale, s.idf),
                s.token,
            )
        })
        .collect();
    let votes = weight::votes(|| weighted.iter().map(|(h, w, _)| (*h, *w)));
    let fingerprint = Fingerprint(simhash::simhash(&votes));
    Ok(Explanation {
        title: title.map(|t| clean::title(&analyze::normalize(t))),
        lines: lines(text),
        features: ranked(weighted, &votes),
        fingerprint,
    })
}

/// A document of stop words only: every token, the title's too, at IDF 1 in the body.
fn stop_words_only(seed: u64, title: Option<&str>, text: &str) -> Vec<(u64, Sums)> {
    let mut features: Vec<(u64, Sums)> = Vec::new();
    let mut index: HashMap<u64, usize> = HashMap::new();
    for (part_title, part_text) in [(title, ""), (None, text)] {
        for_each_token(
            seed,
            part_title,
            part_text,
            HanChars::Split,
            |t, h, w, _| {
                let i = *index.entry(h).or_insert_with(|| {
                    features.push((
                        h,
                        Sums {
                            token: t.to_owned(),
                            idf: 1.0,
                            body: 0.0,
                            title: 0.0,
                        },
                    ));
                    features.len() - 1
                });
                features[i].1.body += w;
            },
        );
    }
    features
}

/// The normalized text's non-blank lines and their weights.
fn lines(text: &str) -> Vec<(String, f32)> {
    let normalized = analyze::normalize(text);
    clean::weighted_lines(&normalized)
        .into_iter()
        .map(|(l, w)| (l.trim().to_owned(), w))
        .collect()
}

/// The features with their votes and shares, largest vote first.
fn ranked(weighted: Vec<(u64, f64, String)>, votes: &[(u64, u32)]) -> Vec<ExplainedFeature> {
    let total: u64 = votes.iter().map(|(_, v)| u64::from(*v)).sum();
    let mut out: Vec<ExplainedFeature> = weighted
        .into_iter()
        .zip(votes)
        .map(|((hash, weight, token), &(_, vote))| ExplainedFeature {
            token,
            hash,
            weight,
            vote,
            share: if total == 0 {
                0.0
            } else {
                vote as f64 / total as f64
            },
        })
        .collect();
    out.sort_by(|a, b| b.vote.cmp(&a.vote).then_with(|| a.token.cmp(&b.token)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXTS: &[(Option<&str>, &str)] = &[
        (
            None,
            "The rivers of the north run cold and clear in spring.",
        ),
        (
            Some("北京天气 - 新闻网"),
            "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。",
        ),
        (
            Some("A very long title about rivers and mountains"),
            "rivers",
        ),
        (None, "the and of to a in"),
        (Some("the"), "of and"),
        (
            None,
            "Home | News | Contact\nRain fell all night over the hills and the rivers rose by two metres before dawn.\nShort line\nThe valley farmers moved their flocks to the high meadows.\nCopyright 2024 Example Inc. All rights reserved.",
        ),
    ];

    #[test]
    fn the_explained_fingerprint_is_the_fingerprint() {
        let f = Fingerprinter::new();
        for &(title, text) in TEXTS {
            let e = explain(&f, title, text).unwrap();
            assert_eq!(e.fingerprint, f.fingerprint(title, text).unwrap(), "{text}");
        }
    }

    #[test]
    fn features_come_heaviest_first_with_shares_summing_to_one() {
        let f = Fingerprinter::new();
        let e = explain(&f, None, TEXTS[0].1).unwrap();
        assert!(e.features.windows(2).all(|w| w[0].vote >= w[1].vote));
        let sum: f64 = e.features.iter().map(|x| x.share).sum();
        assert!((sum - 1.0).abs() < 1e-9, "{sum}");
        assert!(e.features.iter().any(|x| x.token == "rivers"));
        assert!(
            !e.features.iter().any(|x| x.token == "the"),
            "a stop word votes"
        );
    }

    #[test]
    fn dropped_lines_weigh_nothing() {
        let e = explain(&Fingerprinter::new(), None, TEXTS[5].1).unwrap();
        let copyright = e
            .lines
            .iter()
            .find(|(l, _)| l.starts_with("copyright"))
            .unwrap();
        assert_eq!(copyright.1, 0.0, "{:?}", e.lines);
        assert!(
            e.lines
                .iter()
                .any(|(l, w)| l.starts_with("rain fell") && *w == 1.0)
        );
    }

    #[test]
    fn nothing_to_explain_is_an_empty_document() {
        let err = explain(&Fingerprinter::new(), None, " ... ").unwrap_err();
        assert!(matches!(err, Error::EmptyDocument));
    }
}
