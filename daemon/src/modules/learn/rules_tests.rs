use super::*;

fn check_of(words: &str) -> Option<Check> {
    correction(words).and_then(|p| p.check)
}

#[test]
fn corrections_are_told_from_other_prompts() {
    for prompt in [
        "don't use em dashes",
        "Don't use em dashes in your answers.",
        "No, never force push to main",
        "never run `rm -rf` here",
        "always run the tests before you commit",
        "I told you to update the changelog",
        "/vyre remember we deploy on Fridays only after the review",
        "Please don't say \"delve\" again",
    ] {
        assert!(correction(prompt).is_some(), "{prompt}");
    }
    for prompt in [
        "what is the walrus budget?",
        "no",
        "stop",
        "Write a function that never returns",
        "RUNBASH git push",
        "Nothing to add; carry on",
        "",
    ] {
        assert_eq!(correction(prompt), None, "{prompt}");
    }
    assert_eq!(
        correction("No, use tabs. Then run it again.").unwrap().rule,
        "use tabs"
    );
    assert_eq!(
        correction("/vyre remember the staging host is blue").unwrap(),
        Parsed {
            rule: "the staging host is blue".into(),
            check: None
        }
    );
}

#[test]
fn a_rule_vyre_can_check_gets_its_check() {
    assert_eq!(
        check_of("don't use em dashes"),
        Some(Check::Banned {
            chars: vec!["\u{2014}".into()],
            words: vec![]
        })
    );
    assert_eq!(
        check_of("never use semicolons in prose"),
        Some(Check::Banned {
            chars: vec![";".into()],
            words: vec![]
        })
    );
    assert!(matches!(
        check_of("no emoji please"),
        Some(Check::Banned { .. })
    ));
    assert_eq!(
        check_of("Please don't say \"delve\" again"),
        Some(Check::Banned {
            chars: vec![],
            words: vec!["delve".into()]
        })
    );
    assert_eq!(
        check_of("don't say 'leverage', it's jargon"),
        Some(Check::Banned {
            chars: vec![],
            words: vec!["leverage".into()]
        })
    );
    assert_eq!(
        check_of("never force push"),
        Some(Check::Command {
            words: vec!["git".into(), "push".into()],
            flags: vec!["--force".into(), "-f".into(), "--force-with-lease".into()],
        })
    );
    assert_eq!(
        check_of("never run `rm -rf` here"),
        Some(Check::Command {
            words: vec!["rm".into()],
            flags: vec!["-rf".into()]
        })
    );
    assert!(matches!(
        check_of("always run the tests before you commit"),
        Some(Check::Requires { .. })
    ));
    assert_eq!(
        check_of("always update the changelog"),
        Some(Check::Touches {
            path: "CHANGELOG.md".into()
        })
    );
    assert_eq!(check_of("always be kind to the intern"), None);
}

#[test]
fn odd_words_end_and_name_nothing() {
    let long = "don't ".to_string() + &"x ".repeat(5000);
    assert_eq!(correction(&long), None);
    let _ = parse("'''```\"\"");
    let _ = parse("don't use `");
    assert_eq!(quoted("it's the 'one' we use"), vec!["one".to_string()]);
    assert!(is_emoji('\u{1F680}') && !is_emoji('a'));
}
