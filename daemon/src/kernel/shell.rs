//! A Bash command line as the simple commands it runs, each as its words (for the Gate's table
//! and the lessons' checks):
//! quotes and escapes undone, lists (`;`, `&&`, `||`, `&`, newlines), pipes and substitutions
//! (`$(...)`, backticks) split apart, and the wrappers that run another command (`sudo`, `env`,
//! `nohup`, `timeout`, `xargs`, `sh -c`, `eval` ...) looked through. It reads what a person or a
//! model writes, not every shell program: a command it cannot see through (a script run by
//! name, a variable as the program) is left for the table to call unknown.

/// How deep `sh -c '...'` and `eval` are looked into.
const DEPTH: usize = 4;

/// The simple commands of `line`, each as its words, wrappers removed.
pub fn commands(line: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    split(line, 0, &mut out);
    out
}

fn split(line: &str, depth: usize, out: &mut Vec<Vec<String>>) {
    let mut parts = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, words: &mut Vec<String>| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next()
                    && n != '\n'
                {
                    word.push(n);
                    in_word = true;
                }
            }
            '\'' => {
                in_word = true;
                for n in chars.by_ref() {
                    if n == '\'' {
                        break;
                    }
                    word.push(n);
                }
            }
            '"' => {
                in_word = true;
                while let Some(n) = chars.next() {
                    match n {
                        '"' => break,
                        '\\' => {
                            if let Some(m) = chars.next() {
                                word.push(m);
                            }
                        }
                        // A substitution inside quotes runs too.
                        '$' if chars.peek() == Some(&'(') => {
                            chars.next();
                            let inner = take_until_close(&mut chars);
                            split(&inner, depth + 1, out);
                        }
                        '`' => {
                            let inner: String = chars.by_ref().take_while(|m| *m != '`').collect();
                            split(&inner, depth + 1, out);
                        }
                        _ => word.push(n),
                    }
                }
            }
            '$' if chars.peek() == Some(&'(') => {
                chars.next();
                let inner = take_until_close(&mut chars);
                split(&inner, depth + 1, out);
                // What it printed is a word here, unknown.
                word.push_str("$(...)");
                in_word = true;
            }
            '`' => {
                let inner: String = chars.by_ref().take_while(|m| *m != '`').collect();
                split(&inner, depth + 1, out);
                word.push_str("$(...)");
                in_word = true;
            }
            ';' | '&' | '|' | '\n' | '(' | ')' | '{' | '}' => {
                end_word(&mut word, &mut in_word, &mut words);
                if !words.is_empty() {
                    parts.push(std::mem::take(&mut words));
                }
            }
            '#' if !in_word => {
                // A comment runs to the end of the line.
                for n in chars.by_ref() {
                    if n == '\n' {
                        break;
                    }
                }
                if !words.is_empty() {
                    parts.push(std::mem::take(&mut words));
                }
            }
            c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut words),
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut words);
    if !words.is_empty() {
        parts.push(words);
    }
    for part in parts {
        unwrap(part, depth, out);
    }
}

/// The text up to the `)` that closes a `$(` already read, nested ones included.
fn take_until_close(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    let mut level = 1;
    let mut inner = String::new();
    for n in chars.by_ref() {
        match n {
            '(' => level += 1,
            ')' => {
                level -= 1;
                if level == 0 {
                    break;
                }
            }
            _ => {}
        }
        inner.push(n);
    }
    inner
}

