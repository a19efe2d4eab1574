//! Bytes → text: charset detection and decoding for byte input (files, web pages, WARC
//! bodies), the first step of the "reader" stage.
//!
//! The order of evidence is the one browsers use: a byte-order mark; then the charset the
//! caller was told (an HTTP `Content-Type` header, a `<meta charset>` found by
//! [`crate::input::html`]); then valid UTF-8 is UTF-8; then [`chardetng`] guesses (it tells GBK /
//! GB18030, Big5, Shift_JIS, EUC-KR, windows-125x... apart by their byte statistics).
//! Decoding is done by [`encoding_rs`] (the WHATWG Encoding Standard): malformed
//! sequences become U+FFFD instead of failing.

use encoding_rs::Encoding;

/// Why bytes could not be taken as text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input holds NUL bytes outside a UTF-16 text: it is binary data.
    #[error(
        "binary data (a NUL byte at offset {offset}), not text: give text or HTML in a known charset"
    )]
    Binary {
        /// Offset of the first NUL byte.
        offset: usize,
    },
}

/// Decoded text and the encoding it was decoded from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The text.
    pub text: String,
    /// The WHATWG name of the encoding used (`UTF-8`, `GBK`, `gb18030`, `Big5`, ...).
    pub encoding: &'static str,
}

/// Looks up a charset label (`utf-8`, `gb2312`, `GBK`, `big5`, `x-gbk`, ...) as the WHATWG
/// Encoding Standard does. `None` for unknown labels.
pub fn encoding_for_label(label: &str) -> Option<&'static Encoding> {
    Encoding::for_label_no_replacement(label.trim().trim_matches(['"', '\'']).as_bytes())
}

/// Decodes `bytes` to text. `hint` is a declared charset label (from an HTTP header or a
/// `<meta>` tag); an unknown label is ignored. Errors only for binary data.
pub fn decode(bytes: &[u8], hint: Option<&str>) -> Result<Decoded, Error> {
    if let Some((encoding, bom_len)) = Encoding::for_bom(bytes) {
        return Ok(decode_with(encoding, &bytes[bom_len..]));
    }
    if let Some(offset) = bytes.iter().position(|&b| b == 0) {
        return Err(Error::Binary { offset });
    }
    if let Some(encoding) = hint.and_then(encoding_for_label) {
        // A declared single-byte or legacy charset over bytes that are valid, non-ASCII
        // UTF-8 is almost always a wrong declaration (pages converted to UTF-8 without
        // updating their <meta>): trust the bytes.
        if encoding != encoding_rs::UTF_8 && !bytes.is_ascii() && std::str::from_utf8(bytes).is_ok()
        {
            return Ok(decode_with(encoding_rs::UTF_8, bytes));
        }
        return Ok(decode_with(encoding, bytes));
    }
    if std::str::from_utf8(bytes).is_ok() {
        return Ok(decode_with(encoding_rs::UTF_8, bytes));
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(bytes, true);
    Ok(decode_with(
        detector.guess(None, chardetng::Utf8Detection::Deny),
        bytes,
    ))
}

fn decode_with(encoding: &'static Encoding, bytes: &[u8]) -> Decoded {
    let (text, _) = encoding.decode_without_bom_handling(bytes);
    Decoded {
        text: text.into_owned(),
        encoding: encoding.name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZH: &str = "今天北京的天气很好，我们去公园散步，看到很多人在跑步和放风筝。这家酒店的服务非常周到，房间干净整洁，早餐也很丰富。";
    const ZH_TW: &str = "今天臺北的天氣很好，我們去公園散步，看到很多人在跑步和放風箏。這家飯店的服務非常周到，房間乾淨整潔，早餐也很豐富。";

    fn encode(encoding: &'static Encoding, text: &str) -> Vec<u8> {
        let (bytes, _, unmappable) = encoding.encode(text);
        assert!(!unmappable);
        bytes.into_owned()
    }

    #[test]
    fn utf8_and_bom() {
        let d = decode(ZH.as_bytes(), None).unwrap();
        assert_eq!((d.text.as_str(), d.encoding), (ZH, "UTF-8"));
        let mut bom = vec![0xEF, 0xBB, 0xBF];
        bom.extend_from_slice(ZH.as_bytes());
        assert_eq!(decode(&bom, None).unwrap().text, ZH);
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(ZH.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(decode(&utf16, None).unwrap().text, ZH);
    }

    #[test]
    fn detects_gbk_and_big5_without_a_hint() {
        let gbk = encode(encoding_rs::GBK, ZH);
        let d = decode(&gbk, None).unwrap();
        assert_eq!(d.text, ZH);
        assert!(
            d.encoding == "GBK" || d.encoding == "gb18030",
            "{}",
            d.encoding
        );
        let big5 = encode(encoding_rs::BIG5, ZH_TW);
        let d = decode(&big5, None).unwrap();
        assert_eq!((d.text.as_str(), d.encoding), (ZH_TW, "Big5"));
    }

    #[test]
    fn hints_are_followed_unless_the_bytes_are_utf8() {
        let gbk = encode(encoding_rs::GBK, ZH);
        assert_eq!(decode(&gbk, Some("gb2312")).unwrap().text, ZH);
        assert_eq!(decode(&gbk, Some("\"GBK\"")).unwrap().encoding, "GBK");
        // A page converted to UTF-8 that still declares gb2312.
        assert_eq!(decode(ZH.as_bytes(), Some("gb2312")).unwrap().text, ZH);
        // Unknown labels are ignored.
        assert_eq!(decode(&gbk, Some("no-such-charset")).unwrap().text, ZH);
    }

    #[test]
    fn binary_is_an_error() {
        assert_eq!(decode(b"abc\0def", None), Err(Error::Binary { offset: 3 }));
    }
}
