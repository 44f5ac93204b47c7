//! `vault.generate`: passwords and passphrases from the OS's random source, each character or
//! word drawn uniformly (rejection sampling, no modulo bias), with the strength said in bits.
//!
//! Passphrases draw from the EFF's large word list (7,776 words, 12.9 bits each; by the
//! Electronic Frontier Foundation, CC BY 3.0 US: <https://www.eff.org/dice>), kept beside this
//! file as `eff_large_wordlist.txt`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

const WORDS: &str = include_str!("eff_large_wordlist.txt");

const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS: &str = "0123456789";
const SYMBOLS: &str = "!#$%&()*+,-./:;<=>?@[]^_{|}~";
/// Characters read one for another (`l` and `1`, `O` and `0` ...), left out when asked.
const AMBIGUOUS: &str = "Il1O0o|`'\"";

/// A character set a password draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CharSet {
    Lower,
    Upper,
    Digits,
    Symbols,
}

impl CharSet {
    fn chars(self) -> &'static str {
        match self {
            CharSet::Lower => LOWER,
            CharSet::Upper => UPPER,
            CharSet::Digits => DIGITS,
            CharSet::Symbols => SYMBOLS,
        }
    }
}

/// What to make: a password (the default) or a passphrase of words.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GenerateInput {
    /// `password` (default) or `passphrase`.
    #[serde(default)]
    pub kind: GenKind,
    /// A password's length (default 20).
    #[serde(default)]
    #[schemars(range(min = 8, max = 128))]
    pub length: Option<usize>,
    /// The sets a password draws from, each used at least once (default: all four).
    #[serde(default)]
    #[schemars(length(min = 1, max = 4))]
    pub sets: Option<Vec<CharSet>>,
    /// Leave out characters read one for another (`l 1 I`, `O 0 o` ...).
    #[serde(default)]
    pub avoid_ambiguous: bool,
    /// A passphrase's number of words (default 6).
    #[serde(default)]
    #[schemars(range(min = 4, max = 20))]
    pub words: Option<usize>,
    /// What goes between a passphrase's words (default `-`).
    #[serde(default)]
    #[schemars(length(max = 3))]
    pub separator: Option<String>,
    /// Capitalize each word of a passphrase.
    #[serde(default)]
    pub capitalize: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GenKind {
    #[default]
    Password,
    Passphrase,
}

/// A new value, not stored anywhere: the caller shows it or puts it in the vault. Made for
/// whoever asked, so it is given back as text (a vault item's value never is).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Generated {
    pub value: String,
    /// Its strength: the bits of the random choices it was drawn from.
    pub bits: f64,
    pub kind: GenKind,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum GenerateError {
    #[error("{0}")]
    Invalid(String),
    #[error("no randomness from the OS: {0}")]
    Random(String),
}

/// A uniform draw below `n` (`n` > 0) from the OS's random source.
fn below(n: usize) -> Result<usize, GenerateError> {
    let n = n as u64;
    // The largest multiple of n that fits: draws at or past it are thrown away, so no value
    // is likelier than another.
    let zone = u64::MAX - (u64::MAX % n);
    loop {
        let mut b = [0u8; 8];
        getrandom::fill(&mut b).map_err(|e| GenerateError::Random(e.to_string()))?;
        let x = u64::from_le_bytes(b);
        if x < zone {
            return Ok((x % n) as usize);
        }
    }
}

pub fn word_list() -> Vec<&'static str> {
    WORDS.lines().filter(|w| !w.is_empty()).collect()
}

pub fn generate(input: &GenerateInput) -> Result<Generated, GenerateError> {
    match input.kind {
        GenKind::Password => password(input),
        GenKind::Passphrase => passphrase(input),
    }
}

fn password(input: &GenerateInput) -> Result<Generated, GenerateError> {
    if input.words.is_some() || input.separator.is_some() || input.capitalize {
        return Err(GenerateError::Invalid(
            "words, separator and capitalize are for a passphrase (kind: passphrase)".into(),
        ));
    }
    let length = input.length.unwrap_or(20);
    if !(8..=128).contains(&length) {
        return Err(GenerateError::Invalid(format!(
            "a password's length is 8 to 128, not {length}"
        )));
    }
    let mut sets = input.sets.clone().unwrap_or_else(|| {
        vec![
            CharSet::Lower,
            CharSet::Upper,
            CharSet::Digits,
            CharSet::Symbols,
        ]
    });
    sets.sort_by_key(|s| *s as u8);
    sets.dedup();
    if sets.is_empty() {
        return Err(GenerateError::Invalid(
            "a password needs at least one character set".into(),
        ));
    }
    let pools: Vec<Vec<char>> = sets
        .iter()
        .map(|s| {
            s.chars()
                .chars()
                .filter(|c| !input.avoid_ambiguous || !AMBIGUOUS.contains(*c))
                .collect()
        })
        .collect();
    let all: Vec<char> = pools.iter().flatten().copied().collect();
    // Drawn from every chosen set alike, and drawn again until each set is in it: every
    // password with one of each is as likely as any other.
    let value = loop {
        let mut v = String::with_capacity(length);
        for _ in 0..length {
            v.push(all[below(all.len())?]);
        }
        if pools.iter().all(|p| v.chars().any(|c| p.contains(&c))) {
            break v;
        }
    };
    Ok(Generated {
        value,
        bits: length as f64 * (all.len() as f64).log2(),
        kind: GenKind::Password,
    })
}