/// One simple command with its redirections and the wrappers that run another command removed;
/// `sh -c` and `eval` are split again.
fn unwrap(mut words: Vec<String>, depth: usize, out: &mut Vec<Vec<String>>) {
    loop {
        // Redirections are not words of the command.
        words.retain(|w| !is_redirection(w));
        // Leading `VAR=value` assignments.
        while words.first().is_some_and(|w| is_assignment(w)) {
            words.remove(0);
        }
        let Some(first) = words.first() else { return };
        let program = program(first).to_string();
        let skip = match program.as_str() {
            "sudo" | "doas" => options_then(&words, &["-u", "-g", "-C", "-D", "-h", "-p", "-U"]),
            "env" => {
                let mut i = options_then(&words, &["-u", "-C", "-S"]);
                while words.get(i).is_some_and(|w| is_assignment(w)) {
                    i += 1;
                }
                i
            }
            "nohup" | "command" | "exec" | "builtin" | "time" | "stdbuf" | "setsid"
            | "caffeinate" => options_then(&words, &[]),
            "nice" | "ionice" => options_then(&words, &["-n", "-c"]),
            "timeout" => {
                let i = options_then(&words, &["-s", "-k", "--signal", "--kill-after"]);
                i + 1
            }
            "xargs" => options_then(&words, &["-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a"]),
            "sh" | "bash" | "zsh" | "dash" | "ksh" | "fish" => {
                let flag = words.iter().position(|w| {
                    w == "-c" || (w.starts_with('-') && !w.starts_with("--") && w.contains('c'))
                });
                if let Some(i) = flag
                    && depth < DEPTH
                    && let Some(script) = words.get(i + 1)
                {
                    split(script, depth + 1, out);
                    return;
                }
                out.push(words);
                return;
            }
            "eval" => {
                if depth < DEPTH {
                    split(&words[1..].join(" "), depth + 1, out);
                }
                return;
            }
            _ => {
                out.push(words);
                return;
            }
        };
        if skip >= words.len() {
            out.push(words);
            return;
        }
        words.drain(..skip);
    }
}

/// The index of the first word after `words[0]` and its options (`takes` take a value).
fn options_then(words: &[String], takes: &[&str]) -> usize {
    let mut i = 1;
    while let Some(w) = words.get(i) {
        if w == "--" {
            return i + 1;
        }
        if !w.starts_with('-') || w == "-" {
            break;
        }
        i += if takes.contains(&w.as_str()) { 2 } else { 1 };
    }
    i
}

/// A program's name without its folder: `/usr/bin/git` is `git`.
pub fn program(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

fn is_redirection(word: &str) -> bool {
    let w = word.trim_start_matches(|c: char| c.is_ascii_digit());
    w.starts_with('>') || w.starts_with('<')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn firsts(line: &str) -> Vec<String> {
        commands(line).into_iter().map(|c| c.join(" ")).collect()
    }

    #[test]
    fn lists_pipes_and_substitutions_are_commands_of_their_own() {
        assert_eq!(
            firsts("cd x && git push origin main"),
            ["cd x", "git push origin main"]
        );
        assert_eq!(
            firsts("make; git push || true"),
            ["make", "git push", "true"]
        );
        assert_eq!(
            firsts("echo hi | mail -s x a@b.c"),
            ["echo hi", "mail -s x a@b.c"]
        );
        assert_eq!(
            firsts("echo $(git push) done"),
            ["git push", "echo $(...) done"]
        );
        assert_eq!(firsts("echo \"`npm publish`\""), ["npm publish", "echo "]);
        assert_eq!(
            firsts("(cd a; git push) # git push in a comment"),
            ["cd a", "git push"]
        );
    }

    #[test]
    fn quotes_and_escapes_are_undone() {
        assert_eq!(
            commands("g\\it 'pu'sh \"a b\""),
            [vec!["git", "push", "a b"]]
        );
        assert_eq!(
            commands("git push \\\n origin"),
            [vec!["git", "push", "origin"]]
        );
    }

    #[test]
    fn wrappers_are_looked_through() {
        for line in [
            "sudo git push",
            "sudo -u bob git push",
            "env GIT_TRACE=1 git push",
            "FOO=1 BAR=2 git push",
            "nohup git push > log 2>&1",
            "timeout 30 git push",
            "nice -n 5 git push",
            "command git push",
            "bash -c 'git push'",
            "sh -lc \"cd x && git push\"",
            "eval git push",
            "echo main | xargs -I{} git push origin {}",
            "/usr/bin/git push",
        ] {
            assert!(
                commands(line)
                    .iter()
                    .any(|c| program(&c[0]) == "git" && c[1] == "push"),
                "{line}: {:?}",
                commands(line)
            );
        }
    }

    #[test]
    fn deep_or_odd_input_ends() {
        let deep = "bash -c \"".repeat(50) + "git push";
        let _ = commands(&deep);
        let _ = commands("$(((((");
        let _ = commands("'unterminated");
        assert!(commands("").is_empty());
    }
}
