use super::testing::Authenticator;
use super::*;

const ORIGIN: &str = "https://juno.vyre.run";
const RP: &str = "juno.vyre.run";

fn registered(a: &mut Authenticator, p: &Presence) -> Registration {
    let c = p.challenge(Purpose::Register, "device:d1").unwrap();
    let r = a.register(RP, &c, ORIGIN);
    let (answered, reg) = check_registration(
        &r.client_data_json,
        &r.authenticator_data,
        &a.id,
        &a.spki(),
        ES256,
    )
    .unwrap();
    assert_eq!(answered, c);
    p.take(&answered, &Purpose::Register, "device:d1").unwrap();
    assert_eq!(reg.rp_id, "juno.vyre.run");
    reg
}

fn parts(a: testing::Answer) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    (a.client_data_json, a.authenticator_data, a.signature)
}

fn reveal(item: &str) -> Purpose {
    Purpose::Reveal {
        item: item.into(),
        field: "password".into(),
    }
}

#[test]
fn a_passkey_registers_and_proves_presence_once_per_challenge() {
    let p = Presence::default();
    let mut a = Authenticator::new(7);
    let reg = registered(&mut a, &p);
    let key = Passkey {
        rp_id: &reg.rp_id,
        alg: reg.alg,
        public_key: &reg.public_key,
        sign_count: reg.sign_count,
    };
    let c = p.challenge(reveal("github"), "device:d1").unwrap();
    let (cd, ad, sig) = parts(a.assert("juno.vyre.run", &c, ORIGIN));
    let (answered, count) = check_assertion(&key, &cd, &ad, &sig).unwrap();
    assert_eq!((answered.as_str(), count), (c.as_str(), 2));
    p.take(&answered, &reveal("github"), "device:d1").unwrap();
    // The same answer again: its challenge is gone.
    assert_eq!(
        p.take(&answered, &reveal("github"), "device:d1"),
        Err(PresenceError::UnknownChallenge)
    );
}

#[test]
fn a_challenge_is_for_its_item_field_and_caller_only() {
    let p = Presence::default();
    for (purpose, caller, why) in [
        (reveal("bank"), "device:d1", "item"),
        (
            Purpose::Reveal {
                item: "github".into(),
                field: "totp".into(),
            },
            "device:d1",
            "field",
        ),
        (reveal("github"), "device:d2", "caller"),
        (Purpose::Register, "device:d1", "purpose"),
    ] {
        let c = p.challenge(reveal("github"), "device:d1").unwrap();
        assert_eq!(
            p.take(&c, &purpose, caller),
            Err(PresenceError::Mismatch(why))
        );
        // Taken even when refused: a wrong try costs the challenge.
        assert_eq!(
            p.take(&c, &reveal("github"), "device:d1"),
            Err(PresenceError::UnknownChallenge)
        );
    }
    assert_eq!(
        p.take("made-up", &reveal("github"), "device:d1"),
        Err(PresenceError::UnknownChallenge)
    );
}

#[test]
fn forged_replayed_unverified_and_foreign_assertions_are_refused() {
    let p = Presence::default();
    let mut a = Authenticator::new(7);
    let reg = registered(&mut a, &p);
    let key = |count| Passkey {
        rp_id: "juno.vyre.run",
        alg: ES256,
        public_key: &reg.public_key,
        sign_count: count,
    };
    // Signed by another key.
    let mut other = Authenticator::new(9);
    let (cd, ad, sig) = parts(other.assert("juno.vyre.run", "c1", ORIGIN));
    assert_eq!(
        check_assertion(&key(0), &cd, &ad, &sig),
        Err(PresenceError::BadSignature)
    );
    // The client data changed after signing (another challenge).
    let (_, ad, sig) = parts(a.assert("juno.vyre.run", "c1", ORIGIN));
    let cd2 = Authenticator::client_data("webauthn.get", "c2", ORIGIN);
    assert_eq!(
        check_assertion(&key(0), &cd2, &ad, &sig),
        Err(PresenceError::BadSignature)
    );
    // A phishing site's assertion: its origin, and its rp id hash.
    let (cd, ad, sig) = parts(a.assert(
        "juno.vyre.run.evil.example",
        "c3",
        "https://juno.vyre.run.evil.example",
    ));
    assert!(matches!(
        check_assertion(&key(0), &cd, &ad, &sig),
        Err(PresenceError::Invalid(_))
    ));
    let (cd, ad, sig) = parts(a.assert("evil.example", "c3", ORIGIN));
    assert!(matches!(
        check_assertion(&key(0), &cd, &ad, &sig),
        Err(PresenceError::Invalid(_))
    ));
    // A registration's client data offered as an assertion.
    let cd = a.register(RP, "c4", ORIGIN).client_data_json;
    let (_, ad, sig) = parts(a.assert("juno.vyre.run", "c4", ORIGIN));
    assert!(matches!(
        check_assertion(&key(0), &cd, &ad, &sig),
        Err(PresenceError::Invalid(_))
    ));
    // The counter went back (a copied authenticator).
    let (cd, ad, sig) = parts(a.assert("juno.vyre.run", "c5", ORIGIN));
    let (_, count) = check_assertion(&key(1000), &cd, &ad, &sig).unwrap();
    assert_eq!(
        check_counter(1000, count),
        Err(PresenceError::CounterWentBack)
    );
    assert_eq!(check_counter(count - 1, count), Ok(()));
    assert_eq!(
        check_counter(0, 0),
        Ok(()),
        "an authenticator that keeps no counter"
    );
    // Presence without verification (a tap, no Touch ID or PIN).
    a.verifies = false;
    let (cd, ad, sig) = parts(a.assert("juno.vyre.run", "c6", ORIGIN));
    assert_eq!(
        check_assertion(&key(0), &cd, &ad, &sig),
        Err(PresenceError::NotVerified)
    );
}

