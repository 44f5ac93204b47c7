//! vyred as a process: one per home, graceful shutdown, `vyre up` and `vyre down`.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::json;

use crate::support::*;

#[test]
fn a_second_vyred_on_the_same_home_refuses_and_names_the_first() {
    let home = TempHome::new("two");
    let first = home.spawn_daemon();
    let out = home.vyre(&["daemon"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("another vyred already runs"), "{err}");
    assert!(err.contains(&format!("pid {}", first.pid())), "{err}");
    // The first one is untouched.
    let out = home.vyre(&["status", "--json"]);
    assert!(out.status.success());
    drop(first);
}

#[test]
fn the_home_socket_and_address_are_laid_out_privately() {
    let home = TempHome::new("layout");
    let mut vyred = home.spawn_daemon();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&home.vyre_home()), 0o700);
    assert_eq!(mode(&home.home().socket()), 0o600);
    assert_eq!(mode(&home.home().addr_file()), 0o600);
    assert_eq!(mode(&home.home().database()), 0o600);
    let addr = home.http_addr();
    assert!(addr.ip().is_loopback());
    let logs: Vec<_> = std::fs::read_dir(home.home().logs()).unwrap().collect();
    assert_eq!(logs.len(), 1, "one log file for today");
    vyred.signal(Signal::SIGINT);
    assert!(vyred.wait(Duration::from_secs(30)).success());
    // Every module's task ends when vyred stops (one still sleeping held the box's `podman
    // stop` past its grace and got vyred killed): the drain never ran out of time.
    let log = std::fs::read_dir(home.home().logs())
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default())
        .collect::<String>();
    assert!(!log.contains("did not finish in time"), "{log}");
    // Nor does a fresh vyred warn about anything (the curator once did, asking recall before
    // recall had started).
    assert!(!log.contains(" WARN "), "{log}");
    let events = stored_events(&home.home().database());
    assert_eq!(events.last().unwrap().1, "daemon.stopped");
}

#[test]
fn sigterm_under_a_load_of_emits_loses_no_committed_event() {
    let home = TempHome::new("sigterm");
    let mut vyred = home.spawn_daemon();
    let socket = home.home().socket();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    // Eight writers add devices (each commits a row and a device.added event) as fast as they can.
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let client = vyre::surfaces::client::Client::socket(&socket);
            let stop = stop.clone();
            rt.spawn(async move {
                let mut acked = Vec::new();
                for i in 0.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    match client
                        .call("devices.add", &json!({ "name": format!("w{w}-{i}") }))
                        .await
                    {
                        Ok(out) => acked.push(out["device"]["id"].as_str().unwrap().to_string()),
                        Err(_) => break,
                    }
                }
                acked
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(400));
    vyred.signal(Signal::SIGTERM);
    let status = vyred.wait(Duration::from_secs(30));
    stop.store(true, Ordering::Relaxed);
    assert!(status.success(), "graceful exit: {status}");
    let acked: Vec<String> = rt.block_on(async {
        let mut all = Vec::new();
        for w in writers {
            all.extend(w.await.unwrap());
        }
        all
    });
    assert!(
        acked.len() > 20,
        "the load ran ({} calls answered)",
        acked.len()
    );
    assert!(!home.home().socket().exists(), "the socket file is removed");
    assert!(
        !home.home().addr_file().exists(),
        "the address file is removed"
    );

    let events = stored_events(&home.home().database());
    let added: Vec<String> = events
        .iter()
        .filter(|(_, kind, _)| kind == "device.added")
        .map(|(_, _, p)| p["device"].as_str().unwrap().to_string())
        .collect();
    let unique: BTreeSet<&String> = added.iter().collect();
    assert_eq!(unique.len(), added.len(), "no event twice");
    for id in &acked {
        assert!(
            unique.contains(id),
            "an answered call's event is in the log: {id}"
        );
    }
    assert_eq!(events.last().unwrap().1, "daemon.stopped");
}

/// A test that fails between `vyre up` and `vyre down` leaves no vyred behind: its home ends
/// the one started on it (and only that one).
#[test]
fn a_vyred_left_up_by_a_failing_test_ends_with_its_home() {
    let home = TempHome::new("left-up");
    let other = TempHome::new("left-up-other");
    assert!(home.vyre(&["up"]).status.success());
    assert!(other.vyre(&["up"]).status.success());
    let pid = home
        .daemon_pid()
        .expect("vyre up's vyred, found by its home");
    let others = other.daemon_pid().expect("the other home's vyred");
    let running = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            !stat
                .rsplit_once(") ")
                .is_some_and(|(_, s)| s.starts_with('Z'))
        })
    };
    drop(home);
    assert!(wait_until(Duration::from_secs(15), || !running(pid)));
    assert!(running(others), "another home's vyred is left alone");
    assert!(other.vyre(&["down"]).status.success());
}

