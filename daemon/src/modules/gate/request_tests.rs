//! The Gate's request: approvals, masking, what the person is shown.

use super::*;

fn input(body: &str) -> RequestInput {
    RequestInput {
        method: "POST".into(),
        url: "https://api.example.com/x".into(),
        headers: BTreeMap::new(),
        body: Some(body.into()),
    }
}

#[test]
fn an_approval_runs_one_call_of_its_thread_with_its_exact_input() {
    let b = Boundary::new(vec![]);
    b.held("i1", "t1", input("hello"));
    assert_eq!(b.take("t1", &input("hello")), None, "held is not approved");
    b.approve("i1", None);
    assert_eq!(b.take("t2", &input("hello")), None, "another thread's");
    assert_eq!(b.take("t1", &input("hello!")), None, "another input");
    assert_eq!(b.take("t1", &input("hello")).as_deref(), Some("i1"));
    assert_eq!(b.take("t1", &input("hello")), None, "once");

    b.held("i2", "t1", input("draft"));
    b.approve("i2", Some("final words"));
    assert_eq!(b.take("t1", &input("draft")), None, "the edit is what goes");
    assert_eq!(b.take("t1", &input("final words")).as_deref(), Some("i2"));

    b.held("i3", "t1", input("x"));
    b.forget("i3");
    b.approve("i3", None);
    assert_eq!(
        b.take("t1", &input("x")),
        None,
        "a forgotten item approves nothing"
    );
}

#[test]
fn an_answer_is_masked_before_it_is_cut() {
    let mut m = Masker::default();
    m.add("SECRETVALUE", "{{vault:k}}");
    let long = format!("{}SECRETVALUE", "a".repeat(TEXT_MAX - 5));
    let (body, cut) = text(long.as_bytes(), false, &m);
    let body = body.unwrap();
    assert!(cut);
    assert!(!body.contains("SECRE"), "no half value at the cut");
    let (none, _) = text(&[0xff, 0xfe], false, &m);
    assert!(none.is_none());
    let (some, cut) = text("ok é".as_bytes().split_at(4).0, true, &m);
    assert_eq!((some.as_deref(), cut), (Some("ok "), true));
}

#[test]
fn what_the_person_sees_names_the_items_never_a_value() {
    let mut i = input("{\"t\": \"{{vault:hook}}\"}");
    i.headers
        .insert("Authorization".into(), "Bearer {{vault:gh}}".into());
    let (_, shape) = read(&serde_json::to_value(&i).unwrap()).unwrap();
    let shown = show(&i, &shape);
    assert_eq!(
        shown.destination,
        "POST https://api.example.com/x (the Gate adds from the vault: gh, hook)"
    );
    assert!(shown.content.contains("Authorization: Bearer {{vault:gh}}"));
    assert_eq!(shown.field.as_deref(), Some("body"));
    assert_eq!(
        held(&shape).what,
        "an HTTP POST to api.example.com with the vault items gh, hook"
    );
    assert!(is_request("mcp__plugin_vyre_vyre__gate_request"));
    assert!(!is_request("mcp__x__gate_requests"));
}

#[test]
fn an_env_sets_variable_is_filled_by_name_and_other_kinds_say_they_have_none() {
    use crate::kernel::contracts::secret::Secret;
    let set = VaultValue::Env(vec![
        ("API_TOKEN".into(), Secret::new("tok-123456".into())),
        ("REGION".into(), Secret::new("eu-west-1".into())),
    ]);
    let var = |v: &str| Field::Var(v.into());
    assert_eq!(
        field("deploy", &set, &var("REGION")).unwrap().as_str(),
        "eu-west-1"
    );
    assert_eq!(
        field("deploy", &set, &var("API_TOKEN")).unwrap().as_str(),
        "tok-123456"
    );
    let missing = field("deploy", &set, &var("NOPE")).unwrap_err();
    assert!(missing.contains("no variable \"NOPE\""), "{missing}");
    let secret = VaultValue::Secret(Secret::new("plain-secret".into()));
    let not_env = field("gh", &secret, &var("REGION")).unwrap_err();
    assert!(not_env.contains("not an env set"), "{not_env}");
    // A variable named like a login's field is the variable, on an env set.
    let named = VaultValue::Env(vec![
        ("password".into(), Secret::new("db-pass-5521".into())),
        ("totp".into(), Secret::new("not-a-seed".into())),
    ]);
    assert_eq!(
        field("db", &named, &Field::Password).unwrap().as_str(),
        "db-pass-5521"
    );
    assert_eq!(
        field("db", &named, &Field::Totp).unwrap().as_str(),
        "not-a-seed"
    );
    let none = field("db", &named, &Field::Username).unwrap_err();
    assert!(none.contains("no variable \"username\""), "{none}");
}
