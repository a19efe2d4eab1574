//! Articles in languages other than English and Chinese are compared by their bodies: a
//! short heading above a body in German, French, Spanish, Polish, Turkish, Finnish, Hindi
//! or Russian once
//! made the cleaner take the body for chrome (its English stop words were all it knew), so
//! every article under one heading got the heading's fingerprint and all but one were
//! dropped as exact duplicates.

use crate::util::{TestCommand, checked, stderr};

/// Two different articles in each language (hand-written), each as a heading line over
/// one paragraph.
const ARTICLES: &[(&str, &str)] = &[
    (
        "Nachrichten",
        "Der Stadtrat hat am Montag beschlossen, die alte Brücke über den Fluss bis zum Herbst zu sanieren. Die Kosten werden auf drei Millionen Euro geschätzt, und die Arbeiten sollen im Mai beginnen.",
    ),
    (
        "Nachrichten",
        "Im Hafen der Stadt legte gestern ein Forschungsschiff an, das zwei Jahre lang das Eis der Arktis vermessen hat. Die Mannschaft berichtete von dünnerem Eis und von Stürmen, wie sie niemand erwartet hatte.",
    ),
    (
        "Actualités",
        "Le conseil municipal a voté mardi un plan pour planter des arbres dans toutes les écoles de la ville. Les travaux commenceront au printemps et seront financés par une taxe sur les parkings.",
    ),
    (
        "Actualités",
        "Une exposition consacrée aux peintres du siècle dernier ouvre ses portes samedi au musée des beaux-arts. Les visiteurs pourront y voir des toiles prêtées par des collectionneurs privés du monde entier.",
    ),
    (
        "Noticias",
        "El ayuntamiento anunció ayer que las bibliotecas públicas abrirán también los domingos a partir del próximo mes. La medida responde a la demanda de los estudiantes que preparan sus exámenes.",
    ),
    (
        "Noticias",
        "Un equipo de arqueólogos ha descubierto en el norte del país los restos de una ciudad romana que nadie conocía. Los trabajos continuarán durante el verano con la ayuda de voluntarios de varias universidades.",
    ),
    (
        "Wiadomości",
        "Rada miasta zdecydowała w poniedziałek, że nowy most przez rzekę zostanie zbudowany do końca przyszłego roku. Koszt inwestycji oszacowano na sto milionów złotych, a prace mają ruszyć jesienią.",
    ),
    (
        "Wiadomości",
        "W lesie pod miastem naukowcy znaleźli gatunek grzyba, którego nie opisano dotąd w żadnej książce. Badacze chcą teraz sprawdzić, czy nie zagraża on drzewom rosnącym w całym regionie.",
    ),
    (
        "Haberler",
        "Belediye meclisi pazartesi günü şehirdeki eski köprünün sonbahara kadar onarılmasına karar verdi. Onarımın maliyetinin üç milyon lira olacağı tahmin ediliyor ve çalışmalar mayıs ayında başlayacak.",
    ),
    (
        "Haberler",
        "Üniversitenin araştırmacıları denizdeki plastik atıkları toplayan küçük bir robot geliştirdiklerini açıkladılar. Robotun ilk denemeleri önümüzdeki yaz limanda yapılacak ve sonuçlar yıl sonunda yayımlanacak.",
    ),
    (
        "Uutiset",
        "Kaupunginvaltuusto päätti maanantaina korjata vanhan sillan joen yli syksyyn mennessä. Korjauksen kustannuksiksi arvioidaan kolme miljoonaa euroa, ja työt alkavat toukokuussa.",
    ),
    (
        "Uutiset",
        "Tutkijat löysivät järven pohjasta hylyn, jonka uskotaan olevan yli kolmesataa vuotta vanha kauppalaiva. Sukeltajat jatkavat tutkimuksia kesällä, kun vesi on lämpimämpää ja näkyvyys parempi.",
    ),
    // Scripts whose function words the cleaner does not know, with their own full stops.
    (
        "समाचार",
        "नगर परिषद ने सोमवार को नदी पर बने पुराने पुल की मरम्मत शरद ऋतु तक करने का निर्णय लिया। इस काम पर तीन करोड़ रुपये खर्च होने का अनुमान है और काम मई में शुरू होगा।",
    ),
    (
        "समाचार",
        "विश्वविद्यालय के शोधकर्ताओं ने समुद्र से प्लास्टिक कचरा इकट्ठा करने वाला एक छोटा रोबोट बनाया है। इसका पहला परीक्षण अगली गर्मियों में बंदरगाह पर किया जाएगा।",
    ),
    (
        "Новости",
        "Городской совет в понедельник решил отремонтировать старый мост через реку до осени. Стоимость работ оценивается в три миллиона рублей, а начнутся они в мае.",
    ),
    (
        "Новости",
        "Учёные нашли на дне озера обломки торгового судна, которому, по их оценкам, больше трёхсот лет. Водолазы продолжат исследования летом, когда вода станет теплее.",
    ),
];

/// The JSONL of the articles (ids `a0`.., title and text), and of `copies`: article `i`'s
/// text again under another id with a view counter line added, a copy to catch.
fn records(copies: &[usize]) -> String {
    let mut out = String::new();
    let mut push = |id: String, text: String| {
        let v = serde_json::json!({"id": id, "text": text});
        out.push_str(&v.to_string());
        out.push('\n');
    };
    for (i, (heading, body)) in ARTICLES.iter().enumerate() {
        push(format!("a{i}"), format!("{heading}\n{body}"));
    }
    for &i in copies {
        let (heading, body) = ARTICLES[i];
        push(format!("copy{i}"), format!("{heading}\n{body}\n1234 views"));
    }
    out
}

#[test]
fn articles_under_one_heading_are_told_apart_in_every_language() {
    let t = TestCommand::new();
    let file = t.path("news.jsonl");
    std::fs::write(&file, records(&[1, 8, 13])).unwrap();
    // Fingerprints: every two different articles far apart.
    let o = checked(t.run(&["fingerprint", "--batch", file.to_str().unwrap()]));
    let fps: Vec<u64> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            u64::from_str_radix(v["fp"].as_str().unwrap(), 16).unwrap()
        })
        .collect();
    let n = ARTICLES.len();
    for i in 0..n {
        for j in i + 1..n {
            let d = (fps[i] ^ fps[j]).count_ones();
            assert!(d > 12, "articles {i} and {j}: {d} bits apart");
        }
    }
    // A store keeps every article and catches the two copies.
    let o = checked(t.run(&["import", "--dedup", file.to_str().unwrap()]));
    let dups = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(dups.lines().count(), 3, "{dups}\n{}", stderr(&o));
    assert!(
        ["copy1", "copy8", "copy13"]
            .iter()
            .all(|c| dups.contains(c)),
        "{dups}"
    );
    let o = checked(t.run(&["stats", "--json"]));
    let stats: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(stats["docs"], n as u64);
}
