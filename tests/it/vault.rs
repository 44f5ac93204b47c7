//! The vault end to end: over the API, the CLI and a module's `ctx.vault()`, and a search of
//! everything vyred leaves behind for the values it was given.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

const SECRET: &str = "sk-test-Qz81mVb29XkLp0Tr";
const PASSWORD: &str = "correct-horse-battery-41";
const NOTE: &str = "recovery words: amber lantern quiet orbit";
const USERNAME: &str = "vault-user-7781";
const TOTP: &str = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";
const PASSPHRASE: &str = "a passphrase for the test";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_module_gets_a_value_only_when_declared_and_granted() {
    let home = TempHome::new("vault-grants");
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let sock = vyred.socket_client();
    sock.call("vault.put", &json!({ "name": "test-key", "value": SECRET }))
        .await
        .unwrap();
    sock.call(
        "vault.put",
        &json!({ "name": "declared-only", "value": SECRET }),
    )
    .await
    .unwrap();
    sock.call(
        "vault.put",
        &json!({ "name": "undeclared", "value": SECRET }),
    )
    .await
    .unwrap();
    sock.call(
        "vault.put",
        &json!({ "name": "test-login", "kind": "login", "username": USERNAME, "password": PASSWORD, "totp": TOTP }),
    )
    .await
    .unwrap();

    let fetch = |item: &str, expect: &str| {
        let sock = sock.clone();
        let input = json!({ "item": item, "expect": expect });
        async move { sock.call("probe.fetch", &input).await }
    };
    let err = fetch("test-key", SECRET).await.unwrap_err().to_string();
    assert!(
        err.contains("not_granted") && err.contains("vyre vault grant test-key"),
        "{err}"
    );
    sock.call("vault.grant", &json!({ "item": "test-key", "to": "probe" }))
        .await
        .unwrap();
    let got = fetch("test-key", SECRET).await.unwrap();
    assert_eq!(
        got,
        json!({ "kind": "secret", "matches": true, "totp_digits": null })
    );

    // Granted but not declared in the manifest: refused all the same.
    sock.call(
        "vault.grant",
        &json!({ "item": "undeclared", "to": "module:probe" }),
    )
    .await
    .unwrap();
    let err = fetch("undeclared", SECRET).await.unwrap_err().to_string();
    assert!(err.contains("not_declared"), "{err}");
    // Declared but granted to someone else.
    sock.call(
        "vault.grant",
        &json!({ "item": "declared-only", "to": "agent:probe" }),
    )
    .await
    .unwrap();
    assert!(
        fetch("declared-only", SECRET)
            .await
            .unwrap_err()
            .to_string()
            .contains("not_granted")
    );

    sock.call(
        "vault.grant",
        &json!({ "item": "test-login", "to": "probe" }),
    )
    .await
    .unwrap();
    let got = fetch("test-login", PASSWORD).await.unwrap();
    assert_eq!(
        got,
        json!({ "kind": "login", "matches": true, "totp_digits": 6 })
    );

    // A module cannot grant, put or read through the person-only tools.
    for (tool, input) in [
        (
            "vault.grant",
            json!({ "item": "undeclared", "to": "probe" }),
        ),
        ("vault.put", json!({ "name": "x", "value": "y" })),
        ("vault.rotate", json!({})),
    ] {
        let err = sock
            .call("probe.call", &json!({ "tool": tool, "input": input }))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("person_only"), "{tool}: {err}");
    }
    sock.call(
        "vault.revoke",
        &json!({ "item": "test-key", "to": "probe" }),
    )
    .await
    .unwrap();
    assert!(
        fetch("test-key", SECRET)
            .await
            .unwrap_err()
            .to_string()
            .contains("not_granted")
    );

    let list = sock.call("vault.list", &json!({})).await.unwrap();
    let login = list
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "test-login")
        .unwrap();
    assert_eq!(login["last_used_by"], "module:probe");
    assert_eq!(login["grants"], json!(["module:probe"]));
    vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_to_the_vault_gets_clear_errors() {
    let home = TempHome::new("vault-bad");
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let cases = [
        (
            json!({ "name": "a/b", "value": "v" }),
            "name: must not contain / or \\",
        ),
        (
            json!({ "name": "a\u{7}b", "value": "v" }),
            "a control character",
        ),
        (
            json!({ "name": "..", "value": "v" }),
            "name: must not be . or ..",
        ),
        (json!({ "name": "ok" }), "value: is required"),
        (
            json!({ "name": "ok", "value": "" }),
            "value: must not be empty",
        ),
        (
            json!({ "name": "ok", "kind": "login", "username": "u" }),
            "password: is required",
        ),
        (
            json!({ "name": "ok", "kind": "login", "password": "p", "totp": "not base32!" }),
            "totp: must be a base32 TOTP seed",
        ),
        (
            json!({ "name": "ok", "kind": "card", "value": "v" }),
            "number: is required",
        ),
        (
            json!({ "name": "ok", "kind": "card", "number": "4111 1111 1111 1111", "expiry": "13/29" }),
            "expiry: must be the expiry as MM/YY",
        ),
        (
            json!({ "name": "ok", "kind": "card", "number": "4111-abcd-1111" }),
            "number: must be a card number",
        ),
        (
            json!({ "name": "ok", "kind": "card", "number": "4111 1111 11" }),
            "a card number has 12 to 19 digits",
        ),
        (
            json!({ "name": "ok", "kind": "env", "vars": { "1BAD": "v" } }),
            "\"1BAD\" is not a variable's name",
        ),
        (
            json!({ "name": "ok", "kind": "passport", "value": "v" }),
            "kind: must be one of secret, login, note, card, env",
        ),
    ];
    for (input, expected) in cases {
        let err = sock
            .call("vault.put", &input)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(expected), "{input}: {err}");
    }
    sock.call("vault.put", &json!({ "name": "once", "value": "v1" }))
        .await
        .unwrap();
    let err = sock
        .call("vault.put", &json!({ "name": "once", "value": "v2" }))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("exists") && err.contains("--replace"), "{err}");
    let err = sock
        .call("vault.grant", &json!({ "item": "once", "to": "person:me" }))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("to: must name a module"), "{err}");
    let err = sock
        .call("vault.delete", &json!({ "name": "never" }))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown_item"), "{err}");

    // An export larger than any other call's body: a person's import takes it (and reads it as
    // an export); a session's is refused for its size before anything reads it.
    let big =
        json!({ "data": format!("name,password\n{}", "x,y\n".repeat(300_000)), "dry_run": true });
    let read = sock.call("vault.import", &big).await.unwrap();
    assert_eq!(
        read["imported"].as_array().unwrap().len(),
        300_000,
        "a person's 1.2 MB export"
    );
    let socket = vyred
        .kernel
        .get::<dyn vyre::kernel::contracts::sockets::SessionSockets>()
        .unwrap()
        .open("t-import")
        .unwrap()
        .expect("a short enough path");
    let err = vyre::surfaces::client::Client::socket(&socket)
        .call("vault.import", &big)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("too_large"), "{err}");
    vyred.stop().await;
}

