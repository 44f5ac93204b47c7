use serde_json::json;

use super::*;
use crate::modules::gate::mcp::name_words;

fn bash_in(line: &str, folder: &str) -> Option<Held> {
    let input = json!({ "command": line });
    classify(
        &Call {
            tool: "Bash",
            input: &input,
            folder: Some(Path::new(folder)),
        },
        &Rules::default(),
    )
}

fn bash(line: &str) -> Option<Held> {
    bash_in(line, "/work/app")
}

fn rule(line: &str) -> Option<(Kind, String)> {
    bash(line).map(|h| (h.kind, h.rule))
}

#[test]
fn each_row_holds_what_it_names() {
    for (line, kind, row) in [
        ("git push", Kind::Send, "git-push"),
        ("git push -f origin main", Kind::Send, "git-push"),
        ("git -C ../other push", Kind::Send, "git-push"),
        (
            "git -c user.name=x push origin HEAD",
            Kind::Send,
            "git-push",
        ),
        (
            "git send-email --to a@b.c 0001.patch",
            Kind::Send,
            "git-send-email",
        ),
        ("gh pr create --title x --body y", Kind::Send, "gh-pr"),
        ("gh pr merge 12 --squash", Kind::Send, "gh-pr"),
        ("gh -R owner/repo pr comment 3 -b hi", Kind::Send, "gh-pr"),
        ("gh issue create -t bug", Kind::Send, "gh-issue"),
        ("gh issue delete 4", Kind::Delete, "gh-issue"),
        ("gh release create v1", Kind::Send, "gh-release"),
        ("gh repo delete owner/x --yes", Kind::Delete, "gh-repo"),
        ("gh gist create notes.md", Kind::Send, "gh-gist"),
        ("gh api repos/o/r/issues -f title=x", Kind::Send, "gh-api"),
        ("gh api -X DELETE repos/o/r", Kind::Send, "gh-api"),
        ("gh api --method=PATCH repos/o/r", Kind::Send, "gh-api"),
        ("npm publish", Kind::Send, "publish"),
        ("npm publish --access public", Kind::Send, "publish"),
        ("npm unpublish pkg@1.0.0", Kind::Delete, "publish"),
        ("pnpm publish", Kind::Send, "publish"),
        ("yarn npm publish", Kind::Send, "publish"),
        ("cargo publish --dry-run", Kind::Send, "publish"),
        ("cargo yank --version 1.0.0", Kind::Send, "publish"),
        ("twine upload dist/*", Kind::Send, "publish"),
        (
            "docker push registry.example.com/app:1",
            Kind::Send,
            "publish",
        ),
        (
            "echo body | mail -s hi someone@example.com",
            Kind::Send,
            "mail",
        ),
        ("sendmail -t < msg.eml", Kind::Send, "mail"),
        (
            "curl -X POST https://api.example.com/x",
            Kind::Send,
            "curl-send",
        ),
        (
            "curl -XPUT https://api.example.com/x",
            Kind::Send,
            "curl-send",
        ),
        (
            "curl --request DELETE https://api.example.com/x",
            Kind::Send,
            "curl-send",
        ),
        (
            "curl -d a=1 https://api.example.com/x",
            Kind::Send,
            "curl-send",
        ),
        (
            "curl -dfoo https://api.example.com/x",
            Kind::Send,
            "curl-send",
        ),
        (
            "curl --data-binary @f.json api.example.com/x",
            Kind::Send,
            "curl-send",
        ),
        (
            "curl --json '{}' https://hooks.slack.com/services/x",
            Kind::Send,
            "curl-send",
        ),
        (
            "curl -F file=@a.png https://example.com/upload",
            Kind::Send,
            "curl-send",
        ),
        (
            "curl -T big.tar ftp://example.com/",
            Kind::Send,
            "curl-send",
        ),
        (
            "wget --post-data=a=1 https://example.com/x",
            Kind::Send,
            "wget-send",
        ),
        (
            "wget --method=DELETE https://example.com/x",
            Kind::Send,
            "wget-send",
        ),
        ("http POST api.example.com/x a=1", Kind::Send, "httpie-send"),
        ("xh api.example.com/x name=v", Kind::Send, "httpie-send"),
        ("rm -rf ../other", Kind::Delete, "delete-outside"),
        ("rm /etc/hosts.bak", Kind::Delete, "delete-outside"),
        ("rm ~/notes.txt", Kind::Delete, "delete-outside"),
        ("rm -r $HOME/x", Kind::Delete, "delete-outside"),
        ("rmdir /tmp/other", Kind::Delete, "delete-outside"),
        (
            "find /srv/data -name '*.log' -delete",
            Kind::Delete,
            "delete-outside",
        ),
    ] {
        assert_eq!(rule(line), Some((kind, row.to_string())), "{line}");
    }
}

#[test]
fn held_inside_lists_wrappers_and_shells() {
    for line in [
        "cargo test && git push",
        "sudo -u me git push",
        "bash -c 'cd x && git push origin main'",
        "FOO=1 timeout 60 npm publish",
        "echo $(curl -X POST https://example.com)",
        "g\\it pu'sh'",
    ] {
        assert!(bash(line).is_some(), "{line}");
    }
}

