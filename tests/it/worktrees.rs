//! A worktree per session (issue 25), on the real CLI: a session started with `worktree: true`
//! runs in a new worktree on its own branch, commits there, and the person merges it into the
//! checkout's branch; a worktree holding work saved nowhere else is never removed unless the
//! person names its branch, and an idle close, a stop or a restart leaves it as it was; the
//! repository's config runs no program when Vyre checks out or merges.

use serde_json::{Value, json};

use crate::support::{InProcess, git};
use crate::threads_e2e::*;

/// The person's repository: `a.txt` on `main`, one commit, and a folder `sub`.
fn repository(work: &std::path::Path) {
    git(work, &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(work.join("sub")).unwrap();
    std::fs::write(work.join("a.txt"), "one\n").unwrap();
    std::fs::write(work.join("sub/b.txt"), "bee\n").unwrap();
    git(work, &["add", "."]);
    git(work, &["commit", "-qm", "first"]);
}

async fn start_in_worktree(r: &Rig, cwd: &std::path::Path, worktree: Value) -> (String, Value) {
    let thread = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": cwd, "worktree": worktree }),
        )
        .await
        .unwrap()["thread"]
        .as_str()
        .unwrap()
        .to_string();
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    (thread, got)
}

const COMMIT: &str =
    "git -c user.name=Session -c user.email=session@example.com commit -qam change";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_worktree_session_commits_on_its_branch_and_the_person_merges_it() {
    let r = rig("worktree-merge").await;
    repository(&r.work);
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    // Started from a folder within the repository: the session starts at the same place.
    let (thread, got) = start_in_worktree(&r, &r.work.join("sub"), json!("feature/tidy")).await;
    let w = &got["worktree"];
    assert_eq!(w["branch"], "feature/tidy", "{got}");
    let path = std::path::PathBuf::from(w["path"].as_str().unwrap());
    assert_eq!(
        path,
        r.home.dir.join(".vyre-worktrees/work/feature-tidy"),
        "beside the repository, in a folder of Vyre's"
    );
    assert_eq!(got["cwd"], path.join("sub").display().to_string());
    assert_eq!(w["base"], git(&r.work, &["rev-parse", "HEAD"]));
    assert_eq!(git(&path, &["branch", "--show-current"]), "feature/tidy");
    let listed = r.sock.call("threads.list", &json!({})).await.unwrap();
    assert_eq!(listed[0]["branch"], "feature/tidy", "{listed}");

    let text = format!("RUNBASH sed -i s/one/two/ ../a.txt && {COMMIT}");
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": text }))
        .await
        .unwrap();
    allow_until_finished(&r, &mut stream, &thread).await;
    // The session's commit is on its branch; the person's checkout is as it was.
    assert_eq!(
        std::fs::read_to_string(path.join("a.txt")).unwrap(),
        "two\n"
    );
    assert_eq!(
        std::fs::read_to_string(r.work.join("a.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(git(&r.work, &["rev-list", "--count", "main"]), "1");
    assert_eq!(git(&r.work, &["rev-list", "--count", "feature/tidy"]), "2");

    // Not the session's to merge or remove: a person's call only.
    let socket = r.home.vyre_home().join("s").join(format!("{thread}.sock"));
    let session = vyre::surfaces::client::Client::socket(&socket);
    for tool in ["threads.worktree.merge", "threads.worktree.remove"] {
        let refused = session
            .call(tool, &json!({ "thread": thread }))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Some("person_only"), "{tool}: {refused}");
    }

    let merged = r
        .sock
        .call("threads.worktree.merge", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(merged["how"], "fast-forward");
    assert_eq!(merged["into"], "main");
    assert_eq!(
        std::fs::read_to_string(r.work.join("a.txt")).unwrap(),
        "two\n"
    );
    assert_eq!(merged["commit"], git(&r.work, &["rev-parse", "main"]));
    let again = r
        .sock
        .call("threads.worktree.merge", &json!({ "thread": thread }))
        .await
        .unwrap_err();
    assert_eq!(again.code(), Some("nothing_to_merge"), "{again}");

    // Merged and clean: removed with its branch, no confirmation needed.
    let removed = r
        .sock
        .call("threads.worktree.remove", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert_eq!(removed["branch_deleted"], true, "{removed}");
    assert!(!path.exists());
    assert_eq!(git(&r.work, &["branch", "--list", "feature/tidy"]), "");
    let got = r
        .sock
        .call("threads.get", &json!({ "thread": thread }))
        .await
        .unwrap();
    assert!(got["worktree"]["removed_at"].is_i64(), "{got}");
    let listed = r.sock.call("threads.list", &json!({})).await.unwrap();
    assert!(listed[0].get("branch").is_none(), "{listed}");
    assert_eq!(got["state"], "stopped");
    let timeline = r
        .sock
        .call("threads.timeline", &json!({ "thread": thread }))
        .await
        .unwrap()
        .to_string();
    for said in [
        "Working in a worktree on branch feature/tidy",
        "Merged feature/tidy into main (fast-forward)",
        "The worktree was removed, with its branch",
    ] {
        assert!(timeline.contains(said), "{said} in {timeline}");
    }
    assert!(!timeline.contains("Sending again resumes it"), "{timeline}");
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn work_in_a_worktree_outlives_idle_stop_and_restart_and_is_removed_only_when_named() {
    // Sessions idle for a second are closed: the idle close is tried as well.
    let mut r = rig_with("worktree-keep", json!({ "idle_minutes": 0.02 })).await;
    repository(&r.work);
    // A hostile config: a filter naming a program.
    let marker = r.home.dir.join("pwned");
    // The session's own git (Claude Code runs `git status` itself) obeys it as the person's
    // would; only a run outside a session (no VYRE_THREAD) leaves the mark.
    let evil = format!(
        "sh -c '[ -n \"$VYRE_THREAD\" ] || ps -o args= -p $PPID >> {}; cat'",
        marker.display()
    );
    git(&r.work, &["config", "filter.evil.smudge", &evil]);
    git(&r.work, &["config", "filter.evil.clean", &evil]);
    std::fs::write(r.work.join(".gitattributes"), "*.txt filter=evil\n").unwrap();
    git(&r.work, &["add", ".gitattributes"]);
    git(&r.work, &["commit", "-qm", "attributes"]);
    // The person's own git obeyed it just now; from here on, only Vyre's runs are watched.
    let _ = std::fs::remove_file(&marker);

    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let (thread, got) = start_in_worktree(&r, &r.work, json!(true)).await;
    let w = got["worktree"].clone();
    let branch = w["branch"].as_str().unwrap().to_string();
    assert!(branch.starts_with("vyre/session-"), "{w}");
    assert_eq!(w["filters_off"], json!(["evil"]));
    let path = std::path::PathBuf::from(w["path"].as_str().unwrap());
    assert_eq!(got["cwd"], path.display().to_string(), "no trailing slash");
    assert_eq!(
        std::fs::read_to_string(path.join("a.txt")).unwrap(),
        "one\n"
    );
    assert!(!marker.exists(), "{:?}", std::fs::read_to_string(&marker));

    // A commit and a file not committed.
    let text = format!("RUNBASH echo more >> a.txt && {COMMIT} && echo draft > draft.txt");
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": text }))
        .await
        .unwrap();
    allow_until_finished(&r, &mut stream, &thread).await;
    assert!(path.join("draft.txt").exists());
    assert!(!marker.exists(), "the repository's filter ran");

    // An idle close, a stop, then a restart: the worktree is as it was.
    let closed = events_until(&mut stream, |e| e["type"] == "thread.stopped").await;
    assert_eq!(closed.last().unwrap()["payload"]["reason"], "idle");
    assert_eq!(
        std::fs::read_to_string(path.join("draft.txt")).unwrap(),
        "draft\n"
    );
    r.sock
        .call("threads.stop", &json!({ "thread": thread }))
        .await
        .unwrap();
    r.vyred.stop().await;
    r.vyred = InProcess::start(&r.home, vec![]).await;
    r.sock = r.vyred.socket_client();
    assert_eq!(
        std::fs::read_to_string(path.join("draft.txt")).unwrap(),
        "draft\n"
    );

    // Merging runs no program of the repository's: refused, with how to do it by hand.
    let refused = r
        .sock
        .call(
            "threads.worktree.merge",
            &json!({ "thread": thread, "how": "merge" }),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("uncommitted"), "{refused}");
    assert!(refused.to_string().contains("draft.txt"), "{refused}");

    // Removing is refused while anything is saved nowhere else; a wrong name changes nothing.
    for confirm in [json!(null), json!("main"), json!("vyre/other")] {
        let refused = r
            .sock
            .call(
                "threads.worktree.remove",
                &json!({ "thread": thread, "confirm": confirm }),
            )
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Some("unsaved_work"), "{refused}");
        let said = refused.to_string();
        assert!(
            said.contains("1 file(s) not committed (draft.txt)"),
            "{said}"
        );
        assert!(said.contains("1 commit(s)"), "{said}");
        assert!(path.join("draft.txt").exists());
    }
    // Committing the draft leaves only the commits: merging then meets the hostile config.
    git(&path, &["add", "draft.txt"]);
    git(&path, &["commit", "-qm", "draft"]);
    let _ = std::fs::remove_file(&marker);
    let refused = r
        .sock
        .call("threads.worktree.merge", &json!({ "thread": thread }))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("merge_runs_programs"), "{refused}");
    assert!(refused.to_string().contains("filter.evil"), "{refused}");
    assert!(!marker.exists(), "the repository's filter ran");

    // Named: removed, with what was only there.
    let removed = r
        .sock
        .call(
            "threads.worktree.remove",
            &json!({ "thread": thread, "confirm": branch }),
        )
        .await
        .unwrap();
    assert_eq!(removed["lost_commits"], 2, "{removed}");
    assert_eq!(removed["branch_deleted"], true);
    assert!(!path.exists());
    assert!(!marker.exists(), "the repository's filter ran");
    assert_eq!(
        std::fs::read_to_string(r.work.join("a.txt")).unwrap(),
        "one\n"
    );
    r.vyred.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_worktree_is_refused_with_reasons() {
    let r = rig("worktree-refused").await;
    let plain = r
        .sock
        .call("threads.start", &json!({ "cwd": r.work, "worktree": true }))
        .await
        .unwrap_err();
    assert_eq!(plain.code(), Some("not_a_repository"), "{plain}");
    git(&r.work, &["init", "-q", "-b", "main"]);
    let empty = r
        .sock
        .call("threads.start", &json!({ "cwd": r.work, "worktree": true }))
        .await
        .unwrap_err();
    assert_eq!(empty.code(), Some("no_commit"), "{empty}");
    repository(&r.work);
    for bad in ["--force", "a b", "../../etc", "x;id"] {
        let refused = r
            .sock
            .call("threads.start", &json!({ "cwd": r.work, "worktree": bad }))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Some("invalid_input"), "{bad}: {refused}");
    }
    // Two threads cannot share one worktree's folder.
    let (_, first) = start_in_worktree(&r, &r.work, json!("twice")).await;
    assert_eq!(first["worktree"]["branch"], "twice");
    let second = r
        .sock
        .call(
            "threads.start",
            &json!({ "cwd": r.work, "worktree": "twice" }),
        )
        .await
        .unwrap_err();
    assert_eq!(second.code(), Some("worktree_exists"), "{second}");
    let threads = r.sock.call("threads.list", &json!({})).await.unwrap();
    assert_eq!(
        threads.as_array().map(Vec::len),
        Some(1),
        "no thread for a refusal"
    );
    let none = r
        .sock
        .call("threads.worktree.remove", &json!({ "thread": "nope" }))
        .await
        .unwrap_err();
    assert_eq!(none.code(), Some("no_worktree"), "{none}");
    r.vyred.stop().await;
}

/// In Claude Code's own sandbox (the Mac's containment, here on bubblewrap), whose commands may
/// write only in the session's folders: a worktree's commits go to the repository's `.git`,
/// beside the worktree, and must still work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "drives the real Claude Code CLI: tests/run, or VYRE_TEST_CLAUDE=... cargo test -- --include-ignored"]
async fn a_worktree_session_in_claude_codes_sandbox_commits() {
    let has = |p: &str| {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {p}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !has("socat") || !has("bwrap") {
        eprintln!("skipped: Claude Code's sandbox on Linux needs socat and bubblewrap");
        return;
    }
    let r = rig_with("worktree-sandboxed", json!({ "containment": "claude" })).await;
    repository(&r.work);
    let mut stream = r.sock.events("types=thread.*,ask.*", None).await.unwrap();
    let (thread, got) = start_in_worktree(&r, &r.work, json!("sandboxed")).await;
    let path = std::path::PathBuf::from(got["worktree"]["path"].as_str().unwrap());
    let text = format!("RUNBASH echo two > a.txt && {COMMIT} 2>&1; git log --oneline | wc -l");
    r.sock
        .call("threads.send", &json!({ "thread": thread, "text": text }))
        .await
        .unwrap();
    allow_until_finished(&r, &mut stream, &thread).await;
    assert_eq!(
        git(&r.work, &["rev-list", "--count", "sandboxed"]),
        "2",
        "the sandboxed session could not commit in its worktree"
    );
    assert_eq!(
        std::fs::read_to_string(path.join("a.txt")).unwrap(),
        "two\n"
    );
    r.vyred.stop().await;
}