/// Every value put into the vault, searched for in logs, events, HTTP answers and CLI output.
#[test]
fn no_value_shows_anywhere_after_a_full_scenario() {
    let home = TempHome::new("vault-scenario");
    let mut answers: Vec<String> = Vec::new();
    let run = |args: &[&str], stdin: Option<&str>| -> std::process::Output {
        use std::io::Write;
        let mut cmd = home.command();
        cmd.env("RUST_LOG", "debug")
            .env("VYRE_TEST_FAST_KDF", "1")
            .args(args);
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        if let Some(text) = stdin {
            input.write_all(text.as_bytes()).unwrap();
        }
        drop(input);
        child.wait_with_output().unwrap()
    };
    fn record_into(answers: &mut Vec<String>, out: &std::process::Output) {
        answers.push(String::from_utf8_lossy(&out.stdout).into_owned());
        answers.push(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    macro_rules! record {
        ($out:expr) => {
            record_into(&mut answers, $out)
        };
    }

    let up = run(&["up"], None);
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    record!(&up);
    let put = run(
        &["vault", "put", "anthropic-api-key"],
        Some(&format!("{SECRET}\n")),
    );
    assert!(
        put.status.success(),
        "{}",
        String::from_utf8_lossy(&put.stderr)
    );
    record!(&put);
    let login = run(
        &["vault", "put", "site", "--kind", "login"],
        Some(&format!("{USERNAME}\n{PASSWORD}\n{TOTP}\n")),
    );
    assert!(
        login.status.success(),
        "{}",
        String::from_utf8_lossy(&login.stderr)
    );
    record!(&login);
    record!(&run(
        &["vault", "put", "recovery", "--kind", "note"],
        Some(NOTE)
    ));
    // A duplicate is refused (and the refusal does not echo the value).
    let dup = run(
        &["vault", "put", "site", "--kind", "login"],
        Some(&format!("{USERNAME}\nother-pass\n")),
    );
    assert_eq!(dup.status.code(), Some(1));
    record!(&dup);
    record!(&run(
        &["vault", "grant", "anthropic-api-key", "sessions"],
        None
    ));
    record!(&run(&["vault", "list"], None));
    record!(&run(&["vault", "list", "--json"], None));
    record!(&run(&["vault", "rotate"], None));
    let pass = run(&["vault", "passphrase"], Some(PASSPHRASE));
    assert!(
        pass.status.success(),
        "{}",
        String::from_utf8_lossy(&pass.stderr)
    );
    record!(&pass);
    record!(&run(&["down"], None));
    record!(&run(&["up"], None));
    let locked = run(&["vault", "status", "--json"], None);
    let status: Value = serde_json::from_slice(&locked.stdout).unwrap();
    assert_eq!(status["state"], "locked");
    record!(&locked);
    let wrong = run(&["vault", "unlock"], Some("not the passphrase"));
    assert_eq!(wrong.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("passphrase is wrong"));
    record!(&wrong);
    let unlock = run(&["vault", "unlock"], Some(PASSPHRASE));
    assert!(
        unlock.status.success(),
        "{}",
        String::from_utf8_lossy(&unlock.stderr)
    );
    record!(&unlock);
    record!(&run(&["vault", "status"], None));
    let doctor = run(&["doctor"], None);
    let doc_text = String::from_utf8_lossy(&doctor.stdout).to_string();
    // A box with an API key and no setup token uses the key, and says why.
    assert!(
        doc_text.contains("api-key (the only credential in the vault)"),
        "{doc_text}"
    );
    assert!(doc_text.contains("API key fallback present"), "{doc_text}");
    record!(&doctor);
    record!(&run(&["events", "--since", "0", "--json"], None));

    // Over HTTP, as a device.
    let added = run(&["devices", "add", "scanner"], None);
    let token = serde_json::from_slice::<Value>(&added.stdout).unwrap()["token"]
        .as_str()
        .unwrap()
        .to_string();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let http = vyre::surfaces::client::Client::http(home.http_addr(), Some(token));
    rt.block_on(async {
        for tool in [
            "vault.list",
            "vault.status",
            "system.events",
            "system.status",
        ] {
            let out = http.call(tool, &json!({})).await.unwrap();
            answers.push(out.to_string());
        }
        let err = http
            .call(
                "vault.put",
                &json!({ "name": "anthropic-api-key", "value": SECRET }),
            )
            .await
            .unwrap_err();
        answers.push(err.to_string());
        let mut stream = http.events("since=0&follow=false", None).await.unwrap();
        while let Ok(Some(Ok(msg))) =
            tokio::time::timeout(Duration::from_secs(5), stream.next()).await
        {
            answers.push(msg.data);
        }
    });
    record!(&run(&["down"], None));

    let values = [SECRET, PASSWORD, NOTE, USERNAME, TOTP, PASSPHRASE];
    let mut places = left_behind(&home, answers);
    let key_file = std::fs::read_to_string(home.vyre_home().join("vault/master.key")).unwrap();
    places.push(("the key file".into(), key_file));
    assert!(places.len() > 30, "the scenario produced output to search");
    for value in values {
        for (place, text) in &places {
            assert!(!text.contains(value), "{value:?} shows in {place}");
        }
    }
    let log_text: String = places
        .iter()
        .filter(|(p, _)| p.contains("logs"))
        .map(|(_, t)| t.as_str())
        .collect();
    assert!(
        log_text.contains("vault"),
        "the logs were written (debug level) and searched"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vault_runs_on_the_real_secret_service() {
    if std::env::var_os("VYRE_TEST_SECRET_SERVICE").is_none() {
        eprintln!(
            "skipped: set VYRE_TEST_SECRET_SERVICE=1 inside a dbus session with a secrets daemon"
        );
        return;
    }
    let home = TempHome::new("vault-keychain");
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(
        home.home().config_file(),
        r#"{ "role": "local", "vault": { "keystore": "keychain" } }"#,
    )
    .unwrap();
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let sock = vyred.socket_client();
    sock.call("vault.put", &json!({ "name": "test-key", "value": SECRET }))
        .await
        .unwrap();
    sock.call("vault.grant", &json!({ "item": "test-key", "to": "probe" }))
        .await
        .unwrap();
    let status = sock.call("vault.status", &json!({})).await.unwrap();
    assert_eq!(status["keystore"], "keychain");
    assert_eq!(status["claude"]["mode"], "login", "the Mac's default");
    vyred.stop().await;
    assert!(
        !home.vyre_home().join("vault").exists(),
        "no key file beside the data"
    );
    // The key lives in the Secret Service, so a restarted vyred opens the item.
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let got = vyred
        .socket_client()
        .call(
            "probe.fetch",
            &json!({ "item": "test-key", "expect": SECRET }),
        )
        .await
        .unwrap();
    assert_eq!(got["matches"], true);
    vyred.stop().await;
}

#[test]
fn without_a_keychain_the_vault_says_so_and_stores_nothing() {
    let home = TempHome::new("vault-no-keychain");
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(
        home.home().config_file(),
        r#"{ "role": "local", "vault": { "keystore": "keychain" } }"#,
    )
    .unwrap();
    // The test's environment is cleared: no session bus, so no keychain to reach.
    let _vyred = home.spawn_daemon();
    let status = home.vyre(&["vault", "status", "--json"]);
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["state"], "keystore_unavailable", "{status}");
    let out = home.vyre(&["status"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("vault        started"),
        "vyred and the module still run"
    );
    let mut cmd = home.command();
    let out = cmd
        .args(["vault", "put", "test-key"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(SECRET.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("keychain is not available") && err.contains("keystore_unavailable"),
        "{err}"
    );
    let list = home.vyre(&["vault", "list", "--json"]);
    assert_eq!(
        String::from_utf8_lossy(&list.stdout).trim(),
        "[]",
        "nothing was stored, in plain text or otherwise"
    );
    assert!(!home.vyre_home().join("vault").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_passwords_and_passphrases_from_the_api_and_the_cli_stored_unseen() {
    let home = TempHome::new("vault-generate");
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let made = sock.call("vault.generate", &json!({})).await.unwrap();
    let password = made["value"].as_str().unwrap();
    assert_eq!(password.chars().count(), 20, "{made}");
    assert!(made["bits"].as_f64().unwrap() > 129.0, "{made}");
    let made = sock
        .call(
            "vault.generate",
            &json!({ "kind": "passphrase", "words": 7, "separator": " " }),
        )
        .await
        .unwrap();
    assert_eq!(made["value"].as_str().unwrap().split(' ').count(), 7);
    let err = sock
        .call("vault.generate", &json!({ "length": 4 }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("invalid_input"), "{err}");

    // The terminal: printed alone, to pipe it; or stored and never shown.
    let out = home.vyre(&["vault", "generate", "--words", "5", "--separator", "."]);
    assert!(out.status.success(), "{out:?}");
    let printed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(printed.trim_end().split('.').count(), 5, "{printed}");
    let out = home.vyre(&["vault", "generate", "--length", "32", "--put", "gen-key"]);
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(said.starts_with("Stored gen-key (secret"), "{said}");
    assert!(
        !said.split_whitespace().any(|w| w.chars().count() == 32),
        "the value is not shown: {said}"
    );
    let list = sock.call("vault.list", &json!({})).await.unwrap();
    assert!(
        list.as_array()
            .unwrap()
            .iter()
            .any(|i| i["name"] == "gen-key"),
        "{list}"
    );
    let out = home.vyre(&["vault", "generate", "--length", "7"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("length: at least 8"),
        "{out:?}"
    );
    vyred.stop().await;
}

/// A base32 TOTP seed of its own for item `i`.
fn seed_for(i: usize) -> String {
    const B32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let tail: String = (0..8).map(|k| B32[(i >> (5 * k)) & 31] as char).collect();
    format!("GEZDGNBV{tail}")
}

/// A Bitwarden export of 500 logins, 5 notes and 3 cards (every value its own) and an identity.
pub(crate) fn bitwarden_export() -> (Value, Vec<String>) {
    let mut items = Vec::new();
    let mut values = Vec::new();
    for i in 0..500 {
        let (user, pass, note) = (
            format!("imp-user-{i:04}@example.test"),
            format!("imp-pass-{i:04}-Zq8"),
            format!("imp-note-{i:04}-recovery"),
        );
        let seed = seed_for(i);
        items.push(json!({
            "type": 1, "name": format!("Site {i:03}"), "notes": note,
            "login": { "uris": [{ "uri": format!("https://site{i}.example.test") }],
                       "username": user, "password": pass, "totp": seed }
        }));
        values.extend([user, pass, note, seed]);
    }
    for i in 0..5 {
        let text = format!("imp-secure-note-{i}-words");
        items.push(json!({ "type": 2, "name": format!("Note {i}"), "notes": text, "secureNote": { "type": 0 } }));
        values.push(text);
    }
    for i in 0..3 {
        let (number, holder) = (format!("41111111111{i:05}"), format!("imp-holder-{i}"));
        items.push(json!({ "type": 3, "name": format!("Card {i}"),
            "card": { "number": number, "cardholderName": holder, "expMonth": "12", "expYear": "2031" } }));
        values.extend([number, holder]);
    }
    items.push(json!({ "type": 4, "name": "Me", "identity": { "firstName": "Sam" } }));
    (
        json!({ "encrypted": false, "folders": [], "items": items }),
        values,
    )
}

#[test]
fn a_500_item_export_is_dry_run_then_imported_and_no_value_or_path_shows_anywhere() {
    let home = TempHome::new("vault-import");
    let run = |args: &[&str]| -> std::process::Output {
        let mut cmd = home.command();
        cmd.env("RUST_LOG", "debug").args(args);
        cmd.stdin(std::process::Stdio::null()).output().unwrap()
    };
    let mut answers: Vec<String> = Vec::new();
    let mut record = |out: &std::process::Output| {
        answers.push(String::from_utf8_lossy(&out.stdout).into_owned());
        answers.push(String::from_utf8_lossy(&out.stderr).into_owned());
    };
    let up = run(&["up"]);
    assert!(up.status.success(), "{up:?}");
    let (export, values) = bitwarden_export();
    let file = home.dir.join("bitwarden_export_2026.json");
    std::fs::write(&file, export.to_string()).unwrap();
    let path = file.to_str().unwrap();

    let dry = run(&["vault", "import", path, "--dry-run"]);
    assert!(dry.status.success(), "{dry:?}");
    let said = String::from_utf8_lossy(&dry.stdout).to_string();
    assert!(
        said.starts_with("Would import 508 item(s) from a bitwarden-json export."),
        "{said}"
    );
    assert!(
        said.contains("Skipped 1:") && said.contains("\"Me\": an identity"),
        "{said}"
    );
    assert!(said.contains("Nothing was stored."), "{said}");
    record(&dry);
    let listed = run(&["vault", "list", "--json"]);
    assert_eq!(
        serde_json::from_slice::<Value>(&listed.stdout).unwrap(),
        json!([]),
        "a dry run stores nothing"
    );

    let done = run(&["vault", "import", path, "--json"]);
    assert!(done.status.success(), "{done:?}");
    let out: Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(out["imported"].as_array().unwrap().len(), 508);
    assert_eq!(out["skipped"].as_array().unwrap().len(), 1);
    record(&done);
    let listed = run(&["vault", "list", "--json"]);
    let list: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let items = list.as_array().unwrap();
    assert_eq!(items.len(), 508);
    let site = items.iter().find(|i| i["name"] == "Site 042").unwrap();
    assert_eq!(site["kind"], "login");
    assert_eq!(site["urls"], json!(["https://site42.example.test"]));
    let card = items.iter().find(|i| i["name"] == "Card 1").unwrap();
    assert_eq!(
        (&card["kind"], &card["last4"], &card["expiry"]),
        (&json!("card"), &json!("0001"), &json!("12/31")),
        "a card's last four and expiry are listed: {card}"
    );
    record(&listed);

    // Again: every name is taken, so each is skipped, or kept beside as "(2)" when asked.
    let again = run(&["vault", "import", path, "--json"]);
    let out: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(out["imported"], json!([]));
    assert!(
        out["skipped"][0]["why"]
            .as_str()
            .unwrap()
            .contains("is in the vault"),
        "{out}"
    );
    record(&again);
    let renamed = run(&[
        "vault",
        "import",
        path,
        "--on-duplicate",
        "rename",
        "--prefix",
        "bw-",
    ]);
    assert!(
        String::from_utf8_lossy(&renamed.stdout).starts_with("Imported 508"),
        "a prefix makes new names: {renamed:?}"
    );
    record(&renamed);

    // Bad input: said, and nothing is stored.
    let bad = home.dir.join("broken.json");
    std::fs::write(&bad, r#"{"encrypted": true, "items": []}"#).unwrap();
    let refused = run(&["vault", "import", bad.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("encrypted"),
        "{refused:?}"
    );
    let missing = run(&["vault", "import", "/nonexistent/export.csv"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read the export"));
    record(&run(&["events", "--since", "0", "--json"]));
    record(&run(&["down"]));

    let places = left_behind(&home, answers);
    // Every value starts with one of these (the seeds, a prefix no other text has): a place
    // that holds none of them holds no value, and a search for each of the 2,000 values in
    // megabytes of debug logs would take minutes.
    let marks = [
        "imp-user-",
        "imp-pass-",
        "imp-note-",
        "imp-secure-note-",
        "GEZDGNBV",
        "41111111111",
        "imp-holder-",
    ];
    for value in &values {
        assert!(marks.iter().any(|m| value.starts_with(m)), "{value}");
    }
    for (place, text) in &places {
        for mark in marks.iter().chain(&["bitwarden_export_2026"]) {
            if let Some(at) = text.find(mark) {
                let shown: String = text[at..].chars().take(40).collect();
                panic!("{shown:?} shows in {place}");
            }
        }
    }
}

/// Where a value could show after a run: the answers given, the logs, the stored events, and the
/// database file and its WAL as bytes.
pub(crate) fn left_behind(home: &TempHome, answers: Vec<String>) -> Vec<(String, String)> {
    let mut places: Vec<(String, String)> = answers
        .into_iter()
        .map(|a| ("an answer".to_string(), a))
        .collect();
    for entry in std::fs::read_dir(home.home().logs()).unwrap() {
        let path = entry.unwrap().path();
        places.push((
            path.display().to_string(),
            std::fs::read_to_string(&path).unwrap_or_default(),
        ));
    }
    for (id, kind, payload) in stored_events(&home.home().database()) {
        places.push((format!("event {id} ({kind})"), payload.to_string()));
    }
    let db = home.home().database();
    for file in [db.clone(), db.with_extension("db-wal")] {
        if let Ok(bytes) = std::fs::read(&file) {
            places.push((
                file.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
    places
}
