//! A name and its certificate for real: vyred claims `alex.vyre.test` from the fake name
//! directory, which writes the name's records into a real DNS server (`pebble-challtestsrv`);
//! a real ACME server (`pebble`) checks the DNS-01 challenge there and issues the certificate;
//! then a phone, in a network namespace of its own and joined with the real `wireguard-go`,
//! resolves the name through that DNS server and fetches `https://alex.vyre.test/app/` through
//! its tunnel, checking the certificate against pebble's root.
//!
//! vyred, pebble, the DNS server and the directory run in the test's own namespace, on a veth
//! address only the phone's namespace shares. Needs root, iproute2, wireguard-tools,
//! wireguard-go, pebble and curl (`.ci/run` installs them), so it is `#[ignore]`d and run by
//! `tests/run` with `--include-ignored`.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::network::{Ns, configure, have, run};
use crate::support::{TempHome, wait_until};

/// A child process killed on drop.
struct Kid(Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(cmd: &mut Command) -> Kid {
    Kid(cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap())
}

/// A veth pair between this namespace and `ns`, removed on drop.
struct Veth(String);

impl Drop for Veth {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["link", "del", &self.0]).output();
    }
}

fn listening(addr: &str) -> bool {
    std::net::TcpStream::connect_timeout(&addr.parse().unwrap(), Duration::from_millis(200)).is_ok()
}

/// pebble (an ACME server) and pebble-challtestsrv (the DNS server it checks challenges in),
/// on `ip`, at ports `[acme, management, dns, dns management]`, stopped on drop.
struct AcmeServer {
    _dns: Kid,
    _pebble: Kid,
    /// The ACME directory's URL.
    directory: String,
    /// pebble's management address (its issuing root).
    management: String,
    /// challtestsrv's management address, where records are written.
    dns_management: String,
}

impl AcmeServer {
    fn start(dir: &std::path::Path, ip: &str, [acme, manage, dns, dns_manage]: [u16; 4]) -> Self {
        // pebble's own HTTPS: a test CA and a certificate for its address.
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let leaf = rcgen::CertificateParams::new(vec![ip.to_string()])
            .unwrap()
            .signed_by(&leaf_key, &issuer)
            .unwrap();
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        std::fs::write(dir.join("pebble.pem"), leaf.pem()).unwrap();
        std::fs::write(dir.join("pebble.key"), leaf_key.serialize_pem()).unwrap();
        std::fs::write(
            dir.join("pebble.json"),
            serde_json::json!({ "pebble": {
                "listenAddress": format!("{ip}:{acme}"),
                "managementListenAddress": format!("{ip}:{manage}"),
                "certificate": dir.join("pebble.pem"),
                "privateKey": dir.join("pebble.key"),
                "httpPort": 5002,
                "tlsPort": 5001,
                "ocspResponderURL": "",
                "externalAccountBindingRequired": false
            }})
            .to_string(),
        )
        .unwrap();
        let dns_management = format!("{ip}:{dns_manage}");
        let dns_server = format!("{ip}:{dns}");
        let dns = spawn(Command::new("pebble-challtestsrv").args([
            "-dns01",
            &dns_server,
            "-http01",
            "",
            "-https01",
            "",
            "-tlsalpn01",
            "",
            "-management",
            &dns_management,
            // Only the records written: no made-up answer for other names.
            "-defaultIPv4",
            "",
            "-defaultIPv6",
            "",
        ]));
        let pebble = spawn(
            Command::new("pebble")
                .args([
                    "-config",
                    dir.join("pebble.json").to_str().unwrap(),
                    "-dnsserver",
                    &dns_server,
                ])
                .env("PEBBLE_VA_NOSLEEP", "1")
                .env("PEBBLE_WFE_NONCEREJECT", "0"),
        );
        let listen = format!("{ip}:{acme}");
        assert!(wait_until(Duration::from_secs(20), || listening(&listen)
            && listening(&dns_management)));
        AcmeServer {
            _dns: dns,
            _pebble: pebble,
            directory: format!("https://{ip}:{acme}/dir"),
            management: format!("{ip}:{manage}"),
            dns_management,
        }
    }

    /// pebble's issuing root (made new at each start), written to `dir/root.pem`.
    fn root(&self, dir: &std::path::Path) -> std::path::PathBuf {
        let root = Command::new("curl")
            .args(["-sSk", &format!("https://{}/roots/0", self.management)])
            .output()
            .unwrap();
        assert!(root.status.success());
        std::fs::write(dir.join("root.pem"), &root.stdout).unwrap();
        dir.join("root.pem")
    }
}

