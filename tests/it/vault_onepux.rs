//! A 1Password `.1pux` export imported from the terminal (issue 27): the CLI sends the archive,
//! vyred reads its `export.data` in memory, and no value, nor the file's path, shows anywhere.

use serde_json::{Value, json};

use crate::support::*;

#[test]
fn a_1pux_is_imported_from_the_terminal_and_leaves_no_value_or_path_behind() {
    let home = TempHome::new("vault-1pux");
    let run = |args: &[&str]| -> std::process::Output {
        let mut cmd = home.command();
        cmd.env("RUST_LOG", "debug").args(args);
        cmd.stdin(std::process::Stdio::null()).output().unwrap()
    };
    assert!(run(&["up"]).status.success());
    let items = json!([
        { "uuid": "a", "state": "active", "categoryUuid": "001",
          "overview": { "title": "Forum", "urls": [{ "url": "https://forum.example.test" }] },
          "details": { "notesPlain": "pux1-note", "loginFields": [
              { "value": "pux1-user", "designation": "username" },
              { "value": "pux1-pass", "designation": "password" } ] } },
        { "uuid": "b", "state": "active", "categoryUuid": "002",
          "overview": { "title": "Card" },
          "details": { "sections": [{ "fields": [
              { "id": "ccnum", "value": { "creditCardNumber": "5555444433331111" } },
              { "id": "cvv", "value": { "concealed": "pux1-cvv" } } ] }] } },
        { "uuid": "c", "state": "active", "categoryUuid": "004", "overview": { "title": "Me" }, "details": {} }
    ]);
    let data =
        json!({ "accounts": [{ "vaults": [{ "attrs": { "name": "Private" }, "items": items }] }] });
    let zip = vyre::kernel::unzip::write(&[("export.data", data.to_string().as_bytes(), true)]);
    let file = home.dir.join("onepassword_export_2026.1pux");
    std::fs::write(&file, zip).unwrap();
    let path = file.to_str().unwrap();

    let dry = run(&["vault", "import", path, "--dry-run"]);
    let said = String::from_utf8_lossy(&dry.stdout).to_string();
    assert!(dry.status.success(), "{dry:?}");
    assert!(
        said.starts_with("Would import 2 item(s) from a onepassword-1pux export."),
        "{said}"
    );
    assert!(said.contains("\"Me\": an identity"), "{said}");
    let done = run(&["vault", "import", path, "--json"]);
    assert!(done.status.success(), "{done:?}");
    let out: Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(out["imported"].as_array().unwrap().len(), 2, "{out}");
    let listed = run(&["vault", "list", "--json"]);
    let list: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let kinds: Vec<(&str, &str)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["name"].as_str().unwrap(), i["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("Card", "card"), ("Forum", "login")]);
    let answers = [&dry, &done, &listed, &run(&["down"])]
        .iter()
        .flat_map(|o| {
            [
                String::from_utf8_lossy(&o.stdout).into_owned(),
                String::from_utf8_lossy(&o.stderr).into_owned(),
            ]
        })
        .collect();
    for (place, text) in super::vault::left_behind(&home, answers) {
        for value in ["pux1-", "5555444433331111", "onepassword_export_2026"] {
            assert!(!text.contains(value), "{value:?} shows in {place}");
        }
    }
}