#[test]
fn up_starts_vyred_in_the_background_and_down_stops_it() {
    let home = TempHome::new("updown");
    let out = home.vyre(&["up"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Vyre is running"), "{text}");
    assert!(text.contains("http://127.0.0.1:"), "{text}");
    // A box says how a laptop reaches it, and gives the onboarding's one-time link.
    let port = std::fs::read_to_string(home.home().addr_file())
        .unwrap()
        .trim()
        .rsplit_once(':')
        .unwrap()
        .1
        .to_string();
    assert!(
        text.contains(&format!("ssh -N -L {port}:127.0.0.1:{port} ")),
        "{text}"
    );
    assert!(
        text.contains(&format!("http://127.0.0.1:{port}/onboard?t=")),
        "{text}"
    );

    let again = home.vyre(&["up"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("already running"));

    let status = home.vyre(&["status"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("role box"), "{text}");
    assert!(text.contains("system       started"), "{text}");
    let pid = vyre::kernel::lock::holder(&home.home().lock_file()).unwrap();

    let down = home.vyre(&["down"]);
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
    assert!(String::from_utf8_lossy(&down.stdout).contains("vyred stopped"));
    assert!(!home.home().socket().exists());
    assert!(
        wait_until(Duration::from_secs(5), || nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            None
        )
        .is_err()),
        "the background vyred exited"
    );
    let again = home.vyre(&["down"]);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).contains("not running"));
    let status = home.vyre(&["status"]);
    assert_eq!(status.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&status.stderr).contains("vyred is not running"));
}

#[test]
fn invalid_config_is_a_clear_error_naming_file_line_and_column() {
    let home = TempHome::new("badconfig");
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(
        home.home().config_file(),
        "{\n  \"port\": 80,\n  \"role\": box\n}\n",
    )
    .unwrap();
    let out = home.vyre(&["daemon"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let expected = format!("{}:3:11", home.home().config_file().display());
    assert!(err.contains(&expected), "{err}");
    let out = home.vyre(&["up"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&expected), "`vyre up` says why too: {err}");
}

#[test]
fn a_session_limit_of_zero_or_less_is_refused_at_config_load_with_the_reason() {
    let home = TempHome::new("badlimit");
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    for (text, position) in [
        ("{\n  \"sessions\": {\"max_live\": 0}\n}\n", ":2:"),
        ("{\"sessions\": {\"max_live\": -3}}", ":1:"),
    ] {
        std::fs::write(home.home().config_file(), text).unwrap();
        let out = home.vyre(&["daemon"]);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        let at = format!("{}{position}", home.home().config_file().display());
        assert!(err.contains(&at), "names the file and line: {err}");
        assert!(
            err.contains("must be a whole number of at least 1"),
            "says why: {err}"
        );
        assert!(!home.home().socket().exists(), "vyred did not start");
    }
}

#[test]
fn cli_usage_errors_exit_non_zero_with_a_message() {
    let home = TempHome::new("usage");
    let _vyred = home.spawn_daemon();
    let out = home.vyre(&["devices", "add"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("name"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = home.vyre(&["devices", "add", "phone", "--colour", "red"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown option --colour"));
    let out = home.vyre(&["nosuchmodule", "x"]);
    assert_eq!(out.status.code(), Some(2));
    let out = home.vyre(&["devices", "revoke", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown_device"));
}

#[test]
fn another_user_cannot_reach_the_socket() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: needs root to run a client as another user");
        return;
    }
    use std::os::unix::process::CommandExt;
    let home = TempHome::new("foreign");
    let _vyred = home.spawn_daemon();
    let out = home
        .command()
        .args(["status"])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ermission denied"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bound_to_every_interface_vyred_is_still_reached_and_linked_on_loopback() {
    let home = TempHome::new("bind-all");
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(home.home().config_file(), r#"{"bind": "0.0.0.0"}"#).unwrap();
    let vyred = InProcess::start(&home, vec![]).await;
    assert!(vyred.http.ip().is_loopback(), "{}", vyred.http);
    let written = std::fs::read_to_string(home.home().addr_file()).unwrap();
    assert!(written.starts_with("127.0.0.1:"), "{written}");
    let health = vyred.http_client(None).get("/v1/health").await.unwrap();
    assert_eq!(health["version"], "0.1.0");
    let link = vyred
        .socket_client()
        .call("devices.link", &serde_json::json!({}))
        .await
        .unwrap();
    assert!(
        link["url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:"),
        "{link}"
    );
    vyred.stop().await;
}

/// `vyre tools | head` and the like: a reader that goes away ends the CLI quietly, the way a
/// Unix tool ends (by SIGPIPE), with no panic on stderr and nothing changed in vyred.
#[test]
fn a_closed_stdout_ends_the_cli_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let home = TempHome::new("sigpipe");
    let vyred = home.spawn_daemon();
    for args in [
        &["tools"][..],
        &["events", "--since", "0"][..],
        &["status"][..],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        // The reader is gone before the CLI writes a byte.
        drop(reader);
        let mut child = home
            .command()
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "vyre {args:?} did not end"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert!(!err.contains("panicked"), "vyre {args:?}: {err}");
        assert!(
            status.success() || status.signal() == Some(libc::SIGPIPE),
            "vyre {args:?} ended {status:?}: {err}"
        );
    }
    let out = home.vyre(&["status", "--json"]);
    assert!(out.status.success(), "vyred still answers");
    drop(vyred);
}
