//! Quoting for a POSIX shell: commands that `vyre box add` runs on another machine go through
//! ssh as one string, which that machine's shell parses. Every word Vyre puts in one is quoted
//! here, so a value (an image name, a path) is one word whatever it holds.

use std::borrow::Cow;

/// `word` as one shell word: as it is when it holds only characters no shell treats specially,
/// else in single quotes (inside which only `'` itself needs care: `'\''`).
pub fn quote(word: &str) -> Cow<'_, str> {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./:@%+=,".contains(&b));
    if plain {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(format!("'{}'", word.replace('\'', r"'\''")))
    }
}

/// A command line of `words`, each quoted.
pub fn command<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `sh` makes of `printf '%s\0' <line>`: the words it parsed.
    fn parsed_by_sh(line: &str) -> Vec<String> {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s\\0' {line}"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{line}");
        String::from_utf8(out.stdout)
            .unwrap()
            .split_terminator('\0')
            .map(String::from)
            .collect()
    }

    #[test]
    fn plain_words_stay_as_they_are() {
        for word in [
            "docker",
            "localhost/vyre-box:dev",
            "127.0.0.1:4477:4477",
            "a=b,c",
        ] {
            assert_eq!(quote(word), word);
        }
        assert_eq!(quote(""), "''");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn every_word_reaches_the_shell_as_one_word_and_runs_nothing() {
        let dir = std::env::temp_dir().join(format!("vyre-sh-quote-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pwned = dir.join("pwned");
        let p = pwned.display();
        let words = [
            format!("x; touch {p}"),
            format!("$(touch {p})"),
            format!("`touch {p}`"),
            format!("x' ; touch {p}; echo '"),
            format!("x\ntouch {p}"),
            format!("x && touch {p} || touch {p}"),
            format!("> {p}"),
            "it's".to_string(),
            "a b\tc".to_string(),
            "*".to_string(),
            "~".to_string(),
            "$HOME".to_string(),
            "\\".to_string(),
            "-n".to_string(),
            String::new(),
        ];
        for word in &words {
            assert_eq!(
                parsed_by_sh(&quote(word)),
                vec![word.to_string()],
                "{word:?}"
            );
        }
        assert_eq!(parsed_by_sh(&command(&words)), words);
        assert!(!pwned.exists(), "a quoted word ran a command");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