#[test]
fn a_registration_must_name_its_own_credential_and_a_key_vyred_takes() {
    let mut a = Authenticator::new(7);
    let r = a.register(RP, "c", ORIGIN);
    let (cd, ad) = (r.client_data_json, r.authenticator_data);
    assert!(matches!(
        check_registration(&cd, &ad, b"another-id", &a.spki(), ES256),
        Err(PresenceError::Invalid(_))
    ));
    assert!(matches!(
        check_registration(&cd, &ad, &a.id, &a.spki(), -257),
        Err(PresenceError::Invalid(_))
    ));
    assert!(matches!(
        check_registration(&cd, &ad, &a.id, b"not a key", ES256),
        Err(PresenceError::Invalid(_))
    ));
    let cd = Authenticator::client_data("webauthn.get", "c", ORIGIN);
    assert!(matches!(
        check_registration(&cd, &ad, &a.id, &a.spki(), ES256),
        Err(PresenceError::Invalid(_))
    ));
}

#[test]
fn an_ed25519_passkey_checks_too() {
    use ed25519_dalek::Signer as _;
    let sk = ed25519_dalek::SigningKey::from_bytes(&[5; 32]);
    let mut spki = ED25519_SPKI.to_vec();
    spki.extend_from_slice(sk.verifying_key().as_bytes());
    let cd = Authenticator::client_data("webauthn.get", "c", "http://localhost:7878");
    let mut ad = Sha256::digest(b"localhost").to_vec();
    ad.extend_from_slice(&[0x05, 0, 0, 0, 0]);
    let mut signed = ad.clone();
    signed.extend_from_slice(&Sha256::digest(&cd));
    let sig = sk.sign(&signed).to_bytes();
    let key = Passkey {
        rp_id: "localhost",
        alg: EDDSA,
        public_key: &spki,
        sign_count: 0,
    };
    assert_eq!(
        check_assertion(&key, &cd, &ad, &sig).unwrap(),
        ("c".to_string(), 0)
    );
    let mut bad = sig;
    bad[0] ^= 1;
    assert_eq!(
        check_assertion(&key, &cd, &ad, &bad),
        Err(PresenceError::BadSignature)
    );
}

#[test]
fn wrong_passphrases_lock_out_for_a_while_and_a_right_one_resets() {
    let p = Presence::default();
    for _ in 0..MAX_FAILURES - 1 {
        p.may_try_passphrase().unwrap();
        p.passphrase_tried(false);
    }
    p.passphrase_tried(true);
    for _ in 0..MAX_FAILURES {
        p.may_try_passphrase().unwrap();
        p.passphrase_tried(false);
    }
    assert!(matches!(
        p.may_try_passphrase(),
        Err(PresenceError::TooManyAttempts(s)) if s <= LOCKOUT.as_secs() + 1
    ));
}

#[test]
fn origins_and_their_hosts() {
    assert_eq!(origin_host("https://juno.vyre.run"), Some("juno.vyre.run"));
    assert_eq!(origin_host("http://localhost:7878"), Some("localhost"));
    assert_eq!(origin_host("http://[::1]:7878"), Some("[::1]"));
    assert_eq!(origin_host("file:///x"), None);
    assert!(origin_matches("https://app.juno.vyre.run", "juno.vyre.run"));
    assert!(!origin_matches("https://xjuno.vyre.run", "juno.vyre.run"));
}
