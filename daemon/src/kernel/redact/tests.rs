use super::*;
use serde_json::json;

const B62: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const UPPER_DIGITS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/// Kept apart so no PEM header sits literally in the source.
const DASHES: &str = "-----";

/// Deterministic fake secret: `len` chars of `alphabet` from a splitmix64
/// stream. No real credential, and no literal secret in the source.
fn fake(seed: u64, len: usize, alphabet: &[u8]) -> String {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xdead_beef;
    (0..len)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            let len = u64::try_from(alphabet.len()).unwrap();
            char::from(alphabet[usize::try_from(z % len).unwrap()])
        })
        .collect()
}

fn pem(label: &str, body: &str) -> String {
    format!(
        "{DASHES}BEGIN {label}PRIVATE KEY{DASHES}\n{body}\n{DASHES}END {label}PRIVATE KEY{DASHES}\n"
    )
}

fn positives() -> Vec<(&'static str, String, Option<&'static str>)> {
    let jwt = |seed| {
        format!(
            "eyJ{}.eyJ{}.{}",
            fake(seed, 30, B64URL),
            fake(seed + 1, 60, B64URL),
            fake(seed + 2, 43, B64URL)
        )
    };
    vec![
        // Anthropic
        (
            "anthropic plain",
            format!("sk-ant-api03-{}", fake(1, 93, B64URL)),
            Some(ANTHROPIC),
        ),
        (
            "anthropic in prose",
            format!("my key is sk-ant-api03-{} ok", fake(2, 40, B64URL)),
            Some(ANTHROPIC),
        ),
        (
            "anthropic repeating",
            format!("sk-ant-{}", "aB3_".repeat(6)),
            Some(ANTHROPIC),
        ),
        (
            "anthropic after bearer",
            format!("Authorization: Bearer sk-ant-{}", fake(3, 40, B62)),
            Some(ANTHROPIC),
        ),
        (
            "anthropic in env line",
            format!("ANTHROPIC_API_KEY=sk-ant-admin01-{}", fake(4, 30, B62)),
            Some(ANTHROPIC),
        ),
        // OpenAI
        (
            "openai legacy",
            format!("sk-{}", fake(5, 48, B62)),
            Some(OPENAI),
        ),
        (
            "openai project",
            format!("key: sk-proj-{}", fake(6, 120, B64URL)),
            Some(OPENAI),
        ),
        (
            "openai service account",
            format!("sk-svcacct-{}", fake(7, 60, B64URL)),
            Some(OPENAI),
        ),
        (
            "openai exactly 20",
            format!("(sk-{})", "x".repeat(20)),
            Some(OPENAI),
        ),
        // GitHub
        (
            "github ghp",
            format!("ghp_{}", fake(8, 36, B62)),
            Some(GITHUB),
        ),
        (
            "github gho in url",
            format!("https://gho_{}@github.com/o/r.git", fake(9, 36, B62)),
            Some(GITHUB),
        ),
        (
            "github ghs",
            format!("token ghs_{}", "Ab1".repeat(10)),
            Some(GITHUB),
        ),
        (
            "github ghu ghr",
            format!("ghu_{} ghr_{}", fake(10, 36, B62), fake(11, 36, B62)),
            Some(GITHUB),
        ),
        (
            "github fine-grained",
            format!("github_pat_{}_{}", fake(12, 22, B62), fake(13, 59, B62)),
            Some(GITHUB),
        ),
        (
            "github fine-grained short",
            format!("github_pat_{}", "abc_".repeat(5)),
            Some(GITHUB),
        ),
        // JWT
        ("jwt alone", jwt(20), Some(JWT)),
        (
            "jwt in cookie",
            format!("session={}; Path=/", jwt(30)),
            Some(JWT),
        ),
        (
            "jwt minimal",
            format!("eyJ{0}.eyJ{0}.{0}{0}", "abcdefg"),
            Some(JWT),
        ),
        (
            "jwt after bearer",
            format!("Authorization: Bearer {}", jwt(33)),
            Some(JWT),
        ),
        // PEM
        ("pem rsa", pem("RSA ", &fake(40, 64, B64)), Some(PEM)),
        (
            "pem pkcs8",
            format!("key:\n{}", pem("", &fake(41, 64, B64))),
            Some(PEM),
        ),
        (
            "pem openssh",
            pem("OPENSSH ", "b3BlbnNzaC1rZXktdjE="),
            Some(PEM),
        ),
        (
            "pem ec header only",
            format!("{DASHES}BEGIN EC PRIVATE KEY{DASHES}"),
            Some(PEM),
        ),
        ("pem encrypted", pem("ENCRYPTED ", "..."), Some(PEM)),
        // Bearer
        (
            "bearer header",
            format!("Authorization: Bearer {}", fake(50, 40, B64URL)),
            Some(BEARER),
        ),
        (
            "bearer lower",
            format!("bearer {}", "abc.DEF~12+/=-x".repeat(2)),
            Some(BEARER),
        ),
        (
            "bearer upper",
            format!("BEARER {}", fake(51, 16, B62)),
            Some(BEARER),
        ),
        (
            "bearer in curl",
            format!("curl -H 'authorization: bearer {}' x", fake(52, 24, B62)),
            Some(BEARER),
        ),
        // AWS
        (
            "aws akia",
            format!("AKIA{}", fake(60, 16, UPPER_DIGITS)),
            Some(AWS),
        ),
        (
            "aws asia in config",
            format!("aws_access_key_id = ASIA{}\n", fake(61, 16, UPPER_DIGITS)),
            Some(AWS),
        ),
        (
            "aws quoted",
            format!("\"AKIA{}\"", "AB12".repeat(4)),
            Some(AWS),
        ),
        // Slack
        (
            "slack bot",
            format!("xoxb-{}-{}", "1234567890", fake(70, 24, B62)),
            Some(SLACK),
        ),
        (
            "slack user",
            format!("token=xoxp-{}", "12-34-56-78-9a"),
            Some(SLACK),
        ),
        (
            "slack a r s",
            format!(
                "xoxa-{} xoxr-{} xoxs-{}",
                "a".repeat(10),
                "b".repeat(10),
                "c".repeat(10)
            ),
            Some(SLACK),
        ),
        // High entropy
        ("entropy b62 40", fake(80, 40, B62), Some(HIGH_ENTROPY)),
        (
            "entropy b64 in text",
            format!("secret: {} (rotate)", fake(81, 44, B64)),
            Some(HIGH_ENTROPY),
        ),
        (
            "entropy b64url 64",
            format!("/v1/{}/x", fake(82, 64, B64URL)),
            Some(HIGH_ENTROPY),
        ),
        (
            "entropy query token",
            format!("https://h.example/cb?access_token={}", fake(83, 40, B62)),
            Some(HIGH_ENTROPY),
        ),
    ]
}

