//! BERT's uncased WordPiece tokenizer, as the model's `tokenizer.json` describes it (HF
//! `BertNormalizer` with lowercasing and accent stripping, `BertPreTokenizer`, `WordPiece`):
//! text in, the model's token ids out. Checked id for id against the reference implementation
//! (tests/fixtures/embed).

use std::collections::HashMap;

use serde_json::Value;
use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// The words longer than this (in chars) are one unknown token, as the model was trained.
const MAX_WORD_CHARS: usize = 100;

#[derive(Debug)]
pub struct WordPiece {
    vocab: HashMap<String, u32>,
    unk: u32,
    pub cls: u32,
    pub sep: u32,
}

impl WordPiece {
    /// From a `tokenizer.json` of a BERT WordPiece model.
    pub fn from_json(doc: &Value) -> Result<WordPiece, String> {
        let model = &doc["model"];
        if model["type"] != "WordPiece" {
            return Err(format!(
                "the tokenizer is {}, not WordPiece",
                model["type"].as_str().unwrap_or("of no known type")
            ));
        }
        let vocab: HashMap<String, u32> = model["vocab"]
            .as_object()
            .ok_or("the tokenizer has no vocabulary")?
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), u32::try_from(v.as_u64()?).ok()?)))
            .collect();
        let id = |t: &str| {
            vocab
                .get(t)
                .copied()
                .ok_or_else(|| format!("the vocabulary has no {t}"))
        };
        Ok(WordPiece {
            unk: id("[UNK]")?,
            cls: id("[CLS]")?,
            sep: id("[SEP]")?,
            vocab,
        })
    }

    /// The ids of `text`: `[CLS]`, its word pieces (at most `max - 2`), `[SEP]`.
    pub fn encode(&self, text: &str, max: usize) -> Vec<u32> {
        let mut ids = vec![self.cls];
        let room = max.saturating_sub(1);
        'words: for word in pre_tokenize(&normalize(text)) {
            for id in self.pieces(&word) {
                if ids.len() >= room {
                    break 'words;
                }
                ids.push(id);
            }
        }
        ids.push(self.sep);
        ids
    }

    /// One word's pieces: the longest prefix in the vocabulary, then `##` pieces of the rest;
    /// the whole word unknown when some part of it has no piece.
    fn pieces(&self, word: &str) -> Vec<u32> {
        if word.chars().count() > MAX_WORD_CHARS {
            return vec![self.unk];
        }
        let mut out = Vec::new();
        let mut start = 0;
        let mut piece = String::new();
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while start < end {
                piece.clear();
                if start > 0 {
                    piece.push_str("##");
                }
                piece.push_str(&word[start..end]);
                if let Some(id) = self.vocab.get(&piece) {
                    found = Some(*id);
                    break;
                }
                end -= 1;
                while !word.is_char_boundary(end) {
                    end -= 1;
                }
            }
            match found {
                Some(id) => out.push(id),
                None => return vec![self.unk],
            }
            start = end;
        }
        out
    }
}

/// `BertNormalizer`: control characters dropped, whitespace made spaces, CJK ideographs set
/// apart, accents stripped (NFD, marks dropped), lower case.
pub fn normalize(text: &str) -> String {
    let mut cleaned = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if is_whitespace(c) {
            cleaned.push(' ');
        } else if is_cjk(c) {
            cleaned.push(' ');
            cleaned.push(c);
            cleaned.push(' ');
        } else {
            cleaned.push(c);
        }
    }
    cleaned
        .nfd()
        .filter(|c| get_general_category(*c) != GeneralCategory::NonspacingMark)
        .flat_map(char::to_lowercase)
        .collect()
}

/// `BertPreTokenizer`: words split at whitespace, each punctuation character a word of its own.
pub fn pre_tokenize(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if is_whitespace(c) {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
        } else if is_punctuation(c) {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            words.push(c.to_string());
        } else {
            word.push(c);
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
        || get_general_category(c) == GeneralCategory::SpaceSeparator
}

fn is_control(c: char) -> bool {
    if matches!(c, '\t' | '\n' | '\r') {
        return false;
    }
    matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::PrivateUse
            | GeneralCategory::Unassigned
    )
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(
            get_general_category(c),
            GeneralCategory::ConnectorPunctuation
                | GeneralCategory::DashPunctuation
                | GeneralCategory::OpenPunctuation
                | GeneralCategory::ClosePunctuation
                | GeneralCategory::InitialPunctuation
                | GeneralCategory::FinalPunctuation
                | GeneralCategory::OtherPunctuation
        )
}

/// The CJK Unified Ideographs blocks, as BERT's tokenizer lists them.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B820..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> WordPiece {
        let vocab: serde_json::Map<String, Value> = [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "hello", ",", "world",
            "!", "cafe", "中",
        ]
        .iter()
        .enumerate()
        .map(|(i, t)| (t.to_string(), Value::from(i)))
        .collect();
        WordPiece::from_json(
            &serde_json::json!({ "model": { "type": "WordPiece", "vocab": vocab } }),
        )
        .unwrap()
    }

    #[test]
    fn words_split_into_the_longest_pieces_and_unknown_ones_are_whole() {
        let wp = tiny();
        assert_eq!(wp.encode("unaffable", 64), [2, 4, 5, 6, 3]);
        assert_eq!(wp.encode("Hello,  WORLD!", 64), [2, 7, 8, 9, 10, 3]);
        assert_eq!(
            wp.encode("Café", 64),
            [2, 11, 3],
            "accents stripped, lower case"
        );
        assert_eq!(
            wp.encode("unaffx", 64),
            [2, 1, 3],
            "a word with no piece for a part"
        );
        assert_eq!(
            wp.encode("x中x", 64),
            [2, 1, 12, 1, 3],
            "an ideograph is a word"
        );
        assert_eq!(
            wp.encode("hello hello hello", 4),
            [2, 7, 7, 3],
            "cut to fit"
        );
        assert_eq!(wp.encode("", 64), [2, 3]);
        assert_eq!(wp.encode(&"a".repeat(101), 64), [2, 1, 3]);
        assert_eq!(
            wp.encode("\u{0}\u{200b}hello\u{7}", 64),
            [2, 7, 3],
            "controls dropped"
        );
    }
}