#[test]
fn what_stays_on_this_machine_or_in_the_folder_goes_on() {
    for line in [
        "git status",
        "git commit -m 'push the button'",
        "git log --oneline",
        "git fetch origin",
        "git pull",
        "echo git push",
        "gh pr list",
        "gh pr view 3",
        "gh api repos/o/r",
        "gh api -X GET repos/o/r",
        "npm install",
        "npm run publish-docs-locally",
        "cargo build",
        "curl https://example.com",
        "curl -I https://example.com",
        "curl -X GET https://example.com/x",
        "curl -d a=1 http://127.0.0.1:8080/x",
        "curl -X POST http://localhost:3000/api",
        "curl --data-binary @body.json http://[::1]:9/x",
        "wget https://example.com/file.tar.gz",
        "http GET api.example.com/x",
        "rm -rf target",
        "rm ./build/out.o src/../dist/x",
        "rm -f /work/app/tmp.txt",
        "find . -name '*.o' -delete",
        "ls; cat README.md | grep push",
        "# git push origin main",
    ] {
        assert_eq!(bash(line), None, "{line}");
    }
}

#[test]
fn a_held_command_keeps_its_words() {
    let held = bash("cd sub && git -C .. push origin main").unwrap();
    assert_eq!(held.words, ["git", "-C", "..", "push", "origin", "main"]);
    assert_eq!(held.what, "git push");
}

#[test]
fn mcp_tools_by_their_names_and_inputs() {
    let mcp = |tool: &str, input: Value| {
        classify(
            &Call {
                tool,
                input: &input,
                folder: None,
            },
            &Rules::default(),
        )
        .map(|h| h.kind)
    };
    assert_eq!(mcp("mcp__slack__post_message", json!({})), Some(Kind::Send));
    assert_eq!(mcp("mcp__gmail__sendEmail", json!({})), Some(Kind::Send));
    assert_eq!(
        mcp("mcp__stripe__create-payment", json!({})),
        Some(Kind::Spend)
    );
    assert_eq!(mcp("mcp__shop__checkout", json!({})), Some(Kind::Spend));
    assert_eq!(
        mcp("mcp__drive__delete_file", json!({})),
        Some(Kind::Delete)
    );
    assert_eq!(
        mcp(
            "mcp__chat__create",
            json!({ "channel": "#ops", "text": "hi" })
        ),
        Some(Kind::Send),
        "a message to someone, whatever the name"
    );
    assert_eq!(mcp("mcp__docs__search", json!({ "query": "x" })), None);
    assert_eq!(mcp("mcp__github__get_issue", json!({ "issue": 3 })), None);
    assert_eq!(
        mcp("mcp__vyre__threads_send", json!({ "text": "x", "to": "y" })),
        None
    );
    assert_eq!(mcp("Read", json!({ "file_path": "/etc/passwd" })), None);
    assert_eq!(
        mcp("WebFetch", json!({ "url": "https://example.com" })),
        None
    );
}

#[test]
fn the_persons_rows_hold_more_and_let_some_through() {
    let rules = Rules {
        hold: vec![
            Extra {
                command: Some("fly deploy".into()),
                ..Extra::default()
            },
            Extra {
                tool: Some("mcp__bank__*".into()),
                kind: Some(Kind::Spend),
                ..Extra::default()
            },
        ],
        pass: vec![
            Extra {
                command: Some("git push fork".into()),
                ..Extra::default()
            },
            Extra {
                tool: Some("mcp__slack__post_message".into()),
                ..Extra::default()
            },
        ],
    };
    let check = |tool: &str, input: Value| {
        classify(
            &Call {
                tool,
                input: &input,
                folder: None,
            },
            &rules,
        )
        .map(|h| (h.kind, h.rule))
    };
    assert_eq!(
        check("Bash", json!({ "command": "fly deploy --app x" })),
        Some((Kind::Send, "person:0".into()))
    );
    assert_eq!(
        check("mcp__bank__balance", json!({})),
        Some((Kind::Spend, "person:1".into()))
    );
    assert_eq!(
        check("Bash", json!({ "command": "git push fork main" })),
        None
    );
    assert!(check("Bash", json!({ "command": "git push origin main" })).is_some());
    assert!(
        check(
            "Bash",
            json!({ "command": "git push fork main && git push origin main" })
        )
        .is_some(),
        "a pass covers its own command only"
    );
    assert_eq!(check("mcp__slack__post_message", json!({})), None);
}

#[test]
fn odd_input_is_not_held_and_does_not_panic() {
    for input in [
        json!({}),
        json!({ "command": 3 }),
        json!(null),
        json!({ "command": "" }),
    ] {
        assert_eq!(
            classify(
                &Call {
                    tool: "Bash",
                    input: &input,
                    folder: None
                },
                &Rules::default()
            ),
            None
        );
    }
    assert!(glob("a*c", "abbbc") && glob("*", "") && !glob("a*c", "abd"));
    assert_eq!(
        name_words("sendHTMLMessage_now-x"),
        ["send", "htmlmessage", "now", "x"]
    );
}
