//! Each export format read as its app writes it (made-up items), and what is refused or skipped.

use super::formats::{Format, read, totp_seed};
use super::*;
use crate::kernel::contracts::secret::VaultValue;

const SEED: &str = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";

fn login(v: &VaultValue) -> (&str, &str, Option<&str>, Option<&str>) {
    match v {
        VaultValue::Login {
            username,
            password,
            totp,
            notes,
        } => (
            username.expose(),
            password.expose(),
            totp.as_ref().map(|t| t.expose()),
            notes.as_ref().map(|n| n.expose()),
        ),
        other => panic!("not a login: {:?}", other.kind()),
    }
}

#[test]
fn a_bitwarden_json_export_keeps_logins_notes_fields_and_totp_and_says_what_it_skips() {
    let data = serde_json::json!({
        "encrypted": false,
        "folders": [],
        "items": [
            { "type": 1, "name": "Mail", "notes": "backup codes 1 2 3",
              "fields": [{ "name": "PIN", "value": "0042", "type": 1 }],
              "login": { "uris": [{ "uri": "https://mail.example.test" }, { "uri": "https://m.example.test" }],
                         "username": "sam@example.test", "password": "pw-one", "totp": format!("otpauth://totp/Mail:sam?secret={SEED}&issuer=Mail") } },
            { "type": 2, "name": "Door code", "notes": "4711", "secureNote": { "type": 0 } },
            { "type": 3, "name": "Visa", "card": { "cardholderName": "Sam Example", "number": "4111 1111 1111 1111", "expMonth": "8", "expYear": "2029", "code": "123" } },
            { "type": 3, "name": "No number", "card": { "number": "41" } },
            { "type": 1, "name": "Passkey only", "login": { "username": "sam", "password": null } },
            { "type": 1, "name": "Odd TOTP", "login": { "username": "u", "password": "pw-two", "totp": format!("otpauth://totp/x?secret={SEED}&algorithm=SHA256") } },
            { "type": 4, "name": "Me", "identity": {} }
        ]
    })
    .to_string();
    let r = read(&data, None).unwrap();
    assert_eq!(r.format, Format::BitwardenJson);
    assert_eq!(r.entries.len(), 4);
    let mail = &r.entries[0];
    assert_eq!((mail.at, mail.title.as_str()), (1, "Mail"));
    assert_eq!(
        login(&mail.value),
        (
            "sam@example.test",
            "pw-one",
            Some(SEED),
            Some("backup codes 1 2 3\nPIN: 0042")
        )
    );
    assert_eq!(
        mail.urls,
        ["https://mail.example.test", "https://m.example.test"]
    );
    assert!(matches!(&r.entries[1].value, VaultValue::Note(n) if n.expose() == "4711"));
    let VaultValue::Card {
        number,
        holder,
        expiry,
        code,
        notes,
    } = &r.entries[2].value
    else {
        panic!("a card: {:?}", r.entries[2].value);
    };
    assert_eq!(
        (
            number.expose(),
            holder.expose(),
            expiry.expose(),
            code.expose()
        ),
        ("4111111111111111", "Sam Example", "08/29", "123")
    );
    assert!(notes.is_none());
    // A TOTP whose codes Vyre does not make is kept in the notes, and said.
    let odd = &r.entries[3];
    let (_, _, totp, notes) = login(&odd.value);
    assert_eq!(totp, None);
    assert!(notes.unwrap().contains("algorithm=SHA256"), "nothing lost");
    assert!(odd.note.as_deref().unwrap().contains("SHA-1"));
    let skipped: Vec<(usize, &str)> = r.skipped.iter().map(|s| (s.at, s.why.as_str())).collect();
    assert_eq!(skipped.len(), 3, "{skipped:?}");
    assert!(skipped[0].1.contains("card without a number") && skipped[0].0 == 4);
    assert!(skipped[1].1.contains("without a password") && skipped[1].0 == 5);
    assert!(skipped[2].1.contains("identity"));
}

#[test]
fn the_csv_exports_are_read_by_their_columns() {
    let cases = [
        (
            "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n\
             ,,login,Forge,\"two\nlines\",,0,https://forge.example.test,sam,pw-forge,JBSWY3DPEHPK3PXP\n\
             ,,note,Wifi,guest-pass,,0,,,,\n",
            Format::BitwardenCsv,
        ),
        (
            "Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes\n\
             Forge,https://forge.example.test,sam,pw-forge,otpauth://totp/F?secret=JBSWY3DPEHPK3PXP,false,false,,\"two\nlines\"\n",
            Format::OnepasswordCsv,
        ),
        (
            "name,url,username,password,note\nForge,https://forge.example.test,sam,pw-forge,\"two\nlines\"\n",
            Format::ChromeCsv,
        ),
        (
            "Title,URL,Username,Password,Notes,OTPAuth\nForge,https://forge.example.test,sam,pw-forge,\"two\nlines\",otpauth://totp/F?secret=JBSWY3DPEHPK3PXP\n",
            Format::SafariCsv,
        ),
        (
            "\"url\",\"username\",\"password\",\"httpRealm\",\"formActionOrigin\",\"guid\",\"timeCreated\",\"timeLastUsed\",\"timePasswordChanged\"\n\
             \"https://forge.example.test/login\",\"sam\",\"pw-forge\",,\"\",\"{1}\",\"1\",\"1\",\"1\"\n",
            Format::FirefoxCsv,
        ),
    ];
    for (data, format) in cases {
        let r = read(data, None).unwrap();
        assert_eq!(r.format, format, "{data}");
        let forge = &r.entries[0];
        let (user, pass, totp, notes) = login(&forge.value);
        assert_eq!((user, pass), ("sam", "pw-forge"), "{format:?}");
        match format {
            Format::FirefoxCsv => {
                assert_eq!(forge.title, "forge.example.test", "named by its site");
                assert_eq!(notes, None);
            }
            Format::ChromeCsv => assert_eq!(totp, None),
            _ => assert_eq!(totp, Some("JBSWY3DPEHPK3PXP"), "{format:?}"),
        }
        if format != Format::FirefoxCsv {
            assert_eq!(forge.title, "Forge");
            assert_eq!(notes, Some("two\nlines"), "{format:?}");
        }
        assert!(forge.urls[0].starts_with("https://forge.example.test"));
    }
    let bw = read(cases_bitwarden_note(), None).unwrap();
    assert!(matches!(&bw.entries[0].value, VaultValue::Note(n) if n.expose() == "guest-pass"));
}

