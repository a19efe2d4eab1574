//! Golden tests: exact fingerprints, segmentations and manifest bytes. If one of these
//! changes, every stored fingerprint changes meaning: bump the FingerprintSpec version
//! (or the format version) and say so in the CHANGELOG.

use simstore::store::codec::{self, Manifest};
use simstore::text::analyze;
use simstore::{FingerprintSpec, Fingerprinter, Layout};

#[test]
fn fingerprints_of_fixed_texts() {
    let f = Fingerprinter::new();
    let cases: &[(Option<&str>, &str, &str)] = &[
        (
            Some("北京天气"),
            "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。",
            "3c3e65769dfcbeec",
        ),
        (
            Some("北京天气"),
            "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。\n（来源：某某网  责任编辑：张三）",
            "3c3e65769dfcbeec",
        ),
        (
            None,
            "自然语言处理是人工智能领域中的一个重要方向。它研究能实现人与计算机之间用自然语言进行有效通信的各种理论和方法。",
            "f8b129adf0fc9a70",
        ),
        (
            Some("Local weather"),
            "The city council approved a new budget on Tuesday, adding funds for parks, libraries and road repairs across the northern districts.",
            "7a7fb7691fdd0ce4",
        ),
        (
            None,
            "ＦＵＬＬ－ＷＩＤＴＨ Text, mixed 中文 and English：２０２６年",
            "1bb630d7b6a443ee",
        ),
        // Spec v5's cleaning: a header and a footer line outside the content (weight 0),
        // "headline | headline" navigation, and a line of prose with few function
        // characters that stays content because it is written in clauses.
        (
            None,
            "热门推荐\n电池续航两天，屏幕清晰，拍照效果出色，售后响应迅速。\n暴风魔镜摔了一跤 | 西部世界的世界\n相关阅读",
            "c5c5539f19c85c7c",
        ),
    ];
    for &(title, text, want) in cases {
        assert_eq!(
            f.fingerprint(title, text).unwrap().to_string(),
            want,
            "{title:?} / {text}"
        );
    }
}

/// Cleaning (spec v3 and later): chrome, attribution, timestamps, counters and URLs around an
/// article do not move its fingerprint at all.
#[test]
fn cleaning_makes_page_chrome_irrelevant() {
    let f = Fingerprinter::new();
    let zh = "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。\n下午气温升到二十度，公园里的游客比上午多了不少，大家都很开心。";
    let zh_page = format!(
        "热门推荐\n首页 | 新闻 | 体育 | 娱乐 | 财经 | 科技\n2026-11-23 10:35  来源：某某新闻  阅读 28431  评论 4703\n{zh}\n分享到：微信 微博 QQ空间 | 收藏 | 打印\n转载自某某网，原文链接：http://news.example.com/2026/019093.html\n版权所有 © 2003-2026 某某网 | 京ICP证030173号\n暴风魔镜在激进的路上摔了一跤 | 想走进西部世界吗\n相关阅读"
    );
    assert_eq!(
        f.fingerprint(Some("北京天气"), zh).unwrap(),
        f.fingerprint(Some("北京天气 - 某某网"), &zh_page).unwrap()
    );
    let en = "The city council approved a new budget on Tuesday, adding funds for parks and libraries.\nRoad repairs across the northern districts will start in the spring, the mayor said.";
    let en_page = format!(
        "Home | World | Business | Sport | Weather | Contact us\nPublished Mar 22, 2020 10:35 | 135,375 views | 4302 comments\n{en}\nReposted from Example News. Original: https://www.example.com/2024/235098.html\nCopyright (c) 2026 Example Inc. All rights reserved."
    );
    assert_eq!(
        f.fingerprint(Some("Council approves budget"), en).unwrap(),
        f.fingerprint(Some("Council approves budget | Example News"), &en_page)
            .unwrap()
    );
}

