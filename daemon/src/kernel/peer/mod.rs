//! Who is on the other end of a unix socket: a person, a session, or nobody vyred can vouch for
//! (ADR 0014, the trust boundary).
//!
//! What the kernel says about a connection is read once, when vyred accepts it, into
//! [`PeerFacts`]: the peer's uid and pid, pinned so that a pid that died or was reused is never
//! taken for another process (a pidfd: `SO_PEERPIDFD`, or `pidfd_open` on kernels before 6.5),
//! the pid and user namespaces it runs in, and the process groups and sessions of it and its
//! ancestors. Each request is then judged against the live sessions ([`SessionProcesses`]) by
//! [`judge`]. The judgment fails closed: a peer vyred cannot read, or that has already exited
//! (the connect-fork-exit trick), is refused; a peer in a namespace vyred does not share, of the
//! sessions' uid, in a session's process group, or under a Claude Code, is a session; only what
//! is left is a person.
//!
//! Containment is what makes "inside a session" something a process cannot undo: on Linux each
//! session runs in namespaces of its own (`crate::modules::sessions::sandbox`), which no descendant can
//! leave, or as the sessions' own uid (the box, ADR 0013), which it cannot drop.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(not(target_os = "linux"))]
mod other;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, RwLock};

#[cfg(target_os = "linux")]
use linux as platform;
#[cfg(not(target_os = "linux"))]
use other as platform;

/// What vyred learnt about a socket peer when it connected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerFacts {
    pub uid: Option<u32>,
    pub pid: Option<i32>,
    /// Why the peer could not be pinned or read; such a peer is nobody and is refused.
    pub unreadable: Option<String>,
    /// The pid namespaces between the peer's own and vyred's, innermost first; empty when the
    /// peer shares vyred's.
    pub pid_namespaces: Vec<u64>,
    /// The peer runs in a user namespace that is not vyred's.
    pub foreign_user_namespace: bool,
    /// The process groups and sessions of the peer and of each of its ancestors.
    pub groups: Vec<i32>,
    /// A Claude Code process is among the peer and its ancestors.
    pub under_claude: bool,
}

impl PeerFacts {
    /// The facts of the peer connected to `stream`.
    pub fn of(stream: &tokio::net::UnixStream) -> PeerFacts {
        platform::facts(stream)
    }

    fn nobody(why: impl Into<String>) -> PeerFacts {
        PeerFacts {
            unreadable: Some(why.into()),
            ..PeerFacts::default()
        }
    }
}

/// Who a peer is, judged for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A process of vyred's own user, outside every session.
    Person { uid: u32 },
    /// A process inside a session: a live one vyred started (`thread`), or one it cannot name.
    Session { thread: Option<String> },
    /// Nobody vyred will serve.
    Refused { code: &'static str, message: String },
}

/// The identities that a judgment compares a peer with.
#[derive(Clone, Copy)]
pub struct Judge<'a> {
    pub sessions: &'a SessionProcesses,
    /// vyred's own effective uid.
    pub own_uid: u32,
    /// The uid sessions run as, when it is not vyred's (`sessions.uid`, the box).
    pub sessions_uid: Option<u32>,
}

/// Judge a peer. Fails closed: anything vyred cannot establish is not a person.
pub fn judge(facts: &PeerFacts, j: Judge<'_>) -> Verdict {
    if let Some(why) = &facts.unreadable {
        return Verdict::Refused {
            code: "unknown_peer",
            message: format!("vyred cannot tell who is connected ({why}), so it serves nobody"),
        };
    }
    let Some(uid) = facts.uid else {
        return Verdict::Refused {
            code: "unknown_peer",
            message: "the socket did not say who is connected".into(),
        };
    };
    let thread = j.sessions.thread_of(facts);
    if j.sessions_uid == Some(uid) && uid != j.own_uid {
        return Verdict::Session { thread };
    }
    if uid != j.own_uid {
        return Verdict::Refused {
            code: "foreign_user",
            message: "only vyred's own user may use its socket".into(),
        };
    }
    if thread.is_some()
        || !facts.pid_namespaces.is_empty()
        || facts.foreign_user_namespace
        || facts.under_claude
    {
        return Verdict::Session { thread };
    }
    Verdict::Person { uid }
}