#[test]
#[ignore = "needs root, iproute2, wireguard-tools, wireguard-go and pebble (tests/run runs it)"]
fn a_phone_opens_the_app_at_its_name_over_https_with_a_certificate_by_dns_01() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "this test makes network namespaces: run it as root"
    );
    for program in [
        "ip",
        "wg",
        "wireguard-go",
        "curl",
        "pebble",
        "pebble-challtestsrv",
    ] {
        assert!(have(program), "{program} is missing (.ci/run installs it)");
    }
    let tag = std::process::id() % 100_000;
    let phone = Ns::new(format!("vyre-nphone-{tag}"));
    let (here, there) = (format!("vyn{tag}"), format!("vyq{tag}"));
    run(
        "ip",
        &["link", "add", &here, "type", "veth", "peer", "name", &there],
    );
    let _veth = Veth(here.clone());
    run("ip", &["link", "set", &there, "netns", &phone.0]);
    run("ip", &["addr", "add", "10.214.0.1/24", "dev", &here]);
    run("ip", &["link", "set", &here, "up"]);
    phone.ip(&["addr", "add", "10.214.0.2/24", "dev", &there]);
    phone.ip(&["link", "set", &there, "up"]);
    phone.ip(&["link", "set", "lo", "up"]);
    // The phone asks the test's DNS server (ip netns exec mounts this over /etc/resolv.conf).
    let resolv_dir = std::path::PathBuf::from(format!("/etc/netns/{}", phone.0));
    std::fs::create_dir_all(&resolv_dir).unwrap();
    std::fs::write(resolv_dir.join("resolv.conf"), "nameserver 10.214.0.1\n").unwrap();
    struct Gone(std::path::PathBuf);
    impl Drop for Gone {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let _resolv = Gone(resolv_dir);

    let home = TempHome::new("names");
    let dir = home.dir.clone();

    let acme = AcmeServer::start(&dir, "10.214.0.1", [14000, 15000, 53, 8055]);

    // The fake directory, zone vyre.test, writing into that DNS server.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let directory = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let directory_addr = directory.local_addr().unwrap();
    rt.spawn(vyre_fake_api::directory::serve(
        directory,
        "vyre.test",
        acme.dns_management.parse().unwrap(),
    ));

    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(
        home.vyre_home().join("config.json"),
        serde_json::json!({
            "network": { "enabled": true, "listen": "10.214.0.1:51821", "endpoint": "10.214.0.1:51821" },
            "names": {
                "directory": format!("http://{directory_addr}"),
                "acme": acme.directory,
                "acme_ca": dir.join("ca.pem"),
            }
        })
        .to_string(),
    )
    .unwrap();
    let ui = dir.join("ui");
    std::fs::create_dir_all(&ui).unwrap();
    std::fs::write(ui.join("index.html"), "<html>vyre-at-its-name</html>").unwrap();
    let _daemon = spawn(home.command().arg("daemon").env("VYRE_UI_DIR", &ui));
    assert!(wait_until(Duration::from_secs(30), || {
        home.home().socket().exists() && home.vyre(&["network", "status"]).status.success()
    }));

    // Before any name: no certificate, so HTTPS is not served yet; status says so.
    let status: Value = serde_json::from_slice(&home.vyre(&["names", "status"]).stdout).unwrap();
    assert_eq!(status["fqdn"], Value::Null, "{status}");

    let out = home.vyre(&["names", "claim", "--name", "alex"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let claimed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(claimed["fqdn"], "alex.vyre.test", "{claimed}");
    assert_eq!(claimed["url"], "https://alex.vyre.test/app/");
    let days = (claimed["not_after"].as_i64().unwrap() - vyre::now_ms()) / 86_400_000;
    assert!(days > 30, "a fresh certificate: {claimed}");
    let mode = std::fs::metadata(home.vyre_home().join("certs/alex.vyre.test/key.pem"))
        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777)
        .unwrap();
    assert_eq!(mode, 0o600);
    // A second Vyre cannot take the name.
    let other = home.vyre(&["names", "claim", "--name", "bob"]);
    assert!(!other.status.success(), "this Vyre holds one name");

    // The phone joins, resolves the name through DNS, and opens the app over HTTPS.
    let out = home.vyre(&["network", "join", "--name", "phone"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let joined: Value = serde_json::from_slice(&out.stdout).unwrap();
    let box_ip = crate::network::field(joined["config"].as_str().unwrap(), "AllowedIPs")
        .trim_end_matches("/32")
        .to_string();
    // Its own interface name: wireguard-go's control socket is named by it, in a folder every
    // namespace shares.
    let wg = format!("vwb{tag}");
    let wg = wg.as_str();
    let started = phone.cmd("wireguard-go").arg(wg).output().unwrap();
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    configure(&phone, wg, joined["config"].as_str().unwrap(), &dir);
    phone.ip(&[
        "addr",
        "add",
        &format!("{}/32", joined["address"].as_str().unwrap()),
        "dev",
        wg,
    ]);
    phone.ip(&["link", "set", wg, "up"]);
    phone.ip(&["route", "add", &format!("{box_ip}/32"), "dev", wg]);
    let resolved = phone
        .cmd("getent")
        .args(["ahostsv4", "alex.vyre.test"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&resolved.stdout).starts_with(&box_ip),
        "the name resolves to the box's network address: {}",
        String::from_utf8_lossy(&resolved.stdout)
    );
    // pebble's issuing root, which the phone trusts for this test.
    let root = acme.root(&dir);
    let (code, page) = phone.curl(&[
        "--cacert",
        root.to_str().unwrap(),
        "https://alex.vyre.test/app/",
    ]);
    assert_eq!(code, 0, "HTTPS at the name through the tunnel: {page}");
    assert!(page.contains("vyre-at-its-name"));
    // The page may ask the name's health route, and only that, to learn this device reaches it.
    let (code, headers) = phone.curl(&[
        "--cacert",
        root.to_str().unwrap(),
        "-D",
        "-",
        "-o",
        "/dev/null",
        "http://alex.vyre.test/app/",
    ]);
    assert_eq!(code, 0);
    assert!(
        headers.contains("connect-src 'self' https://alex.vyre.test/v1/health;"),
        "{headers}"
    );
    let (code, session) = phone.curl(&[
        "--cacert",
        root.to_str().unwrap(),
        "https://alex.vyre.test/v1/session",
    ]);
    assert_eq!(code, 0);
    let session: Value = serde_json::from_str(&session).unwrap();
    assert_eq!(session["data"]["device"]["id"], joined["device"]["id"]);
    // A certificate for another name is not what it serves: curl checks the name.
    let (code, _) = phone.curl(&[
        "--cacert",
        root.to_str().unwrap(),
        "--resolve",
        &format!("other.vyre.test:443:{box_ip}"),
        "https://other.vyre.test/app/",
    ]);
    assert_ne!(code, 0, "the certificate is for alex.vyre.test only");

    // Renewing gets a new certificate, served at once.
    let before = claimed["not_after"].as_i64().unwrap();
    let out = home.vyre(&["names", "renew"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let renewed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(renewed["not_after"].as_i64().unwrap() >= before);
    let (code, _) = phone.curl(&[
        "--cacert",
        root.to_str().unwrap(),
        "https://alex.vyre.test/app/",
    ]);
    assert_eq!(code, 0);
    drop(rt);
}

/// A free TCP port on loopback (closed again: the server about to use it binds it).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Every file under `dir` holding `needle`, by path.
fn files_holding(dir: &std::path::Path, needle: &[u8]) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_holding(&path, needle));
        } else if std::fs::read(&path).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle)) {
            found.push(path);
        }
    }
    found
}