fn cases_bitwarden_note() -> &'static str {
    "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n,,note,Wifi,guest-pass,,0,,,,\n"
}

#[test]
fn exports_that_cannot_be_read_are_refused_with_why() {
    for (data, says) in [
        (
            r#"{"encrypted": true, "items": []}"#.to_string(),
            "encrypted",
        ),
        (r#"{"folders": []}"#.to_string(), "no \"items\""),
        ("{ not json".to_string(), "not JSON"),
        (
            "name,url,username\nx,y,z\n".to_string(),
            "no password column",
        ),
        ("".to_string(), "no password column"),
        ("x".repeat(formats::MAX_FILE + 1), "at most 16 MiB"),
    ] {
        let e = match read(&data, None) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("read: {}", &data[..data.len().min(40)]),
        };
        assert!(e.contains(says), "{e}");
    }
    // A huge note: the rest is read, the huge one is said.
    let huge = "a".repeat(formats::MAX_ITEM + 1);
    let data = format!("name,url,username,password,note\nBig,,u,p,{huge}\nOk,,u,p,\n");
    let r = read(&data, None).unwrap();
    assert_eq!(r.entries.len(), 1);
    assert_eq!(r.entries[0].title, "Ok");
    assert!(
        r.skipped[0].why.contains("larger than 1 MiB"),
        "{:?}",
        r.skipped
    );
}

#[test]
fn a_totp_is_a_seed_or_an_otpauth_uri_whose_codes_vyre_makes() {
    assert_eq!(totp_seed("").unwrap(), None);
    assert_eq!(totp_seed(SEED).unwrap().unwrap().expose(), SEED);
    let uri = format!(
        "otpauth://totp/Acme%3Asam?secret={SEED}&issuer=Acme&algorithm=SHA1&digits=6&period=30"
    );
    assert_eq!(totp_seed(&uri).unwrap().unwrap().expose(), SEED);
    assert!(totp_seed("otpauth://hotp/x?secret=AAAA").is_err());
    assert!(totp_seed(&format!("otpauth://totp/x?secret={SEED}&digits=8")).is_err());
    assert!(totp_seed("otpauth://totp/x?issuer=none").is_err());
    assert!(totp_seed("not base32!").is_err());
}

#[test]
fn names_are_made_from_titles_as_the_vault_takes_them() {
    assert_eq!(name_for("", "Mail / Work", 1), "Mail - Work");
    assert_eq!(name_for("bw-", "  spaced\tout ", 2), "bw-spaced out");
    assert_eq!(name_for("", "", 7), "imported-7");
    assert_eq!(name_for("", "..", 8), "imported-8");
    assert_eq!(name_for("", &"x".repeat(300), 9).chars().count(), 128);
    for title in ["a/b", "\u{7}bell", " ", "ok"] {
        assert!(
            valid_item_name(&name_for("", title, 3)).is_ok(),
            "{title:?}"
        );
    }
    let taken: HashSet<String> = ["Mail".to_string(), "Mail (2)".to_string()].into();
    let mut tried = HashMap::new();
    assert_eq!(free_name("Mail", &taken, &mut tried), "Mail (3)");
    assert_eq!(free_name("Other", &taken, &mut tried), "Other");
}

#[test]
fn many_items_of_one_title_each_get_the_next_free_name() {
    // An export of 50,000 items titled alike: each a step on from the last (a search from
    // " (2)" for each would be 1.25 billion lookups), around a name the vault already has.
    let mut taken: HashSet<String> = ["x".to_string(), "x (4)".to_string()].into();
    let mut tried = HashMap::new();
    let mut given = Vec::new();
    for _ in 0..50_000 {
        let name = free_name("x", &taken, &mut tried);
        taken.insert(name.clone());
        given.push(name);
    }
    assert_eq!(&given[..4], ["x (2)", "x (3)", "x (5)", "x (6)"]);
    assert_eq!(given.last().unwrap(), "x (50002)");
    let distinct: HashSet<&String> = given.iter().collect();
    assert_eq!(distinct.len(), 50_000);
}
