//! The private network for real: vyred in a network namespace of its own (the box), a phone in
//! another, joined by a veth pair and nothing else, the phone's tunnel run by the real
//! `wireguard-go` with the configuration `network.join` gave. Then the attackers of the threat
//! model try their way in: a page on another site in the phone's browser, a device posing as
//! another, a key vyred never issued, a device revoked mid-stream, anyone outside the tunnel.
//!
//! Needs root, iproute2, wireguard-tools and wireguard-go (`.ci/run` installs them), so it is
//! `#[ignore]`d and run by `tests/run` with `--include-ignored`.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::{BIN, TempHome, wait_until};

/// A network namespace, removed (with every process in it) on drop.
pub struct Ns(pub String);

impl Ns {
    pub fn new(name: String) -> Ns {
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        run("ip", &["netns", "add", &name]);
        Ns(name)
    }

    /// A command run inside the namespace.
    pub fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.0, program]);
        c
    }

    pub fn ip(&self, args: &[&str]) {
        let mut all = vec!["-n", self.0.as_str()];
        all.extend_from_slice(args);
        run("ip", &all);
    }

    /// `curl` from inside the namespace: its exit code and what it printed.
    pub fn curl(&self, args: &[&str]) -> (i32, String) {
        let out = self
            .cmd("curl")
            .args(["-sS", "-m", "5"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }
}

impl Drop for Ns {
    fn drop(&mut self) {
        if let Ok(out) = Command::new("ip").args(["netns", "pids", &self.0]).output() {
            for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                let _ = Command::new("kill").args(["-9", pid]).output();
            }
        }
        let _ = Command::new("ip").args(["netns", "del", &self.0]).output();
    }
}

