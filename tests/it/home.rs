//! The vyre home (`vyre` with no arguments), used as a person would: in a real terminal under
//! tmux, with arrow keys and type-to-filter, and as a plain list when piped.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::*;

pub(crate) struct Tmux {
    socket: String,
}

impl Tmux {
    pub(crate) fn start(name: &str, cwd: &Path, command: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!("skipped: tmux is not installed (tests/run installs it)");
            return None;
        }
        let t = Tmux {
            socket: format!("vyre-it-{}-{name}", std::process::id()),
        };
        let ok = Command::new("tmux")
            .args([
                "-L",
                &t.socket,
                "new-session",
                "-d",
                "-x",
                "110",
                "-y",
                "24",
                "-c",
            ])
            .arg(cwd)
            .arg(command)
            .status()
            .unwrap()
            .success();
        assert!(ok, "tmux started");
        Some(t)
    }
    pub(crate) fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
    pub(crate) fn keys(&self, keys: &[&str]) {
        Command::new("tmux")
            .args(["-L", &self.socket, "send-keys"])
            .args(keys)
            .status()
            .unwrap();
    }
    pub(crate) fn wait_for(&self, text: &str) -> String {
        self.wait_for_all(&[text])
    }
    /// A prompt is drawn in pieces: a screen is read only once all of `texts` are on it.
    pub(crate) fn wait_for_all(&self, texts: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let s = self.screen();
            if texts.iter().all(|t| s.contains(t)) {
                return s;
            }
            assert!(Instant::now() < deadline, "waiting for {texts:?} on:\n{s}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

fn wait_file(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(s) = std::fs::read_to_string(path)
            && !s.is_empty()
        {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "{} never written",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_home_lists_projects_preselects_the_one_here_and_resumes_a_session_in_the_terminal() {
    let home = TempHome::new("home-tui");
    let juniper = home.dir.join("work/juniper");
    let other = home.dir.join("work/other");
    std::fs::create_dir_all(juniper.join("src")).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    let transcripts = home.dir.join("home/.claude/projects/-work-juniper");
    std::fs::create_dir_all(&transcripts).unwrap();
    let line = serde_json::json!({
        "type": "user", "message": { "role": "user", "content": "fix the invoice totals" },
        "uuid": "u1", "timestamp": "2026-11-30T10:00:00Z", "cwd": juniper, "sessionId": "sess-1", "entrypoint": "cli"
    });
    std::fs::write(transcripts.join("sess-1.jsonl"), format!("{line}\n")).unwrap();
    // A `claude` that writes down what it was asked to do, and where.
    let bin = home.dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let said = home.dir.join("claude.said");
    std::fs::write(
        bin.join("claude"),
        format!(
            "#!/bin/sh\necho \"claude $* in $(pwd)\" > {}\n",
            said.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(bin.join("claude"), std::fs::Permissions::from_mode(0o755)).unwrap();

    let _vyred = home.spawn_daemon();
    for (name, dir) in [("Juniper", &juniper), ("Other", &other)] {
        let out = home.vyre(&["projects", "create", name, "--home", dir.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(
        home.vyre(&["agents", "create", "juno", "--kind", "assistant"])
            .status
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while !String::from_utf8_lossy(&home.vyre(&["projects", "list"]).stdout)
        .contains("\"threads\": 1")
    {
        assert!(Instant::now() < deadline, "recall did not find the session");
        std::thread::sleep(Duration::from_millis(50));
    }

    // Piped: a plain list.
    let plain = home.vyre(&[]);
    assert!(plain.status.success());
    let text = String::from_utf8_lossy(&plain.stdout);
    for expected in [
        "Projects",
        "Juniper  ·  1 thread",
        "Other  ·  0 threads",
        "+ New session (no project)",
        "Agents",
        "@juno  ·  your assistant",
    ] {
        assert!(text.contains(expected), "{expected:?} in:\n{text}");
    }

    // In a terminal, inside Juniper's folder: Juniper is preselected, not opened.
    let run = format!(
        "env -i PATH={}:{} HOME={} VYRE_HOME={} TERM=xterm {}; sleep 30",
        bin.display(),
        std::env::var("PATH").unwrap_or_default(),
        home.dir.join("home").display(),
        home.vyre_home().display(),
        BIN
    );
    let Some(tmux) = Tmux::start("resume", &juniper.join("src"), &run) else {
        return;
    };
    // The project here is preselected.
    tmux.wait_for_all(&["? Vyre", "> Juniper"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for_all(&["fix the invoice totals", "? Juniper", "terminal"]);
    tmux.keys(&["Down", "Enter"]);
    assert_eq!(
        wait_file(&said).trim(),
        format!("claude --resume sess-1 in {}", juniper.display())
    );
    drop(tmux);

    // Type to filter, then a new session in that project's home.
    std::fs::remove_file(&said).unwrap();
    let tmux = Tmux::start("new", &home.dir, &run).unwrap();
    tmux.wait_for("? Vyre");
    tmux.keys(&["-l", "oth"]);
    let screen = tmux.wait_for("> Other");
    assert!(!screen.contains("Juniper"), "filtered:\n{screen}");
    tmux.keys(&["Enter"]);
    tmux.wait_for("+ New session here");
    tmux.keys(&["Enter"]);
    assert_eq!(
        wait_file(&said).trim(),
        format!("claude  in {}", other.display())
    );
}

#[test]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
fn picking_an_agent_in_the_home_talks_to_it_and_its_reply_streams_back() {
    let cli = crate::claude_e2e::claude_bin();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let api = rt.block_on(crate::fake_api::FakeApi::start());
    let home = TempHome::new("home-agent");
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    let config = serde_json::json!({ "sessions": { "claude": cli, "base_url": api.url(), "home": home.dir.join("home"), "auth": "api-key", "spares": 0 } });
    std::fs::write(home.home().config_file(), config.to_string()).unwrap();
    let _vyred = home.spawn_daemon();
    rt.block_on(crate::threads_e2e::grant_key(&home.socket_client()));
    let created = home.vyre(&["agents", "create", "juno", "--kind", "assistant"]);
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );

    let run = format!(
        "env -i PATH={} HOME={} VYRE_HOME={} TERM=xterm {}; sleep 30",
        std::env::var("PATH").unwrap_or_default(),
        home.dir.join("home").display(),
        home.vyre_home().display(),
        BIN
    );
    // The home, juno picked, its line open.
    let say_to_juno = |name: &str| {
        let tmux = Tmux::start(name, &home.dir, &run)?;
        tmux.wait_for("? Vyre");
        tmux.keys(&["-l", "juno"]);
        tmux.wait_for("> @juno");
        tmux.keys(&["Enter"]);
        tmux.wait_for("Say to @juno:");
        Some(tmux)
    };
    let Some(tmux) = say_to_juno("agent") else {
        return;
    };
    tmux.keys(&["-l", "good morning"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for_all(&["reply to [good morning]", "Say to @juno"]);
    let list = String::from_utf8_lossy(&home.vyre(&["agents", "list"]).stdout).into_owned();
    assert!(
        list.contains("\"thread\": \""),
        "the talk went to juno's thread: {list}"
    );
    drop(tmux);

    // Its session closed, juno's thread is resumed while the person writes the next message
    // (issue 26): live before anything is typed, and the message then goes to it.
    let client = home.socket_client();
    let agents: serde_json::Value = rt
        .block_on(client.call("agents.list", &serde_json::json!({})))
        .unwrap();
    let thread = agents[0]["thread"].as_str().unwrap().to_string();
    rt.block_on(client.call("threads.stop", &serde_json::json!({ "thread": thread })))
        .unwrap();
    let live = || {
        let threads: serde_json::Value = rt
            .block_on(client.call("threads.list", &serde_json::json!({})))
            .unwrap();
        threads
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["thread"] == thread.as_str() && t["live"] == true)
    };
    assert!(!live(), "stopped");
    let Some(tmux) = say_to_juno("agent-again") else {
        return;
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !live() {
        assert!(
            Instant::now() < deadline,
            "juno's thread was not resumed while the prompt was open"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux.keys(&["-l", "good evening"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("reply to [good evening]");
}
