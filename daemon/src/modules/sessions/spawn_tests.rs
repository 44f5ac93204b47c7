//! Tests of `spawn.rs`.
use super::*;
use tokio::io::AsyncReadExt;

#[tokio::test]
async fn a_session_can_run_as_another_user_with_only_its_group_and_a_closed_umask() {
    if nix::unistd::geteuid().as_raw() != 0 {
        eprintln!("skipped: switching users needs root (CI runs as root)");
        return;
    }
    // nobody/nogroup: a user that is surely not this test's.
    let spec = SpawnSpec {
        program: "/bin/sh".into(),
        args: vec![
            "-c".into(),
            "echo $(id -u) $(id -g) $(id -G) $(umask); cat <&3".into(),
        ],
        cwd: "/".into(),
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        fd3: Some(Secret::new("still-on-fd3".into())),
        subreaper: None,
        run_as: Some(RunAs {
            uid: 65534,
            gid: 65534,
        }),
        sandbox: None,
    };
    let mut s = spawn(spec).unwrap();
    let mut out = String::new();
    s.stdout.read_to_string(&mut out).await.unwrap();
    assert!(s.child.wait().await.unwrap().success());
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        vec!["65534 65534 65534 0027", "still-on-fd3"],
        "uid, gid, the one group, the umask; the credential still arrives"
    );
    // vyred (root here) still stops the session's group.
    let spec = SpawnSpec {
        program: "/bin/sleep".into(),
        args: vec!["30".into()],
        cwd: "/".into(),
        env: vec![],
        fd3: None,
        subreaper: None,
        run_as: Some(RunAs {
            uid: 65534,
            gid: 65534,
        }),
        sandbox: None,
    };
    let mut s = spawn(spec).unwrap();
    kill_group(&mut s.child, s.pgid, Duration::from_secs(1)).await;
    assert!(
        killpg(Pid::from_raw(s.pgid), None).is_err(),
        "the group is gone"
    );
}

#[tokio::test]
async fn a_child_leads_its_own_group_gets_only_its_env_and_reads_fd3() {
    let spec = SpawnSpec {
        program: "/bin/sh".into(),
        args: vec![
            "-c".into(),
            "echo \"$(ps -o pgid= -p $$) $(ps -o sid= -p $$)\"; env | sort; cat <&3".into(),
        ],
        cwd: std::env::temp_dir(),
        env: vec![
            ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
            ("ONLY".into(), "this".into()),
        ],
        fd3: Some(Secret::new("the-secret-on-fd3".into())),
        subreaper: None,
        run_as: None,
        sandbox: None,
    };
    let mut s = spawn(spec).unwrap();
    let mut out = String::new();
    s.stdout.read_to_string(&mut out).await.unwrap();
    assert!(s.child.wait().await.unwrap().success());
    let mut lines = out.lines();
    let ids: Vec<i32> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(ids, vec![s.pid, s.pid], "pgid and sid are the child's pid");
    let rest: Vec<&str> = lines.collect();
    assert!(rest.contains(&"ONLY=this"));
    assert!(
        !rest
            .iter()
            .any(|l| l.starts_with("HOME=") || l.starts_with("CARGO")),
        "nothing inherited: {rest:?}"
    );
    assert!(
        !rest
            .iter()
            .any(|l| l.contains("the-secret-on-fd3") && l.contains('=')),
        "the secret is not in the env"
    );
    assert_eq!(
        rest.last().copied(),
        Some("the-secret-on-fd3"),
        "read from fd 3"
    );
}

#[tokio::test]
async fn under_tini_a_detached_grandchild_stays_in_the_tree() {
    let Some(tini) = find_tini() else {
        eprintln!("skipped: tini is not installed");
        return;
    };
    let spec = SpawnSpec {
        program: "/bin/sh".into(),
        args: vec![
            "-c".into(),
            "sh -c 'setsid sleep 600 & echo $!'; sleep 600".into(),
        ],
        cwd: std::env::temp_dir(),
        env: vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())],
        fd3: None,
        subreaper: Some(tini),
        run_as: None,
        sandbox: None,
    };
    let mut s = spawn(spec).unwrap();
    let mut buf = [0u8; 32];
    let n = s.stdout.read(&mut buf).await.unwrap();
    let orphan: i32 = String::from_utf8_lossy(&buf[..n]).trim().parse().unwrap();
    let parent_of = |pid: i32| -> i32 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let close = stat.rfind(')').unwrap_or(0);
        stat[close + 1..]
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0)
    };
    let reparented = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        parent_of(orphan) == s.pid
    });
    assert!(
        reparented,
        "the double-forked sleep's parent is the session's tini, not init"
    );
    kill_group(&mut s.child, s.pgid, Duration::from_secs(1)).await;
    let _ = nix::sys::signal::kill(Pid::from_raw(orphan), Signal::SIGKILL);
}