/// The live sessions' containment, by thread: their pid namespaces (a sandboxed session) and
/// their process groups and sessions (every session; under `tini` as a subreaper a double fork
/// stays below them).
#[derive(Clone, Default)]
pub struct SessionProcesses {
    // std RwLock: read on each socket request, written when a session starts or ends.
    inner: Arc<RwLock<Registered>>,
}

#[derive(Default)]
struct Registered {
    groups: HashMap<i32, String>,
    namespaces: HashMap<u64, String>,
}

impl std::fmt::Debug for SessionProcesses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = self.inner.read().expect("session processes");
        f.debug_struct("SessionProcesses")
            .field("groups", &r.groups.len())
            .field("namespaces", &r.namespaces.len())
            .finish()
    }
}

impl SessionProcesses {
    /// Record a session's process group and session id (both, when they differ).
    pub fn register(&self, thread: &str, pgid: i32, sid: i32) {
        let mut r = self.inner.write().expect("session processes");
        r.groups.insert(pgid, thread.to_string());
        r.groups.insert(sid, thread.to_string());
    }

    /// Record the pid namespace a sandboxed session runs in.
    pub fn register_namespace(&self, thread: &str, pid_namespace: u64) {
        let mut r = self.inner.write().expect("session processes");
        r.namespaces.insert(pid_namespace, thread.to_string());
    }

    /// Forget a thread's groups and namespace once its last process is gone.
    pub fn unregister(&self, thread: &str) {
        let mut r = self.inner.write().expect("session processes");
        r.groups.retain(|_, t| t != thread);
        r.namespaces.retain(|_, t| t != thread);
    }

    /// The live session a peer belongs to, by its namespaces first (which no process can
    /// leave), then by its groups.
    pub fn thread_of(&self, facts: &PeerFacts) -> Option<String> {
        let r = self.inner.read().expect("session processes");
        facts
            .pid_namespaces
            .iter()
            .find_map(|ns| r.namespaces.get(ns))
            .or_else(|| facts.groups.iter().find_map(|g| r.groups.get(g)))
            .cloned()
    }
}

/// Whether `pid` is a running Claude Code.
pub fn is_claude_process(pid: i32) -> bool {
    pid > 0 && platform::process_info(pid).is_some_and(|p| is_claude(&p.command))
}

/// Whether a Claude Code runs as `pid` or under it: a session vyred runs in a sandbox is bound to
/// the sandbox it started, and its Claude Code runs inside.
/// A pid that is gone has nothing under it and costs no look at the others (a binding's
/// process after its session moved on, asked on a hook's path).
pub fn claude_at_or_under(pid: i32) -> bool {
    if pid <= 1 || platform::process_info(pid).is_none() {
        return false;
    }
    is_claude_process(pid)
        || platform::pids()
            .into_iter()
            .any(|p| p != pid && is_claude_process(p) && descends(p, pid))
}

/// The nearest Claude Code among `pid` and its ancestors (a hook runs under a shell under it).
pub fn claude_ancestor(pid: i32) -> Option<i32> {
    lineage(pid)
        .find(|(_, p)| is_claude(&p.command))
        .map(|(pid, _)| pid)
}

/// `pid` and then each of its parents, with what `/proc` says of each, up to [`MAX_DEPTH`] and
/// never pid 1; it ends at a process that cannot be read.
fn lineage(pid: i32) -> impl Iterator<Item = (i32, ProcessInfo)> {
    let mut next = Some(pid);
    std::iter::from_fn(move || {
        let pid = next.take().filter(|p| *p > 1)?;
        let info = platform::process_info(pid)?;
        next = Some(info.ppid);
        Some((pid, info))
    })
    .take(MAX_DEPTH)
}

/// Whether `a` and `b` are one process or one runs under the other: a session's Claude Code and
/// the sandbox vyred started it in, or a hook's shell under either. Never through pid 1, which
/// every process runs under.
pub fn one_tree(a: i32, b: i32) -> bool {
    a > 1 && b > 1 && (a == b || descends(a, b) || descends(b, a))
}

