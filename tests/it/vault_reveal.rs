//! A value shown to a person only after presence (floor rule 8, ADR 0035): by the vault
//! passphrase from the terminal, and by a passkey through the API as the app does it; a session
//! never; every showing on record and no value left in logs, events or the store.

use serde_json::{Value, json};
use vyre::modules::vault::presence::testing::Authenticator;

use crate::support::*;

const ORIGIN: &str = "http://localhost:7878";
const RP: &str = "localhost";

fn text(out: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_terminal_shows_one_field_after_the_passphrase_and_leaves_it_nowhere() {
    let home = TempHome::new("vault-reveal");
    // Debug logs: the test searches them for the values afterwards.
    let run = |args: &[&str], stdin: &str| -> std::process::Output {
        use std::io::Write;
        let mut cmd = home.command();
        cmd.env("RUST_LOG", "debug").args(args);
        cmd.stdin(std::process::Stdio::piped())
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
    let mut answers = Vec::new();
    assert!(run(&["up"], "").status.success());
    let seed = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";
    let put = run(
        &["vault", "put", "site", "--kind", "login"],
        &format!("rvl-user-1\nrvl-pass-1\n{seed}\n"),
    );
    assert!(put.status.success(), "{put:?}");
    assert!(
        run(&["vault", "put", "api"], "rvl-secret-1")
            .status
            .success()
    );

    // No way to prove presence yet: said, with what to do.
    let out = run(&["vault", "reveal", "site"], "anything\n");
    let (shown, said) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        shown.is_empty() && said.contains("vyre vault passphrase"),
        "{said}"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(home.socket_client().call(
        "vault.passphrase",
        &json!({ "passphrase": "correct horse battery" }),
    ))
    .unwrap();

    // A wrong passphrase shows nothing.
    let out = run(&["vault", "reveal", "site"], "wrong horse\n");
    let (shown, said) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        shown.is_empty() && said.contains("passphrase is wrong"),
        "{said}"
    );
    answers.extend([shown, said]);

    // The right one: the field alone on standard output.
    let reveal = |args: &[&str]| {
        let mut all = vec!["vault", "reveal"];
        all.extend_from_slice(args);
        let out = run(&all, "correct horse battery\n");
        assert!(out.status.success(), "{out:?}");
        text(&out).0.trim_end().to_string()
    };
    assert_eq!(reveal(&["site"]), "rvl-pass-1");
    assert_eq!(reveal(&["site", "--field", "username"]), "rvl-user-1");
    assert_eq!(reveal(&["api"]), "rvl-secret-1");
    let now = vyre::now_ms() as u64 / 1000;
    let code = reveal(&["site", "--field", "totp"]);
    let near: Vec<String> = [now - 30, now, now + 30]
        .iter()
        .map(|t| {
            let seed = vyre::kernel::contracts::secret::Secret::new(seed.into());
            vyre::kernel::contracts::secret::totp_code(&seed, *t)
                .unwrap()
                .expose()
                .to_string()
        })
        .collect();
    assert!(near.contains(&code), "{code} not in {near:?}");
    // A field the kind has not: said.
    let out = run(
        &["vault", "reveal", "api", "--field", "password"],
        "correct horse battery\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).1.contains("no password field"), "{out:?}");

    // Every showing is on record, with how, and never with the value.
    let events = stored_events(&home.home().database());
    let revealed: Vec<&Value> = events
        .iter()
        .filter(|(_, kind, _)| kind == "vault.revealed")
        .map(|(_, _, p)| p)
        .collect();
    assert_eq!(revealed.len(), 4, "{revealed:?}");
    assert_eq!(
        revealed[0],
        &json!({ "item": "site", "field": "password", "by": format!("socket:{}", nix::unistd::geteuid()), "via": "passphrase" })
    );

    // Guessing: after five wrong passphrases in a row, even the right one waits.
    for _ in 0..5 {
        let out = run(&["vault", "reveal", "api"], "guess guess\n");
        assert!(text(&out).1.contains("passphrase is wrong"), "{out:?}");
    }
    let out = run(&["vault", "reveal", "api"], "correct horse battery\n");
    let (shown, said) = text(&out);
    assert!(
        shown.is_empty() && said.contains("too many wrong passphrases"),
        "{said}"
    );
    answers.extend([shown, said]);
    assert!(run(&["down"], "").status.success());

    // The values were shown on the terminal that asked (not kept in `answers`) and nowhere else.
    for (place, text) in super::vault::left_behind(&home, answers) {
        for value in [
            "rvl-user-1",
            "rvl-pass-1",
            "rvl-secret-1",
            "correct horse",
            seed,
        ] {
            assert!(!text.contains(value), "{value:?} shows in {place}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passkey_proves_presence_once_for_one_field_and_a_session_gets_nothing() {
    let home = TempHome::new("vault-passkey");
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    sock.call(
        "vault.put",
        &json!({ "name": "bank", "kind": "login", "username": "pk-user", "password": "pk-pass" }),
    )
    .await
    .unwrap();
    sock.call(
        "vault.put",
        &json!({ "name": "other", "value": "pk-other" }),
    )
    .await
    .unwrap();
    // Nothing proves presence yet.
    let err = sock
        .call(
            "vault.reveal",
            &json!({ "name": "bank", "field": "password" }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("presence_required"), "{err}");

    // A passkey added as the browser does it.
    let mut key = Authenticator::new(11);
    let c = sock
        .call("vault.presence.challenge", &json!({ "for": "passkey" }))
        .await
        .unwrap();
    assert_eq!(
        (c["passkeys"].clone(), c["passphrase"].clone()),
        (json!([]), json!(false))
    );
    let added = sock
        .call(
            "vault.passkey.add",
            &key.add_input("Laptop", RP, c["challenge"].as_str().unwrap(), ORIGIN),
        )
        .await
        .unwrap();
    assert_eq!(
        (added["name"].as_str(), added["rp_id"].as_str()),
        (Some("Laptop"), Some(RP))
    );
    let listed = sock.call("vault.passkey.list", &json!({})).await.unwrap();
    assert_eq!(listed["passkeys"][0]["id"], added["id"]);

    // Reveal: a challenge for this item and field, answered once.
    let challenge = |name: &str, field: &str| {
        let sock = sock.clone();
        let (name, field) = (name.to_string(), field.to_string());
        async move {
            sock.call(
                "vault.presence.challenge",
                &json!({ "for": "reveal", "name": name, "field": field }),
            )
            .await
            .unwrap()["challenge"]
                .as_str()
                .unwrap()
                .to_string()
        }
    };
    let c = challenge("bank", "password").await;
    let answer = key.assert(RP, &c, ORIGIN).assertion(&key.id);
    let shown = sock
        .call(
            "vault.reveal",
            &json!({ "name": "bank", "field": "password", "passkey": answer }),
        )
        .await
        .unwrap();
    assert_eq!(shown["value"], "pk-pass");
    let err = sock
        .call(
            "vault.reveal",
            &json!({ "name": "bank", "field": "password", "passkey": answer }),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        Some("presence_challenge_unknown"),
        "replayed: {err}"
    );
    // A proof for one value does not show another, nor another field.
    for (name, field) in [("other", "value"), ("bank", "username")] {
        let c = challenge("bank", "password").await;
        let answer = key.assert(RP, &c, ORIGIN).assertion(&key.id);
        let err = sock
            .call(
                "vault.reveal",
                &json!({ "name": name, "field": field, "passkey": answer }),
            )
            .await
            .unwrap_err();
        assert_eq!(
            err.code(),
            Some("presence_mismatch"),
            "{name} {field}: {err}"
        );
    }
    // Another key answering with this passkey's id; an answer without the person verified.
    let c = challenge("bank", "username").await;
    let mut thief = Authenticator::new(12);
    let answer = thief.assert(RP, &c, ORIGIN).assertion(&key.id);
    let err = sock
        .call(
            "vault.reveal",
            &json!({ "name": "bank", "field": "username", "passkey": answer }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("presence_forged"), "{err}");
    key.verifies = false;
    let answer = key.assert(RP, &c, ORIGIN).assertion(&key.id);
    let err = sock
        .call(
            "vault.reveal",
            &json!({ "name": "bank", "field": "username", "passkey": answer }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("presence_not_verified"), "{err}");
    key.verifies = true;

    // A session: neither a challenge nor a value, whatever it holds.
    let socket = vyred
        .kernel
        .get::<dyn vyre::kernel::contracts::sockets::SessionSockets>()
        .unwrap()
        .open("t-reveal")
        .unwrap()
        .expect("a short enough path");
    let session = vyre::surfaces::client::Client::socket(&socket);
    let c = challenge("bank", "password").await;
    let answer = key.assert(RP, &c, ORIGIN).assertion(&key.id);
    for (tool, input) in [
        (
            "vault.presence.challenge",
            json!({ "for": "reveal", "name": "bank", "field": "password" }),
        ),
        (
            "vault.reveal",
            json!({ "name": "bank", "field": "password", "passkey": answer }),
        ),
        ("vault.passkey.list", json!({})),
        ("vault.passkey.add", key.add_input("mine", RP, &c, ORIGIN)),
    ] {
        let err = session.call(tool, &input).await.unwrap_err();
        assert!(err.to_string().contains("person_only"), "{tool}: {err}");
    }

    // Removed: the passkey proves nothing any more.
    let removed = sock
        .call("vault.passkey.remove", &json!({ "id": added["id"] }))
        .await
        .unwrap();
    assert_eq!(removed["removed"], true);
    let c = challenge("bank", "password").await;
    let answer = key.assert(RP, &c, ORIGIN).assertion(&key.id);
    let err = sock
        .call(
            "vault.reveal",
            &json!({ "name": "bank", "field": "password", "passkey": answer }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("passkey_unknown"), "{err}");

    let events = stored_events(&home.home().database());
    let kinds: Vec<&str> = events
        .iter()
        .map(|(_, k, _)| k.as_str())
        .filter(|k| k.starts_with("vault.") && *k != "vault.stored")
        .collect();
    assert_eq!(
        kinds,
        [
            "vault.passkey_added",
            "vault.revealed",
            "vault.passkey_removed"
        ]
    );
    let revealed = &events
        .iter()
        .find(|(_, k, _)| k == "vault.revealed")
        .unwrap()
        .2;
    assert_eq!(revealed["via"], "passkey:Laptop");
    for (_, _, payload) in &events {
        assert!(!payload.to_string().contains("pk-pass"), "{payload}");
    }
    vyred.stop().await;
}