#[tokio::test]
async fn under_tini_stopping_reaches_the_program_in_its_own_group() {
    let Some(tini) = find_tini() else {
        eprintln!("skipped: tini is not installed");
        return;
    };
    // tini runs the program in a process group of its own; this one ignores SIGTERM.
    let spec = SpawnSpec {
        program: "/bin/sh".into(),
        args: vec![
            "-c".into(),
            "trap '' TERM; echo $$ $(ps -o pgid= -p $$); exec sleep 600".into(),
        ],
        cwd: std::env::temp_dir(),
        env: vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())],
        fd3: None,
        subreaper: Some(tini),
        run_as: None,
        sandbox: None,
    };
    let mut s = spawn(spec).unwrap();
    let mut buf = [0u8; 64];
    let n = s.stdout.read(&mut buf).await.unwrap();
    let ids: Vec<i32> = String::from_utf8_lossy(&buf[..n])
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let (program, its_group) = (ids[0], ids[1]);
    assert_ne!(
        its_group, s.pgid,
        "tini gave the program a group of its own"
    );
    kill_group(&mut s.child, s.pgid, Duration::from_millis(300)).await;
    let alive = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|st| {
                !st.rsplit_once(')')
                    .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
            })
            .unwrap_or(false)
    };
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        !alive(program)
    });
    assert!(gone, "the program in tini's other group was stopped too");
}

#[tokio::test]
async fn in_a_sandbox_the_child_gets_its_secret_its_namespace_is_known_and_ending_it_ends_all() {
    let Some(bwrap) = sandbox::find_bwrap() else {
        eprintln!("skipped: bubblewrap is not installed");
        return;
    };
    let hidden = std::env::temp_dir().join(format!("vyre-spawn-hidden-{}", std::process::id()));
    std::fs::create_dir_all(&hidden).unwrap();
    std::fs::write(hidden.join("key"), "not-for-sessions").unwrap();
    let s = sandbox::Sandbox {
        bwrap: bwrap.clone(),
        hide: vec![hidden.clone()],
    };
    let spec = SpawnSpec {
        program: "/bin/sh".into(),
        args: vec![
            "-c".into(),
            format!(
                "cat {}/key 2>/dev/null; echo pid=$$; cat <&3; echo; setsid sh -c 'sleep 7333 &'; sleep 600",
                hidden.display()
            ),
        ],
        cwd: std::env::temp_dir(),
        env: vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())],
        fd3: Some(Secret::new("through-the-sandbox".into())),
        subreaper: None,
        run_as: None,
        sandbox: Some(SandboxLaunch {
            bwrap,
            args: s.args(&[]),
        }),
    };
    let mut spawned = spawn(spec).unwrap();
    let info = spawned.sandbox.expect("bwrap reported the sandbox");
    use std::os::unix::fs::MetadataExt;
    let ns = std::fs::metadata(format!("/proc/{}/ns/pid", info.init))
        .unwrap()
        .ino();
    assert_eq!(ns, info.pid_namespace);
    let mut out = String::new();
    let mut buf = [0u8; 256];
    while !out.contains("through-the-sandbox") {
        let n = spawned.stdout.read(&mut buf).await.unwrap();
        assert!(n > 0, "{out}");
        out.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(
        !out.contains("not-for-sessions"),
        "the hidden folder is empty: {out}"
    );
    assert!(
        out.contains("pid=2"),
        "the program is not the namespace's init: {out}"
    );
    let sleeping = || {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c.starts_with(b"sleep\x007333"))
        })
    };
    let started = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        sleeping()
    });
    assert!(started, "the detached sleep runs");
    kill_sandbox(&info);
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        !sleeping()
    });
    assert!(
        gone,
        "ending the sandbox ended the process that left its group"
    );
    kill_group(&mut spawned.child, spawned.pgid, Duration::from_secs(1)).await;
    let _ = std::fs::remove_dir_all(&hidden);
}

