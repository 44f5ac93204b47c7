//! A `.1pux` as 1Password writes it (made-up items): each category kept or skipped with why.

use base64::Engine;
use serde_json::json;

use super::super::formats::{Format, read};
use crate::kernel::contracts::secret::VaultValue;

const SEED: &str = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";

fn item(category: &str, title: &str, details: serde_json::Value) -> serde_json::Value {
    json!({ "uuid": title, "state": "active", "categoryUuid": category, "details": details,
            "overview": { "title": title, "urls": [], "tags": [] } })
}

/// An export of the items, zipped (deflated) and in base64, as `vyre vault import` sends it.
fn onepux(items: Vec<serde_json::Value>) -> String {
    let data = json!({ "accounts": [{ "attrs": { "accountName": "Sam" },
        "vaults": [{ "attrs": { "name": "Personal" }, "items": items }] }] })
    .to_string();
    let zip = crate::kernel::unzip::write(&[
        ("export.attributes", b"{\"version\":3}", false),
        ("export.data", data.as_bytes(), true),
    ]);
    base64::engine::general_purpose::STANDARD.encode(zip)
}

#[test]
fn a_1pux_keeps_logins_cards_notes_passwords_and_credentials_and_says_what_it_skips() {
    let mut login = item(
        "001",
        "Mail",
        json!({
            "loginFields": [
                { "value": "sam@example.test", "name": "username", "fieldType": "T", "designation": "username" },
                { "value": "pux-pw-1", "name": "password", "fieldType": "P", "designation": "password" }
            ],
            "notesPlain": "backup codes 1 2",
            "sections": [{ "title": "", "fields": [
                { "title": "one-time password", "id": "TOTP_1", "value": { "totp": format!("otpauth://totp/Mail?secret={SEED}") } },
                { "title": "PIN", "id": "pin", "value": { "concealed": "0042" } }
            ] }]
        }),
    );
    login["overview"]["urls"] = json!([{ "label": "", "url": "https://mail.example.test" }]);
    let card = item(
        "002",
        "Visa",
        json!({ "sections": [{ "title": "", "fields": [
            { "title": "cardholder name", "id": "cardholder", "value": { "string": "Sam Example" } },
            { "title": "number", "id": "ccnum", "value": { "creditCardNumber": "4111 1111 1111 1111" } },
            { "title": "verification number", "id": "cvv", "value": { "concealed": "321" } },
            { "title": "expiry date", "id": "expiry", "value": { "monthYear": 202907 } }
        ] }] }),
    );
    let mut archived = item(
        "001",
        "Old",
        json!({ "loginFields": [{ "value": "x", "designation": "password" }] }),
    );
    archived["state"] = json!("archived");
    let items = vec![
        login,
        card,
        item("003", "Door", json!({ "notesPlain": "4711" })),
        item(
            "005",
            "Router",
            json!({ "password": "pux-pw-2", "notesPlain": "admin page" }),
        ),
        item(
            "112",
            "Stripe",
            json!({ "sections": [{ "fields": [
                { "title": "username", "id": "username", "value": { "string": "acct" } },
                { "title": "credential", "id": "credential", "value": { "concealed": "sk_pux_3" } }
            ] }] }),
        ),
        archived,
        item("004", "Me", json!({})),
        item("106", "Passport", json!({})),
    ];
    let data = onepux(items);
    let r = read(&data, None).unwrap();
    assert_eq!(
        r.format,
        Format::Onepassword1pux,
        "found by its first bytes"
    );
    let titles: Vec<&str> = r.entries.iter().map(|e| e.title.as_str()).collect();
    assert_eq!(titles, ["Mail", "Visa", "Door", "Router", "Stripe"]);
    let VaultValue::Login {
        username,
        password,
        totp,
        notes,
    } = &r.entries[0].value
    else {
        panic!("a login");
    };
    assert_eq!(
        (username.expose(), password.expose()),
        ("sam@example.test", "pux-pw-1")
    );
    assert_eq!(totp.as_ref().unwrap().expose(), SEED);
    assert_eq!(
        notes.as_ref().unwrap().expose(),
        "backup codes 1 2\nPIN: 0042"
    );
    assert_eq!(r.entries[0].urls, ["https://mail.example.test"]);
    let VaultValue::Card {
        number,
        holder,
        expiry,
        code,
        ..
    } = &r.entries[1].value
    else {
        panic!("a card");
    };
    assert_eq!(
        (
            number.expose(),
            holder.expose(),
            expiry.expose(),
            code.expose()
        ),
        ("4111111111111111", "Sam Example", "07/29", "321")
    );
    assert!(matches!(&r.entries[2].value, VaultValue::Note(n) if n.expose() == "4711"));
    let VaultValue::Login {
        password, notes, ..
    } = &r.entries[3].value
    else {
        panic!("a password, kept as a login");
    };
    assert_eq!(
        (password.expose(), notes.as_ref().unwrap().expose()),
        ("pux-pw-2", "admin page")
    );
    let VaultValue::Login {
        username, password, ..
    } = &r.entries[4].value
    else {
        panic!("an API credential, kept as a login");
    };
    assert_eq!((username.expose(), password.expose()), ("acct", "sk_pux_3"));
    let skipped: Vec<(usize, &str)> = r.skipped.iter().map(|s| (s.at, s.why.as_str())).collect();
    assert_eq!(
        skipped,
        [
            (6, "archived in 1Password"),
            (7, "an identity: identities are not kept by the vault"),
            (8, "a passport item: this kind is not kept by the vault yet"),
        ]
    );
    assert_eq!(
        read(&data, Some(Format::Onepassword1pux))
            .unwrap()
            .entries
            .len(),
        5
    );
}

#[test]
fn what_is_not_a_1pux_is_refused_in_words() {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let said = |data: &str| match read(data, Some(Format::Onepassword1pux)) {
        Ok(_) => panic!("read"),
        Err(e) => e.to_string(),
    };
    assert!(said("not base64 at all!").contains("not base64"));
    assert!(said(&b64(b"just some bytes")).contains("not a 1Password .1pux export"));
    let no_data = crate::kernel::unzip::write(&[("other.txt", b"x", false)]);
    assert!(said(&b64(&no_data)).contains("has no export.data"));
    let not_json = crate::kernel::unzip::write(&[("export.data", b"{nope", true)]);
    assert!(said(&b64(&not_json)).contains("not JSON"));
    let no_accounts = crate::kernel::unzip::write(&[("export.data", b"{}", true)]);
    assert!(said(&b64(&no_accounts)).contains("no \"accounts\""));
}