fn passphrase(input: &GenerateInput) -> Result<Generated, GenerateError> {
    if input.length.is_some() || input.sets.is_some() || input.avoid_ambiguous {
        return Err(GenerateError::Invalid(
            "length, sets and avoid_ambiguous are for a password (kind: password)".into(),
        ));
    }
    let words = input.words.unwrap_or(6);
    if !(4..=20).contains(&words) {
        return Err(GenerateError::Invalid(format!(
            "a passphrase has 4 to 20 words, not {words}"
        )));
    }
    let separator = input.separator.clone().unwrap_or_else(|| "-".into());
    if separator.chars().count() > 3 || separator.chars().any(char::is_control) {
        return Err(GenerateError::Invalid(
            "a separator is at most 3 printable characters".into(),
        ));
    }
    let list = word_list();
    let mut chosen = Vec::with_capacity(words);
    for _ in 0..words {
        let w = list[below(list.len())?];
        chosen.push(if input.capitalize {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect())
                .unwrap_or_default()
        } else {
            w.to_string()
        });
    }
    Ok(Generated {
        value: chosen.join(&separator),
        bits: words as f64 * (list.len() as f64).log2(),
        kind: GenKind::Passphrase,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(json: serde_json::Value) -> GenerateInput {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn the_word_list_is_the_effs_large_one() {
        let list = word_list();
        assert_eq!(list.len(), 7776);
        assert_eq!(list[0], "abacus");
        let mut sorted = list.clone();
        sorted.dedup();
        assert_eq!(sorted.len(), 7776, "no word twice");
        assert!(
            list.iter()
                .all(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        );
    }

    #[test]
    fn a_password_has_its_length_one_of_each_set_and_nothing_else() {
        for _ in 0..200 {
            let g = generate(&input(serde_json::json!({}))).unwrap();
            let v = &g.value;
            assert_eq!(v.chars().count(), 20);
            for set in [LOWER, UPPER, DIGITS, SYMBOLS] {
                assert!(v.chars().any(|c| set.contains(c)), "{set} in {v}");
            }
            assert!((g.bits - 20.0 * 90f64.log2()).abs() < 1e-9, "{}", g.bits);
        }
        let g = generate(&input(
            serde_json::json!({ "length": 64, "sets": ["digits"], "avoid_ambiguous": true }),
        ))
        .unwrap();
        let v = &g.value;
        assert_eq!(v.len(), 64);
        assert!(v.chars().all(|c| "23456789".contains(c)), "{v}");
        assert!((g.bits - 64.0 * 8f64.log2()).abs() < 1e-9);
    }

    #[test]
    fn every_character_is_drawn_alike() {
        // 20,000 draws of 10 digits: each digit 2,000 times, give or take what chance gives
        // (a count outside ±15% is ~1e-11 likely).
        let mut seen = [0usize; 10];
        for _ in 0..1_000 {
            let g = generate(&input(
                serde_json::json!({ "length": 20, "sets": ["digits"] }),
            ))
            .unwrap();
            for c in g.value.chars() {
                seen[c.to_digit(10).unwrap() as usize] += 1;
            }
        }
        for (d, n) in seen.iter().enumerate() {
            assert!((1_700..=2_300).contains(n), "digit {d} drawn {n} times");
        }
    }

    #[test]
    fn a_passphrase_is_words_from_the_list() {
        let list = word_list();
        let g = generate(&input(serde_json::json!({ "kind": "passphrase" }))).unwrap();
        let v = &g.value;
        let words: Vec<&str> = v.split('-').collect();
        // A word of the list may hold a hyphen itself ("drop-down"): count by the list.
        assert!(words.len() >= 6, "{v}");
        assert!((g.bits - 6.0 * 7776f64.log2()).abs() < 1e-9);
        let g = generate(&input(serde_json::json!({
            "kind": "passphrase", "words": 8, "separator": " ", "capitalize": true
        })))
        .unwrap();
        let v = &g.value;
        let words: Vec<&str> = v.split(' ').collect();
        assert_eq!(words.len(), 8, "{v}");
        for w in words {
            assert!(w.chars().next().unwrap().is_ascii_uppercase(), "{w}");
            assert!(list.contains(&w.to_lowercase().as_str()), "{w}");
        }
        assert_ne!(
            &generate(&input(serde_json::json!({ "kind": "passphrase" })))
                .unwrap()
                .value,
            v
        );
    }

    #[test]
    fn bad_asks_are_refused_with_why() {
        for (asked, says) in [
            (serde_json::json!({ "length": 7 }), "8 to 128"),
            (serde_json::json!({ "length": 129 }), "8 to 128"),
            (serde_json::json!({ "sets": [] }), "at least one"),
            (serde_json::json!({ "words": 6 }), "for a passphrase"),
            (
                serde_json::json!({ "kind": "passphrase", "words": 3 }),
                "4 to 20",
            ),
            (
                serde_json::json!({ "kind": "passphrase", "length": 20 }),
                "for a password",
            ),
            (
                serde_json::json!({ "kind": "passphrase", "separator": "long" }),
                "at most 3",
            ),
            (
                serde_json::json!({ "kind": "passphrase", "separator": "\n" }),
                "printable",
            ),
        ] {
            let e = generate(&input(asked.clone())).unwrap_err().to_string();
            assert!(e.contains(says), "{asked}: {e}");
        }
        assert!(
            serde_json::from_value::<GenerateInput>(serde_json::json!({ "sets": ["emoji"] }))
                .is_err()
        );
    }
}