/// Whether `pid` runs under `ancestor`.
fn descends(pid: i32, ancestor: i32) -> bool {
    lineage(pid).any(|(_, p)| p.ppid == ancestor)
}

/// Whether a program name or argv word is Claude Code.
pub fn is_claude(command: &str) -> bool {
    let base = Path::new(command.trim())
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    base == "claude"
        || command.contains("@anthropic-ai/claude-code")
        || command.contains("claude-code/cli.js")
}

/// How far up an ancestry walk goes.
const MAX_DEPTH: usize = 64;

#[derive(Debug)]
struct ProcessInfo {
    /// Its name, or the argv word that names Claude Code.
    command: String,
    ppid: i32,
    pgid: i32,
    sid: i32,
}

/// The groups and sessions of `pid` and its ancestors, and whether a Claude Code is among them.
fn ancestry(pid: i32) -> (Vec<i32>, bool) {
    let (mut groups, mut claude) = (Vec::new(), false);
    for (_, p) in lineage(pid) {
        groups.push(p.pgid);
        if p.sid != p.pgid {
            groups.push(p.sid);
        }
        claude |= is_claude(&p.command);
    }
    (groups, claude)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge_of(
        facts: &PeerFacts,
        sessions: &SessionProcesses,
        sessions_uid: Option<u32>,
    ) -> Verdict {
        judge(
            facts,
            Judge {
                sessions,
                own_uid: 1000,
                sessions_uid,
            },
        )
    }

    fn person_facts() -> PeerFacts {
        PeerFacts {
            uid: Some(1000),
            pid: Some(4242),
            groups: vec![4000, 3000],
            ..PeerFacts::default()
        }
    }

    #[test]
    fn a_process_is_one_tree_with_its_children_and_parents_only() {
        let me = std::process::id() as i32;
        let parent = nix::unistd::getppid().as_raw();
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let kid = child.id() as i32;
        assert!(one_tree(me, me));
        assert!(one_tree(me, kid) && one_tree(kid, me));
        assert!(
            one_tree(parent, kid),
            "a grandchild is under its grandparent"
        );
        let mut other = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        assert!(
            !one_tree(kid, other.id() as i32),
            "siblings are not one tree"
        );
        assert!(
            !one_tree(kid, 1) && !one_tree(1, 1),
            "pid 1 is nobody's tree"
        );
        assert!(!one_tree(kid, i32::MAX), "a process that does not exist");
        for c in [&mut child, &mut other] {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_claude_is_found_at_or_under_a_process_and_nowhere_else() {
        // A program named `claude` (a copy of `sleep`) under a shell, as a sandbox holds one.
        let dir = std::env::temp_dir().join(format!("vyre-claude-under-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let claude = dir.join("claude");
        std::fs::copy("/bin/sleep", &claude).unwrap();
        let mut sandbox = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{} 5; true", claude.display()))
            .spawn()
            .unwrap();
        let mut other = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let sandbox_pid = sandbox.id() as i32;
        let found = (0..200).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            claude_at_or_under(sandbox_pid)
        });
        assert!(found, "the claude under the shell");
        assert!(
            !claude_at_or_under(other.id() as i32),
            "nothing under a plain sleep"
        );
        assert!(!claude_at_or_under(1), "never through pid 1");
        for c in [&mut sandbox, &mut other] {
            c.kill().unwrap();
            c.wait().unwrap();
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn names_that_mean_claude() {
        assert!(is_claude("claude"));
        assert!(is_claude("/usr/local/bin/claude"));
        assert!(is_claude(
            "/x/node_modules/@anthropic-ai/claude-code/cli.js"
        ));
        assert!(!is_claude("bash"));
        assert!(!is_claude("claude-helper"));
    }

    #[test]
    fn only_what_is_left_is_a_person() {
        let s = SessionProcesses::default();
        assert_eq!(
            judge_of(&person_facts(), &s, None),
            Verdict::Person { uid: 1000 }
        );
        let cases: Vec<(PeerFacts, Verdict)> = vec![
            (
                PeerFacts::nobody("it exited"),
                Verdict::Refused {
                    code: "unknown_peer",
                    message: String::new(),
                },
            ),
            (
                PeerFacts {
                    uid: None,
                    ..person_facts()
                },
                Verdict::Refused {
                    code: "unknown_peer",
                    message: String::new(),
                },
            ),
            (
                PeerFacts {
                    uid: Some(1001),
                    ..person_facts()
                },
                Verdict::Refused {
                    code: "foreign_user",
                    message: String::new(),
                },
            ),
            (
                PeerFacts {
                    pid_namespaces: vec![99],
                    ..person_facts()
                },
                Verdict::Session { thread: None },
            ),
            (
                PeerFacts {
                    foreign_user_namespace: true,
                    ..person_facts()
                },
                Verdict::Session { thread: None },
            ),
            (
                PeerFacts {
                    under_claude: true,
                    ..person_facts()
                },
                Verdict::Session { thread: None },
            ),
        ];
        for (facts, want) in cases {
            let got = judge_of(&facts, &s, None);
            match (&got, &want) {
                (
                    Verdict::Refused { code, .. },
                    Verdict::Refused {
                        code: want_code, ..
                    },
                ) => assert_eq!(code, want_code, "{facts:?}"),
                _ => assert_eq!(got, want, "{facts:?}"),
            }
        }
    }

    #[test]
    fn a_session_is_named_by_its_namespace_before_its_groups() {
        let s = SessionProcesses::default();
        s.register("t-groups", 3000, 3000);
        s.register_namespace("t-ns", 77);
        let in_groups = person_facts();
        assert_eq!(
            judge_of(&in_groups, &s, None),
            Verdict::Session {
                thread: Some("t-groups".into())
            }
        );
        // A process that moved to a group of its own inside a sandbox is still that sandbox's.
        let nested = PeerFacts {
            pid_namespaces: vec![12, 77],
            groups: vec![3000],
            ..person_facts()
        };
        assert_eq!(
            judge_of(&nested, &s, None),
            Verdict::Session {
                thread: Some("t-ns".into())
            }
        );
        s.unregister("t-ns");
        s.unregister("t-groups");
        assert_eq!(
            judge_of(&nested, &s, None),
            Verdict::Session { thread: None },
            "a namespace vyred does not know is still not a person"
        );
        assert_eq!(
            judge_of(&in_groups, &s, None),
            Verdict::Person { uid: 1000 }
        );
    }

    #[test]
    fn the_sessions_uid_is_a_session_wherever_it_connects() {
        let s = SessionProcesses::default();
        s.register("t1", 5000, 5000);
        let boxed = PeerFacts {
            uid: Some(10002),
            groups: vec![5000],
            ..PeerFacts::default()
        };
        assert_eq!(
            judge_of(&boxed, &s, Some(10002)),
            Verdict::Session {
                thread: Some("t1".into())
            }
        );
        let escaped = PeerFacts {
            uid: Some(10002),
            groups: vec![1],
            ..PeerFacts::default()
        };
        assert_eq!(
            judge_of(&escaped, &s, Some(10002)),
            Verdict::Session { thread: None }
        );
    }

    #[tokio::test]
    async fn this_process_is_read_as_what_it_is() {
        let (me, _) = tokio::net::UnixStream::pair().unwrap();
        let facts = PeerFacts::of(&me);
        assert_eq!(facts.unreadable, None, "{facts:?}");
        assert_eq!(facts.uid, Some(nix::unistd::geteuid().as_raw()));
        assert_eq!(facts.pid, Some(std::process::id() as i32));
        assert!(facts.pid_namespaces.is_empty());
        assert!(!facts.foreign_user_namespace);
        if std::env::var_os("CLAUDECODE").is_none() {
            assert!(!facts.under_claude, "{facts:?}");
        }
        let pgid = nix::unistd::getpgrp().as_raw();
        assert!(facts.groups.contains(&pgid), "{facts:?}");
        let sessions = SessionProcesses::default();
        sessions.register("thread-1", pgid, pgid);
        assert_eq!(sessions.thread_of(&facts), Some("thread-1".to_string()));
        sessions.unregister("thread-1");
        assert_eq!(sessions.thread_of(&facts), None);
    }
}