fn false_positives() -> Vec<(&'static str, String, Option<&'static str>)> {
    let none = |name, s: &str| (name, s.to_string(), None);
    vec![
        none("uuid", "3f2b8c1e-9a4d-4e6f-8b2a-1c5d7e9f0a3b"),
        none("uuid upper", "3F2B8C1E-9A4D-4E6F-8B2A-1C5D7E9F0A3B"),
        none("git sha", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"),
        none(
            "sha256 hex",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        ),
        none(
            "hex fingerprint + word",
            "DC463A16E42F03240D76E8BA8B48C6BD871C2247-secret.gpg",
        ),
        none(
            "mixed-case hex",
            "e3B0c44298Fc1C149afBf4c8996fB92427aE41e4649b934Ca495991B7852b855",
        ),
        none(
            "path",
            "/home/someone/Projects/VyreApp/src/components/SessionListView2024.tsx",
        ),
        none(
            "sentence",
            "The quick brown fox jumps over the lazy dog, then writes 42 unit tests.",
        ),
        none(
            "camel",
            "handleUserAuthenticationCallbackForSessionManager2",
        ),
        none("camel 2", "getUserProfileSettingsFromRemoteServer2024"),
        none("camel 3", "XMLHttpRequestEventTargetPrototypeDescriptor64"),
        none("camel 4", "ThisIsAVeryLongCamelCaseIdentifierName1"),
        none("camel 5", "D3DKMTOpenSyncObjectFromNtHandle2"),
        none("camel 6", "WHvRunVpExitReasonX64ApicSmiTrap"),
        none("camel 7", "szOID_PKCS_12_pbeWithSHA1And40BitRC2"),
        none("snake", "test_handle_user_authentication_callback_v2_flag"),
        none("snake mixed", "My_Snake_Case_Identifier_2024_version_Two"),
        none("screaming", "KSCAMERA_EXTENDEDPROP_MetadataAlignment_1024"),
        none("iso timestamp", "2024-05-01T12:34:56.789Z"),
        none("iso timestamp offset", "2024-05-01T12:34:56+02:00"),
        none(
            "url",
            "https://example.com/docs/getting-started?page=2&sort=asc",
        ),
        none("bearer prose", "the bearer of this message"),
        none(
            "bearer prose 2",
            "Bearer bonds were popular; the bearer of a bond owned it.",
        ),
        none("sk task", "task-list"),
        none("sk desk", "desk-lamp"),
        none("sk short", "sk-short"),
        none("sk inside word", "task-management-system-overview-2024"),
        none("short base64", "aGVsbG8="),
        none("semver", "1.2.3-beta.4+build.567"),
        none("number", "1234567890123456789012345678901234567890"),
        none("float", "3.141592653589793238462643383279"),
        none("emoji", "🎉🚀 done ✅"),
        none(
            "non-ascii",
            "日本語のテキストと Ünïcödé, café, naïve, Straße",
        ),
        none("event type", "thread.started"),
        none("turn id", "3f2b8c1e-9a4d-4e6f-8b2a-1c5d7e9f0a3b:12"),
        none("empty", ""),
        none("github short", "ghp_abc123"),
        none("github inside word", &format!("xghp_{}", "a".repeat(36))),
        none("slack short", "xoxb-short"),
        none("aws too long", &format!("AKIA{}", "A".repeat(17))),
        none("aws too short", "AKIA1234567890"),
        none("aws inside word", &format!("XAKIA{}", "A".repeat(16))),
        none("jwt-ish short", "eyJhbGci.eyJzdWIi.abc"),
        none(
            "pem public key",
            &format!("{DASHES}BEGIN PUBLIC KEY{DASHES}"),
        ),
        none(
            "pem certificate",
            &format!("{DASHES}BEGIN CERTIFICATE{DASHES}"),
        ),
        none("cupbearer", &format!("cupbearer {}", fake(90, 20, B62))),
        none(
            "bearer two spaces",
            &format!("Bearer  {}", fake(91, 20, B62)),
        ),
        none("anthropic too short", "sk-ant-abc123"),
        none(
            "rust source",
            "fn main() { let handler = SessionManager::new(config.clone())?; }",
        ),
        none(
            "json text",
            r#"{"type":"item.completed","item":{"id":"item_12","text":"ok"}}"#,
        ),
    ]
}

#[test]
fn scan_table() {
    let mut failures = Vec::new();
    for (name, input, expected) in positives().into_iter().chain(false_positives()) {
        let got = scan_str(&input);
        if got != expected {
            failures.push(format!("{name}: expected {expected:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn at_least_two_positive_cases_per_kind() {
    let cases = positives();
    for kind in [
        ANTHROPIC,
        OPENAI,
        GITHUB,
        JWT,
        PEM,
        BEARER,
        AWS,
        SLACK,
        HIGH_ENTROPY,
    ] {
        let n = cases.iter().filter(|(_, _, k)| *k == Some(kind)).count();
        assert!(n >= 2, "{kind}: only {n} cases");
    }
}

/// The high-entropy rule catches nearly all random 40-char tokens.
#[test]
fn high_entropy_recall() {
    let mut mixed = 0;
    let mut caught = 0;
    for seed in 1000..2000 {
        let s = fake(seed, 40, B62);
        let b = s.as_bytes();
        let all_classes = b.iter().any(u8::is_ascii_uppercase)
            && b.iter().any(u8::is_ascii_lowercase)
            && b.iter().any(u8::is_ascii_digit);
        if all_classes {
            mixed += 1;
            if scan_str(&s) == Some(HIGH_ENTROPY) {
                caught += 1;
            }
        }
    }
    assert!(caught * 100 >= mixed * 95, "caught {caught} of {mixed}");
}

#[test]
fn check_nested_value() {
    let token = format!("ghp_{}", fake(100, 36, B62));
    let v = json!({
        "type": "item.completed",
        "items": [
            {"id": 1, "text": "hello"},
            {"id": 2, "auth": {"token": token}},
        ],
    });
    let err = check(&v).unwrap_err();
    assert_eq!(err.path, "/items/1/auth/token");
    assert_eq!(err.kind, GITHUB);
    assert_eq!(
        err.to_string(),
        "a value at /items/1/auth/token looks like a credential (github_token)"
    );
}

#[test]
fn check_clean_value() {
    let v = json!({
        "type": "thread.started",
        "thread_id": "3f2b8c1e-9a4d-4e6f-8b2a-1c5d7e9f0a3b",
        "turn": "3f2b8c1e-9a4d-4e6f-8b2a-1c5d7e9f0a3b:12",
        "n": 12345678901234_u64,
        "ok": true,
        "nothing": null,
        "list": ["a", ["b", {"c": "/home/someone/file.rs"}]],
    });
    assert_eq!(check(&v), Ok(()));
}

#[test]
fn check_key_is_scanned() {
    let key = format!("sk-ant-api03-{}", fake(101, 40, B64URL));
    let mut inner = serde_json::Map::new();
    inner.insert(key.clone(), json!("harmless"));
    let v = json!({"env": [{"vars": inner}]});
    let err = check(&v).unwrap_err();
    assert_eq!(err.kind, ANTHROPIC);
    assert_eq!(err.path, format!("/env/0/vars/{key}"));
}

#[test]
fn check_pointer_escapes() {
    let aws = format!("AKIA{}", fake(102, 16, UPPER_DIGITS));
    let v = json!({"a/b": {"m~n": [null, aws]}});
    let err = check(&v).unwrap_err();
    assert_eq!(err.path, "/a~1b/m~0n/1");
    assert_eq!(err.kind, AWS);

    // A key holding both characters, itself the credential.
    let key = format!("x/y~z Bearer {}", fake(103, 20, B62));
    let mut obj = serde_json::Map::new();
    obj.insert(key.clone(), json!(1));
    let err = check(&Value::Object(obj)).unwrap_err();
    assert_eq!(err.kind, BEARER);
    assert_eq!(
        err.path,
        format!("/{}", key.replace('~', "~0").replace('/', "~1"))
    );
}

#[test]
fn check_root_string() {
    let err = check(&json!(fake(104, 48, B62))).unwrap_err();
    assert_eq!(err.path, "");
    assert_eq!(err.kind, HIGH_ENTROPY);
    assert_eq!(
        err.to_string(),
        "the value at the document root looks like a credential (high_entropy)"
    );
}

#[test]
fn first_finding_wins() {
    let v = json!([
        "fine",
        format!("xoxb-{}", "1".repeat(12)),
        format!("ghp_{}", "A1b".repeat(12)),
    ]);
    let err = check(&v).unwrap_err();
    assert_eq!((err.path.as_str(), err.kind), ("/1", SLACK));
}

#[test]
fn long_inputs_are_linear() {
    // Pathological repeats of every trigger prefix must not blow up.
    let nasty = "eyJ".repeat(20_000)
        + &"sk-".repeat(20_000)
        + &"-----BEGIN ".repeat(5_000)
        + &"bearer ".repeat(10_000)
        + &"AKIA".repeat(10_000);
    std::hint::black_box(scan_str(&nasty));
    let long_clean = "word ".repeat(100_000);
    assert_eq!(scan_str(&long_clean), None);
}