/// Regression (spec v4): two different app descriptions inside one site's chrome got one
/// fingerprint. Their own lines, written in clauses but with few function characters, were
/// dropped as link lists, so only the shared chrome was left to fingerprint.
#[test]
fn descriptions_inside_shared_chrome_keep_their_own_lines() {
    let f = Fingerprinter::new();
    let page = |description: &str| {
        format!(
            "【广告】限时特惠！全场低至5折，点击立即抢购>>\n分享到：微信 微博 QQ空间 豆瓣\n{description}\n【广告】限时特惠！全场低至5折，点击立即抢购>>\n暴风魔镜在激进的路上摔了一"
        )
    };
    let a = page("航旅管家提供航班查询、机票预订、值机选座，实时航班动态提醒，机场贵宾休息室预约");
    let b = page("记账助手支持收支分类、预算提醒、多账户同步，月度报表清晰直观，数据加密云端备份");
    let distance = f
        .fingerprint(None, &a)
        .unwrap()
        .distance(f.fingerprint(None, &b).unwrap());
    assert!(distance > 3, "distance {distance}");
}

#[test]
fn normalization_makes_width_case_and_punctuation_irrelevant() {
    let f = Fingerprinter::new();
    let a = f
        .fingerprint(
            None,
            "ＦＵＬＬ－ＷＩＤＴＨ Text, mixed 中文 and English：２０２６年",
        )
        .unwrap();
    let b = f
        .fingerprint(None, "full-width text, MIXED 中文 AND english:2026年")
        .unwrap();
    assert_eq!(a, b);
    let c = f
        .fingerprint(
            Some("北京天气"),
            "今天北京的天气很好,我们去公园散步,看到很多人在跑步和放风筝!",
        )
        .unwrap();
    let d = f
        .fingerprint(
            Some("北京天气"),
            "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。",
        )
        .unwrap();
    assert_eq!(c, d);
}

#[test]
fn jieba_segmentation_of_fixed_sentences() {
    let cases: &[(&str, &[&str])] = &[
        // jieba's HMM is off (spec v3): "中出", not in the dictionary, stays two characters.
        (
            "我们中出了一个叛徒",
            &["我们", "中", "出", "了", "一个", "叛徒"],
        ),
        (
            "今天北京的天气很好",
            &["今天", "北京", "的", "天气", "很", "好"],
        ),
        ("南京市长江大桥", &["南京市", "长江大桥"]),
        (
            "自然语言处理是人工智能领域中的一个重要方向",
            &[
                "自然语言",
                "处理",
                "是",
                "人工智能",
                "领域",
                "中",
                "的",
                "一个",
                "重要",
                "方向",
            ],
        ),
        (
            "iPhone 15 发布会在加州举行",
            &["iphone", "15", "发布会", "在", "加州", "举行"],
        ),
    ];
    for &(text, want) in cases {
        assert_eq!(analyze::tokens(text), want, "{text}");
    }
}

#[test]
fn manifest_bytes_are_stable() {
    let m = Manifest {
        layout: Layout::new(3, 4).unwrap(),
        spec: FingerprintSpec::current(),
        created: 0,
        quality: simstore::Quality::Standard,
        bands: 2,
    };
    let bytes = codec::encode_manifest(&m);
    // Format 8 (the body of format 4: format 3's — format 2's with the number of leading
    // blocks after the widths — then the quality mode's byte; then the band tables).
    assert_eq!(&bytes[..12], b"SIMSTORE\0\0\0\x08");
    assert_eq!(
        bytes[bytes.len() - 2..],
        [0, 2],
        "the standard mode, 2 band tables"
    );
    assert_eq!(
        format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes)),
        MANIFEST_HASH,
        "{} bytes",
        bytes.len()
    );
}

const MANIFEST_HASH: &str = "e4c83b747e73931d";

/// Sketches of fixed texts (spec v9: Chinese by its characters' shingles, flagged in the
/// last byte; English by its words').
#[test]
fn sketches_of_fixed_texts() {
    let f = Fingerprinter::new();
    let cases: &[(Option<&str>, &str, bool, u64)] = &[
        (
            Some("北京天气"),
            "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。",
            true,
            11_359_102_269_536_990_891,
        ),
        (
            Some("Local weather"),
            "The city council approved a new budget on Tuesday, adding funds for parks, libraries and road repairs across the northern districts.",
            false,
            5_043_073_507_610_484_933,
        ),
    ];
    for &(title, text, han, hash) in cases {
        let s = f.sketch(title, text).unwrap();
        assert_eq!(s.han_chars(), han, "{text}");
        assert_eq!(xxhash_rust::xxh3::xxh3_64(&s.0), hash, "{text}");
    }
}
