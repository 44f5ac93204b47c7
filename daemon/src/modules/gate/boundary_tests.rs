use super::*;

fn r(item: &str, field: Field) -> Ref {
    Ref {
        item: item.into(),
        field,
    }
}

fn headers(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn references_are_read_with_their_fields() {
    let mut found = BTreeSet::new();
    refs(
        "Bearer {{vault:gh token}} and {{vault:bank/username}}:{{vault:bank/totp}} {{vault:a.b}}",
        &mut found,
    )
    .unwrap();
    let want: BTreeSet<Ref> = [
        r("gh token", Field::Value),
        r("bank", Field::Username),
        r("bank", Field::Totp),
        r("a.b", Field::Value),
    ]
    .into();
    assert_eq!(found, want);
    assert_eq!(
        r("bank", Field::Basic).placeholder(),
        "{{vault:bank/basic}}"
    );
    assert_eq!(r("x", Field::Value).placeholder(), "{{vault:x}}");
    // An env set's variable, by its name; the reference reads back as written.
    let mut found = BTreeSet::new();
    refs(
        "{{vault:deploy/API_TOKEN}} {{vault:deploy/region_2}}",
        &mut found,
    )
    .unwrap();
    let want: BTreeSet<Ref> = [
        r("deploy", Field::Var("API_TOKEN".into())),
        r("deploy", Field::Var("region_2".into())),
    ]
    .into();
    assert_eq!(found, want);
    assert_eq!(
        r("deploy", Field::Var("API_TOKEN".into())).placeholder(),
        "{{vault:deploy/API_TOKEN}}"
    );
    for bad in [
        "{{vault:open",
        "{{vault:}}",
        "{{vault:x/9lives}}",
        "{{vault:x/not-a-var}}",
        "{{vault: lead}}",
        "{{vault:a\nb}}",
    ] {
        assert!(refs(bad, &mut BTreeSet::new()).is_err(), "{bad:?}");
    }
    assert!(mentions("echo {{vault:x}}"));
    assert!(!mentions("echo {{ other }}"));
}

#[test]
fn fill_puts_each_value_in_and_encodes_it_for_a_url() {
    let values: BTreeMap<Ref, Zeroizing<String>> = [
        (r("k", Field::Value), Zeroizing::new("s3cr&t value".into())),
        (r("l", Field::Username), Zeroizing::new("ann".into())),
    ]
    .into();
    let body = fill("key={{vault:k}} user={{vault:l/username}}", &values, as_is).unwrap();
    assert_eq!(&*body, "key=s3cr&t value user=ann");
    let url = fill("https://h/x?key={{vault:k}}", &values, percent).unwrap();
    assert_eq!(&*url, "https://h/x?key=s3cr%26t%20value");
    assert!(fill("{{vault:missing}}", &values, as_is).is_err());
}

#[test]
fn a_request_names_where_it_goes_in_the_clear() {
    assert!(shape("post", "https://h/", &BTreeMap::new(), None).is_err());
    let s = shape(
        "POST",
        "https://api.example.com/v1/issues?token={{vault:k}}",
        &headers(&[("Authorization", "Bearer {{vault:gh}}")]),
        Some("{\"a\": \"{{vault:other/password}}\"}"),
    )
    .unwrap();
    assert_eq!(s.method, "POST");
    assert!(s.https);
    assert_eq!(s.host, "api.example.com");
    assert_eq!(s.port, 443);
    assert_eq!(s.place, "https://api.example.com/v1/issues");
    assert_eq!(s.refs.len(), 3);

    let s = shape("GET", "http://127.0.0.1:8080", &BTreeMap::new(), None).unwrap();
    assert_eq!(
        (s.host.as_str(), s.port, s.https),
        ("127.0.0.1", 8080, false)
    );
    let s = shape("GET", "https://[::1]:9/x", &BTreeMap::new(), None).unwrap();
    assert_eq!((s.host.as_str(), s.port), ("::1", 9));
    assert_eq!(s.place, "https://[::1]:9/x");

    let no = |method: &str, url: &str, h: &[(&str, &str)], body: Option<&str>| {
        shape(method, url, &headers(h), body).unwrap_err()
    };
    assert!(no("CONNECT", "https://h/", &[], None).contains("method"));
    assert!(no("GET", "ftp://h/", &[], None).contains("ftp"));
    assert!(no("GET", "h/x", &[], None).contains("absolute"));
    assert!(no("GET", "https://{{vault:k}}.evil.example/", &[], None).contains("host"));
    assert!(no("GET", "https://{{vault:k}}@h/", &[], None).contains("host"));
    assert!(no("GET", "https://me:pw@h/", &[], None).contains("user:pass"));
    assert!(no("GET", "https://h/#x", &[], None).contains("fragment"));
    assert!(no("GET", "https://h/", &[("Host", "other")], None).contains("itself"));
    assert!(no("GET", "https://h/", &[("Bad Name", "x")], None).contains("header name"));
    assert!(
        no("GET", "https://h/", &[("{{vault:k}}", "x")], None).contains("header name"),
        "a name never holds a reference"
    );
    assert!(no("GET", "https://h/", &[("X-A", "a\r\nHost: b")], None).contains("line break"));
    let many: String = (0..9).map(|i| format!("{{{{vault:k{i}}}}}")).collect();
    assert!(no("POST", "https://h/", &[], Some(&many)).contains("at most"));
}

#[test]
fn this_machine_and_private_networks_are_reached_only_when_listed() {
    for ip in [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "::1",
        "::",
        "fe80::1",
        "fd00::1",
        "::ffff:127.0.0.1",
        "::ffff:169.254.169.254",
    ] {
        assert!(private(ip.parse().unwrap()), "{ip}");
    }
    for ip in ["1.1.1.1", "93.184.216.34", "2606:4700::1111", "100.128.0.1"] {
        assert!(!private(ip.parse().unwrap()), "{ip}");
    }
    let local = vec![
        "127.0.0.1:8080".to_string(),
        "nas.home".into(),
        "[::1]:9".into(),
    ];
    assert!(listed(&local, "127.0.0.1", 8080));
    assert!(!listed(&local, "127.0.0.1", 8081));
    assert!(listed(&local, "nas.home", 443));
    assert!(listed(&local, "::1", 9));
    assert!(!listed(&local, "127.0.0.2", 8080));
}

#[test]
fn an_answer_shows_references_where_the_values_were() {
    let mut m = Masker::default();
    m.add("tok_ABCDEF123456", "{{vault:k}}");
    m.add("p@ss word", "{{vault:l/password}}");
    m.add("ab", "{{vault:short}}");
    let echoed = format!(
        "auth=tok_ABCDEF123456 q={} b64={} json={} p={} ab",
        percent("p@ss word"),
        base64::engine::general_purpose::STANDARD.encode("tok_ABCDEF123456"),
        serde_json::to_string("p@ss word").unwrap(),
        "p@ss word"
    );
    let masked = m.mask(&echoed);
    assert!(!masked.contains("tok_ABCDEF123456"), "{masked}");
    assert!(!masked.contains("p@ss"), "{masked}");
    assert!(!masked.contains("p%40ss"), "{masked}");
    assert!(masked.contains("auth={{vault:k}}"), "{masked}");
    assert!(masked.contains("b64={{vault:k}}"), "{masked}");
    assert!(
        masked.ends_with(" ab"),
        "a value too short to mask is left: {masked}"
    );
}