pub fn run(program: &str, args: &[&str]) -> Output {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Set the phone's tunnel to `config` (a configuration `network.join` gave) on `wg`.
pub fn configure(phone: &Ns, wg: &str, config: &str, dir: &Path) {
    let file = dir.join(format!("{wg}.conf"));
    std::fs::write(&file, config).unwrap();
    let stripped = run("wg-quick", &["strip", file.to_str().unwrap()]);
    let stripped_file = dir.join(format!("{wg}.stripped"));
    std::fs::write(&stripped_file, &stripped.stdout).unwrap();
    let out = phone
        .cmd("wg")
        .args(["setconf", wg, stripped_file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn field(config: &str, key: &str) -> String {
    config
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("{key} in {config}"))
        .to_string()
}

#[test]
#[ignore = "needs root, iproute2, wireguard-tools and wireguard-go (tests/run runs it)"]
fn a_phone_on_the_network_reaches_the_app_and_nobody_else_gets_in() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "the network test makes network namespaces: run it as root"
    );
    for program in ["ip", "wg", "wg-quick", "wireguard-go", "curl"] {
        assert!(have(program), "{program} is missing (.ci/run installs it)");
    }
    let tag = std::process::id() % 100_000;
    let boxns = Ns::new(format!("vyre-box-{tag}"));
    let phone = Ns::new(format!("vyre-phone-{tag}"));
    let (vb, vp) = (format!("vyb{tag}"), format!("vyp{tag}"));
    run(
        "ip",
        &["link", "add", &vb, "type", "veth", "peer", "name", &vp],
    );
    run("ip", &["link", "set", &vb, "netns", &boxns.0]);
    run("ip", &["link", "set", &vp, "netns", &phone.0]);
    boxns.ip(&["addr", "add", "10.213.0.1/24", "dev", &vb]);
    boxns.ip(&["link", "set", &vb, "up"]);
    boxns.ip(&["link", "set", "lo", "up"]);
    phone.ip(&["addr", "add", "10.213.0.2/24", "dev", &vp]);
    phone.ip(&["link", "set", &vp, "up"]);
    phone.ip(&["link", "set", "lo", "up"]);

    // The box: vyred with a small web app, its network on the veth only.
    let home = TempHome::new("network");
    let ui = home.dir.join("ui");
    std::fs::create_dir_all(ui.join("assets")).unwrap();
    std::fs::write(ui.join("index.html"), "<html>vyre-network-app</html>").unwrap();
    // Bigger than the stack's buffers, so it takes many round trips through the tunnel.
    let big: Vec<u8> = (0..600_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(ui.join("assets").join("big.js"), &big).unwrap();
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(
        home.vyre_home().join("config.json"),
        r#"{ "network": { "enabled": true, "listen": "10.213.0.1:51820", "endpoint": "10.213.0.1:51820" } }"#,
    )
    .unwrap();
    let mut daemon = boxns
        .cmd(BIN)
        .arg("daemon")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.dir.join("home"))
        .env("VYRE_HOME", home.vyre_home())
        .env("VYRE_PORT", "0")
        .env("VYRE_UI_DIR", &ui)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(30), || {
            home.home().socket().exists() && home.vyre(&["network", "status"]).status.success()
        }),
        "vyred did not come up in its namespace"
    );
    let status: Value = serde_json::from_slice(&home.vyre(&["network", "status"]).stdout).unwrap();
    assert_eq!(status["up"], true, "{status}");
    let box_ip = status["address"].as_str().unwrap().to_string();

    let join = |name: &str| -> Value {
        let out = home.vyre(&["network", "join", "--name", name]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let joined = join("phone");
    let laptop = join("laptop");
    let config = joined["config"].as_str().unwrap();
    assert_eq!(field(config, "Endpoint"), "10.213.0.1:51820");
    assert_eq!(field(config, "AllowedIPs"), format!("{box_ip}/32"));
    assert!(joined["qr_svg"].as_str().unwrap().contains("<svg"));
    let phone_ip = joined["address"].as_str().unwrap().to_string();
    let laptop_ip = laptop["address"].as_str().unwrap().to_string();

    // The phone's tunnel, by the real wireguard-go, from the configuration it was given. Its
    // control socket is named by the interface in a folder all namespaces share: a name of
    // this test's own.
    let wg = format!("vwa{tag}");
    let wg = wg.as_str();
    let out = phone.cmd("wireguard-go").arg(wg).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    configure(&phone, wg, config, &home.dir);
    phone.ip(&["addr", "add", &format!("{phone_ip}/32"), "dev", wg]);
    phone.ip(&["link", "set", wg, "up"]);
    phone.ip(&["route", "add", &format!("{box_ip}/32"), "dev", wg]);
    let base = format!("http://{box_ip}");

    // The web app, and the API as the phone's device: no cookie, no token.
    let (code, page) = phone.curl(&[&format!("{base}/app/")]);
    assert_eq!(code, 0, "the phone reaches the app through its tunnel");
    assert!(page.contains("vyre-network-app"), "{page}");
    let fetched = phone
        .cmd("curl")
        .args(["-sS", "-m", "20", &format!("{base}/app/assets/big.js")])
        .output()
        .unwrap();
    assert!(fetched.status.success());
    assert!(
        fetched.stdout == big,
        "a 600 kB file arrives whole and unchanged"
    );
    let (_, session) = phone.curl(&[&format!("{base}/v1/session")]);
    let session: Value = serde_json::from_str(&session).unwrap();
    assert_eq!(session["data"]["device"]["id"], joined["device"]["id"]);
    assert_eq!(session["data"]["device"]["kind"], "network");
    let call = |extra: &[&str]| -> Value {
        let mut args = vec![
            "-X",
            "POST",
            "-H",
            "content-type: application/json",
            "-d",
            "{}",
        ];
        args.extend_from_slice(extra);
        let url = format!("{base}/v1/tools/network.status");
        args.push(&url);
        let (code, body) = phone.curl(&args);
        assert_eq!(code, 0, "{body}");
        serde_json::from_str(&body).unwrap()
    };
    let seen = call(&[]);
    let me = seen["data"]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["address"] == phone_ip.as_str())
        .cloned()
        .unwrap();
    assert_eq!(me["connected"], true, "{seen}");
    assert_eq!(
        me["endpoint"],
        format!(
            "10.213.0.2:{}",
            me["endpoint"].as_str().unwrap().rsplit(':').next().unwrap()
        )
    );

    // A page on another site, open in the phone's browser, rides the same tunnel: refused.
    let refused = call(&["-H", "Origin: https://evil.example"]);
    assert_eq!(refused["error"]["code"], "cross_origin", "{refused}");
    let refused = call(&["-H", "Sec-Fetch-Site: cross-site"]);
    assert_eq!(refused["error"]["code"], "cross_origin", "{refused}");
    let refused = call(&["-H", "Host: evil.example"]);
    assert_eq!(refused["error"]["code"], "bad_host", "{refused}");

    // Outside the tunnel there is nothing to talk to: vyred has no listener on the box's
    // network, only WireGuard's UDP port.
    let (code, _) = phone.curl(&["http://10.213.0.1/app/"]);
    assert_eq!(code, 7, "outside the tunnel, the connection is refused");

    // A device posing as another (the laptop's address, from the phone's tunnel): dropped.
    phone.ip(&["addr", "add", &format!("{laptop_ip}/32"), "dev", wg]);
    let (code, body) = phone.curl(&[
        "-m",
        "3",
        "--interface",
        &laptop_ip,
        &format!("{base}/v1/session"),
    ]);
    assert_ne!(
        code, 0,
        "a packet from another device's address is dropped: {body}"
    );
    phone.ip(&["addr", "del", &format!("{laptop_ip}/32"), "dev", wg]);

    // Revoked mid-stream: the phone's event stream is cut, nothing after it reaches the phone,
    // and the phone's tunnel is dead.
    let stream_file = home.dir.join("stream.txt");
    let mut stream = phone
        .cmd("curl")
        .args(["-sS", "-N", "-m", "60", "-o", stream_file.to_str().unwrap()])
        .arg(format!("{base}/v1/events?since=0"))
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    assert!(wait_until(Duration::from_secs(10), || {
        std::fs::read_to_string(&stream_file).is_ok_and(|s| s.contains("network.joined"))
    }));
    let id = joined["device"]["id"].as_str().unwrap();
    assert!(
        home.vyre(&["devices", "revoke", "--id", id])
            .status
            .success()
    );
    let later = join("after-the-cut");
    std::thread::sleep(Duration::from_secs(2));
    let streamed = std::fs::read_to_string(&stream_file).unwrap();
    assert!(
        !streamed.contains(later["device"]["id"].as_str().unwrap()),
        "an event after the revocation reached the revoked phone"
    );
    let (code, _) = phone.curl(&["-m", "3", &format!("{base}/v1/session")]);
    assert_ne!(code, 0, "a revoked device's tunnel carries nothing");
    let _ = stream.kill();
    let _ = stream.wait();
    let status: Value = serde_json::from_slice(&home.vyre(&["network", "status"]).stdout).unwrap();
    assert!(
        !status["devices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["device"] == id),
        "{status}"
    );

    // A key vyred never issued gets no answer at all.
    let stranger = run("wg", &["genkey"]);
    let stranger = String::from_utf8(stranger.stdout).unwrap();
    let stranger_config = laptop["config"].as_str().unwrap().replace(
        &field(laptop["config"].as_str().unwrap(), "PrivateKey"),
        stranger.trim(),
    );
    configure(&phone, wg, &stranger_config, &home.dir);
    phone.ip(&["addr", "add", &format!("{laptop_ip}/32"), "dev", wg]);
    let (code, _) = phone.curl(&[
        "-m",
        "3",
        "--interface",
        &laptop_ip,
        &format!("{base}/v1/session"),
    ]);
    assert_ne!(code, 0, "a key vyred did not issue gets nowhere");

    // And the laptop's own key, the control: the same tunnel with an issued key gets in.
    configure(&phone, wg, laptop["config"].as_str().unwrap(), &home.dir);
    let (code, session) = phone.curl(&["--interface", &laptop_ip, &format!("{base}/v1/session")]);
    assert_eq!(code, 0);
    let session: Value = serde_json::from_str(&session).unwrap();
    assert_eq!(session["data"]["device"]["id"], laptop["device"]["id"]);

    let _ = daemon.kill();
    let _ = daemon.wait();
}

/// Without namespaces: what `network.join` hands a device to open the app with, and what a
/// network turned off in the config says.
#[tokio::test]
async fn a_device_is_given_the_apps_address_as_a_qr_and_a_network_turned_off_says_so() {
    use crate::support::InProcess;
    let home = TempHome::new("net-url");
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(
        home.home().config_file(),
        serde_json::json!({ "network": { "enabled": true, "listen": "127.0.0.1:0", "endpoint": "203.0.113.7:51820" } })
            .to_string(),
    )
    .unwrap();
    let d = InProcess::start(&home, vec![]).await;
    let client = d.socket_client();
    let joined = client
        .call("network.join", &serde_json::json!({ "name": "phone" }))
        .await
        .unwrap();
    let status = client
        .call("network.status", &serde_json::json!({}))
        .await
        .unwrap();
    let address = status["address"].as_str().unwrap();
    assert_eq!(joined["url"], format!("http://{address}/app/"));
    // The camera's QR carries the address, and only it: a QR code of another text differs.
    let qr = joined["url_qr_svg"].as_str().unwrap();
    assert!(
        qr.starts_with("<?xml") || qr.starts_with("<svg"),
        "{qr:.60}"
    );
    assert_ne!(qr, joined["qr_svg"].as_str().unwrap());
    d.stop().await;

    std::fs::write(
        home.home().config_file(),
        serde_json::json!({ "network": { "enabled": false } }).to_string(),
    )
    .unwrap();
    let d = InProcess::start(&home, vec![]).await;
    let client = d.socket_client();
    let status = client
        .call("network.status", &serde_json::json!({}))
        .await
        .unwrap();
    assert_eq!(status["up"], false);
    assert!(
        status["why"]
            .as_str()
            .is_some_and(|w| w.contains("network.enabled is false")),
        "{status}"
    );
    let refused = client
        .call("network.join", &serde_json::json!({ "name": "laptop" }))
        .await
        .unwrap_err();
    assert!(
        format!("{refused:?}").contains("network_off"),
        "{refused:?}"
    );
    d.stop().await;
}
