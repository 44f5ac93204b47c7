//! The vault's kinds beyond secrets, logins and notes (issue 27): cards and env sets, from the
//! API and the terminal, listed by what is not secret, shown after presence; an env set granted
//! to a watcher reaches its program as variables and never its log.

use serde_json::{Value, json};

use crate::support::*;

#[test]
fn cards_and_env_sets_round_trip_from_the_terminal_and_show_only_what_is_not_secret() {
    let home = TempHome::new("vault-kinds");
    let run = |args: &[&str], stdin: &str| -> std::process::Output {
        use std::io::Write;
        let mut cmd = home.command();
        cmd.args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    assert!(run(&["up"], "").status.success());
    let put = run(
        &["vault", "put", "visa", "--kind", "card"],
        "4111 1111 1111 1234\nSam Example\n08/29\n987\n",
    );
    assert!(put.status.success(), "{put:?}");
    let put = run(
        &["vault", "put", "deploy", "--kind", "env"],
        "# staging\nexport AWS_KEY=kinds-aws-1\nAWS_SECRET=\"kinds-aws-2 with space\"\n\nREGION=eu-west-1\n",
    );
    assert!(put.status.success(), "{put:?}");
    let bad = run(
        &["vault", "put", "broken", "--kind", "env"],
        "no equals sign\n",
    );
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("line 1: not NAME=value"),
        "{bad:?}"
    );

    // Listed by what is not secret.
    let listed = run(&["vault", "list"], "");
    let said = String::from_utf8_lossy(&listed.stdout).to_string();
    assert!(said.contains("(…1234, expires 08/29)"), "{said}");
    assert!(said.contains("(AWS_KEY, AWS_SECRET, REGION)"), "{said}");
    let json: Value =
        serde_json::from_slice(&run(&["vault", "list", "--json"], "").stdout).unwrap();
    let card = json
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "visa")
        .unwrap();
    assert_eq!(
        (&card["kind"], &card["last4"], &card["expiry"]),
        (&json!("card"), &json!("1234"), &json!("08/29"))
    );
    for value in [
        "4111111111111234",
        "4111 1111",
        "987",
        "kinds-aws",
        "Sam Example",
    ] {
        // As a word: the CVV's three digits may well sit inside a timestamp.
        let apart = |text: &str| {
            text.match_indices(value).any(|(at, _)| {
                let before = text[..at].chars().next_back();
                let after = text[at + value.len()..].chars().next();
                !before.is_some_and(char::is_alphanumeric)
                    && !after.is_some_and(char::is_alphanumeric)
            })
        };
        assert!(!apart(&said) && !apart(&json.to_string()), "{value}");
    }

    // Shown after presence, field by field; an env set whole, as a .env file.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(home.socket_client().call(
        "vault.passphrase",
        &json!({ "passphrase": "kinds passphrase" }),
    ))
    .unwrap();
    let reveal = |args: &[&str]| {
        let mut all = vec!["vault", "reveal"];
        all.extend_from_slice(args);
        let out = run(&all, "kinds passphrase\n");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        reveal(&["visa"]),
        "4111111111111234\n",
        "a card's number by default"
    );
    assert_eq!(reveal(&["visa", "--field", "code"]), "987\n");
    assert_eq!(reveal(&["visa", "--field", "holder"]), "Sam Example\n");
    assert_eq!(reveal(&["visa", "--field", "expiry"]), "08/29\n");
    assert_eq!(
        reveal(&["deploy"]),
        "AWS_KEY=kinds-aws-1\nAWS_SECRET=kinds-aws-2 with space\nREGION=eu-west-1\n"
    );
    let out = run(
        &["vault", "reveal", "deploy", "--field", "password"],
        "kinds passphrase\n",
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("a env item has no password field")
            || String::from_utf8_lossy(&out.stderr).contains("has no password field"),
        "{out:?}"
    );
    assert!(run(&["down"], "").status.success());
}

/// A watcher that says what its environment and its vault hold.
const ENV_WATCH: &str = r#"
export async function watch({ vault, log }) {
  log(`env ${process.env.DEPLOY_TOKEN} stdin ${vault.get('deploy').DEPLOY_TOKEN}`);
  log(`path ${process.env.PATH} preload ${typeof process.env.LD_PRELOAD}`);
  return 1;
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_env_set_reaches_a_watchers_program_as_variables_and_never_its_log() {
    if !super::watchers::runnable() {
        return;
    }
    let home = TempHome::new("vault-env-watcher");
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    super::watchers::project(&sock, &home, "Ops").await;
    sock.call(
        "vault.put",
        &json!({ "name": "deploy", "kind": "env", "vars": {
            "DEPLOY_TOKEN": "envset-tok-7731", "PATH": "/attacker/bin", "LD_PRELOAD": "/attacker/lib.so"
        } }),
    )
    .await
    .unwrap();
    sock.call(
        "watchers.create",
        &json!({ "name": "deployer", "project": "Ops", "schedule": "@daily",
                 "script": ENV_WATCH, "needs": ["deploy"] }),
    )
    .await
    .unwrap();
    let digest = sock
        .call("watchers.source", &json!({ "name": "deployer" }))
        .await
        .unwrap()["digest"]
        .clone();
    sock.call(
        "watchers.resume",
        &json!({ "name": "deployer", "digest": digest }),
    )
    .await
    .unwrap();
    let tried = sock
        .call("watchers.test", &json!({ "name": "deployer" }))
        .await
        .unwrap();
    assert_eq!(tried["ok"], true, "{tried}");
    assert_eq!(
        tried["logs"][0], "env [vault:deploy.DEPLOY_TOKEN] stdin [vault:deploy.DEPLOY_TOKEN]",
        "{tried}"
    );
    // What would change how it runs is not set from a set.
    assert_eq!(
        tried["logs"][1], "path /usr/local/bin:/usr/bin:/bin preload undefined",
        "{tried}"
    );
    let events = sock
        .call("system.events", &json!({ "limit": 1000 }))
        .await
        .unwrap()
        .to_string();
    assert!(!events.contains("envset-tok"), "never in an event");
    vyred.stop().await;
}