/// `sh` that started a `sleep` in its group, and the sleep's pid.
async fn with_a_sleeping_grandchild() -> (Spawned, i32) {
    let spec = SpawnSpec {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), "sleep 600 & echo $!; wait".into()],
        cwd: std::env::temp_dir(),
        env: vec![("PATH".into(), std::env::var_os("PATH").unwrap_or_default())],
        fd3: None,
        subreaper: None,
        run_as: None,
        sandbox: None,
    };
    let mut s = spawn(spec).unwrap();
    let mut buf = [0u8; 32];
    let n = s.stdout.read(&mut buf).await.unwrap();
    let grandchild: i32 = String::from_utf8_lossy(&buf[..n]).trim().parse().unwrap();
    (s, grandchild)
}

/// Whether `pid` ends within 2 s. A zombie until reaped by init counts as ended: it runs nothing.
fn ends(pid: i32) -> bool {
    (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| s.contains(") Z "))
            .unwrap_or(true)
    })
}

#[tokio::test]
async fn killing_the_group_takes_the_grandchildren() {
    let (mut s, grandchild) = with_a_sleeping_grandchild().await;
    kill_group(&mut s.child, s.pgid, Duration::from_secs(2)).await;
    assert!(ends(grandchild), "the sleep started by the child is gone");
}

#[tokio::test]
async fn a_leader_dropped_unwaited_takes_its_whole_group() {
    // A start abandoned half way (vyred stopping while a spare starts): the leader and what it
    // started end with it, so nothing writes into the person's folders after vyred is gone.
    let (s, grandchild) = with_a_sleeping_grandchild().await;
    drop(GroupChild::new(s.child, s.pgid));
    assert!(
        ends(grandchild),
        "the grandchild ended with its dropped leader"
    );
}

#[tokio::test]
async fn no_other_process_can_open_a_sessions_stdio_to_write_into_it() {
    use tokio::io::AsyncWriteExt;
    // `cat`: what vyred writes comes back, and the end of vyred's writing ends it.
    let spec = SpawnSpec {
        program: "/bin/cat".into(),
        args: vec![],
        cwd: std::env::temp_dir(),
        env: vec![],
        fd3: None,
        subreaper: None,
        run_as: None,
        sandbox: None,
    };
    let mut s = spawn(spec).unwrap();
    // Another process of the same user (here: this one) tries the session's streams through
    // /proc, as a session gone wrong on the box would try another's.
    for fd in 0..3 {
        let refused = std::fs::OpenOptions::new()
            .write(true)
            .open(format!("/proc/{}/fd/{fd}", s.pid))
            .unwrap_err();
        assert_eq!(
            refused.raw_os_error(),
            Some(libc::ENXIO),
            "fd {fd}: {refused}"
        );
    }
    s.stdin.write_all(b"from vyred\n").await.unwrap();
    drop(s.stdin);
    let mut out = String::new();
    s.stdout.read_to_string(&mut out).await.unwrap();
    assert_eq!(out, "from vyred\n");
    assert!(
        s.child.wait().await.unwrap().success(),
        "its stdin ended, so did it"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn one_walk_ends_every_process_tagged_by_a_thread_of_ours_and_no_other() {
    use std::os::unix::process::ExitStatusExt;
    let ours = format!("t-ours-{}", std::process::id());
    let theirs = format!("t-theirs-{}", std::process::id());
    let tagged = |tag: &str| {
        std::process::Command::new("sleep")
            .arg("60")
            .env("VYRE_TEST_SWEEP", tag)
            .spawn()
            .unwrap()
    };
    let (mut mine, mut other) = (tagged(&ours), tagged(&theirs));
    let store: std::collections::HashSet<String> = [ours.clone(), "t-gone".to_string()].into();
    let swept = kill_tagged_any("VYRE_TEST_SWEEP", |v| {
        std::str::from_utf8(v).is_ok_and(|t| store.contains(t))
    });
    assert_eq!(swept, 1);
    assert_eq!(mine.wait().unwrap().signal(), Some(9));
    assert!(other.try_wait().unwrap().is_none(), "another store's tag");
    let _ = other.kill();
    let _ = other.wait();
}
