//! Where a relayed pass may go, and its code read back.

use super::*;

#[test]
fn a_pass_goes_over_https_or_to_this_machine_and_private_networks_only() {
    assert_eq!(
        check_url("https://vyre.example.com/").unwrap(),
        "https://vyre.example.com"
    );
    assert_eq!(
        check_url("http://127.0.0.1:7777").unwrap(),
        "http://127.0.0.1:7777"
    );
    assert_eq!(
        check_url("http://100.90.1.2:7777").unwrap(),
        "http://100.90.1.2:7777"
    );
    for bad in [
        "http://vyre.example.com",
        "http://8.8.8.8:80",
        "ftp://127.0.0.1",
        "https://x.example/v1/tools",
        "https://x.example/?a=b",
        "not a url",
    ] {
        assert!(check_url(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_relayed_code_reads_back_and_garbage_is_refused() {
    let r = Relayed {
        v: 1,
        url: "https://a.example".into(),
        pass: "p1".into(),
        token: "t".repeat(43),
        item: "k".into(),
    };
    let back = read_relayed(&relayed_code(&r)).unwrap();
    assert_eq!(
        (back.url.as_str(), back.pass.as_str()),
        ("https://a.example", "p1")
    );
    for bad in [
        "",
        "vyre-pass-1.",
        "vyre-pass-1.e30",
        "vyre-sealed-1.AAAA",
        "vyre-pass-1.!!",
    ] {
        assert!(read_relayed(bad).is_err(), "{bad}");
    }
}