#[test]
#[ignore = "needs pebble and pebble-challtestsrv (tests/run runs it)"]
fn a_persons_own_domain_gets_its_address_and_certificate_through_cloudflare() {
    for program in ["curl", "pebble", "pebble-challtestsrv"] {
        assert!(have(program), "{program} is missing (.ci/run installs it)");
    }
    let home = TempHome::new("own-domain");
    let dir = home.dir.clone();
    let ports = [free_port(), free_port(), free_port(), free_port()];
    let acme = AcmeServer::start(&dir, "127.0.0.1", ports);

    // The fake Cloudflare, holding the zone example.test, writing into pebble's DNS server.
    const TOKEN: &str = "cf-test-token-4b1d9e";
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let cloudflare = vyre_fake_api::cloudflare::FakeCloudflare::new(
        TOKEN,
        &["example.test"],
        acme.dns_management.parse().unwrap(),
    );
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let api = format!("http://{}/client/v4", listener.local_addr().unwrap());
    rt.spawn(cloudflare.clone().serve(listener));

    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(
        home.vyre_home().join("config.json"),
        serde_json::json!({
            "network": { "enabled": true, "listen": format!("127.0.0.1:{}", free_port()) },
            "names": {
                "cloudflare": api,
                "acme": acme.directory,
                "acme_ca": dir.join("ca.pem"),
            }
        })
        .to_string(),
    )
    .unwrap();
    let _daemon = spawn(home.command().arg("daemon"));
    assert!(wait_until(Duration::from_secs(30), || {
        home.home().socket().exists() && home.vyre(&["network", "status"]).status.success()
    }));
    let network: Value = serde_json::from_slice(&home.vyre(&["network", "status"]).stdout).unwrap();
    let address = network["address"].as_str().unwrap().to_string();

    let use_domain = |domain: &str, token: &str| {
        home.vyre(&[
            "names",
            "use-domain",
            "--domain",
            domain,
            "--provider",
            "cloudflare",
            "--token",
            token,
        ])
    };
    let refused = |out: &std::process::Output, code: &str| {
        assert!(!out.status.success(), "refused with {code}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains(code), "{code}: {said}");
    };
    // Not a domain: refused before anything leaves.
    refused(&use_domain("vyre.example.test/x", TOKEN), "invalid_domain");
    assert_eq!(cloudflare.calls(), 0);
    // A wrong token: Cloudflare's refusal, in words, and nothing kept.
    refused(
        &use_domain("vyre.example.test", "wrong-token"),
        "dns_refused",
    );
    // A domain in no zone the token sees.
    refused(&use_domain("vyre.elsewhere.test", TOKEN), "no_zone");
    let vault: Value =
        serde_json::from_slice(&home.vyre(&["vault", "list", "--json"]).stdout).unwrap();
    assert!(
        !vault.to_string().contains("dns-cloudflare"),
        "a token that did not work is not kept: {vault}"
    );
    assert!(!home.vyre_home().join("certs/domain.json").exists());
    assert!(cloudflare.records().is_empty());

    let out = use_domain("vyre.example.test", TOKEN);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let used: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(used["fqdn"], "vyre.example.test", "{used}");
    assert_eq!(used["via"], "cloudflare");
    assert_eq!(used["url"], "https://vyre.example.test/app/");
    let days = (used["not_after"].as_i64().unwrap() - vyre::now_ms()) / 86_400_000;
    assert!(days > 30, "a fresh certificate: {used}");
    // The name's one A record is the box's private address, never through Cloudflare's proxy;
    // the challenge's TXT record is gone again.
    let records = cloudflare.records();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(
        (
            records[0].kind.as_str(),
            records[0].name.as_str(),
            records[0].content.as_str(),
            records[0].proxied
        ),
        ("A", "vyre.example.test", address.as_str(), false)
    );
    // The certificate chains to pebble's root and names the domain; its key is 0600.
    let chain = home.vyre_home().join("certs/vyre.example.test/cert.pem");
    let root = acme.root(&dir);
    let verify = Command::new("openssl")
        .args(["verify", "-CAfile"])
        .arg(&root)
        .arg("-untrusted")
        .arg(&chain)
        .args(["-verify_hostname", "vyre.example.test"])
        .arg(&chain)
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}{}",
        String::from_utf8_lossy(&verify.stdout),
        String::from_utf8_lossy(&verify.stderr)
    );
    let mode = std::fs::metadata(home.vyre_home().join("certs/vyre.example.test/key.pem"))
        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777)
        .unwrap();
    assert_eq!(mode, 0o600);
    // The token is in the vault, sealed: no file under VYRE_HOME holds it in the clear, and
    // neither the status nor the vault's list shows it.
    let vault: Value =
        serde_json::from_slice(&home.vyre(&["vault", "list", "--json"]).stdout).unwrap();
    assert!(vault.to_string().contains("dns-cloudflare"), "{vault}");
    assert!(!vault.to_string().contains(TOKEN));
    assert!(!used.to_string().contains(TOKEN));
    assert_eq!(
        files_holding(&home.vyre_home(), TOKEN.as_bytes()),
        Vec::<std::path::PathBuf>::new()
    );

    // Renewing reads the token from the vault, and keeps the one A record.
    let before = used["not_after"].as_i64().unwrap();
    let out = home.vyre(&["names", "renew"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let renewed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(renewed["not_after"].as_i64().unwrap() >= before);
    assert_eq!(cloudflare.records().len(), 1);
    // With its own domain, this Vyre takes no <you>.vyre.run name besides.
    refused(
        &home.vyre(&["names", "claim", "--name", "alex"]),
        "name_held",
    );
    drop(rt);
}
