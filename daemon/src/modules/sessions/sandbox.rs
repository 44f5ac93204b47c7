//! Containment for sessions (ADR 0014): what keeps a session's processes recognisable as that
//! session, whatever they do, and out of vyred's own files.
//!
//! - **The sessions' own user** (`sessions.uid`, the box, ADR 0013): a uid the session cannot
//!   drop, refused on vyred's socket and unable to read `VYRE_HOME`.
//! - **A sandbox** (Linux, sessions as vyred's own user): bubblewrap (`bwrap`, the sandbox of
//!   Flatpak and of Claude Code's own Linux sandbox) starts the session in a new user and pid
//!   namespace with a fresh `/proc`. No descendant can leave those namespaces, however it forks
//!   (`setsid`, a double fork, `nohup`), so vyred's peer check names every one of them by the pid
//!   namespace registered at start, and killing the namespace's first process ends them all.
//!   `VYRE_HOME` (the store, the vault's key file, vyred's socket) and the runtime folder (the
//!   session bus, through which the keyring answers) are hidden under empty tmpfs mounts; what
//!   the session needs from there (its own socket, a bundled CLI) is bound in again.
//! - **Claude Code's own sandbox** (macOS, where there is no bubblewrap; `sessions.containment:
//!   "claude"` elsewhere): the session's commands run in Claude Code's sandbox (Seatbelt on macOS,
//!   bubblewrap on Linux), set through `--managed-settings`, the layer no repository's settings
//!   can loosen: `VYRE_HOME` and the runtime folder unreadable and unwritable, no unix socket but
//!   the session's own, no command outside the sandbox; the Read and Edit tools are denied those
//!   folders too. The CLI itself and its hooks and MCP server run outside it, as vyred's user.
//! - **None**, only when the person says so (`sessions.containment: "none"`): sessions run as
//!   vyred's user, told apart by their ancestry while they stay below it. Nothing is contained.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::spawn::RunAs;

/// How a session's processes are contained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Containment {
    /// As the sessions' own user.
    User(RunAs),
    /// In bubblewrap's namespaces.
    Sandbox(Sandbox),
    /// In Claude Code's own sandbox, hiding these folders.
    Claude { hide: Vec<PathBuf> },
    /// Not at all (the person chose it).
    None,
}

impl Containment {
    /// `user`, `sandbox` or `none`, for status and events.
    pub fn name(&self) -> &'static str {
        match self {
            Containment::User(_) => "user",
            Containment::Sandbox(_) => "sandbox",
            Containment::Claude { .. } => "claude",
            Containment::None => "none",
        }
    }
}

/// bubblewrap, and the folders sessions must not see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    pub bwrap: PathBuf,
    pub hide: Vec<PathBuf>,
}

/// A path to see again inside a hidden folder.
#[derive(Debug, Clone)]
pub struct Exposed {
    pub path: PathBuf,
    pub writable: bool,
}

/// The file descriptor on which bwrap reports the sandbox (its `--info-fd`).
pub const INFO_FD: i32 = 4;

impl Sandbox {
    /// bwrap's arguments up to and including `--`, after which come the program and its own.
    pub fn args(&self, expose: &[Exposed]) -> Vec<OsString> {
        let mut a: Vec<OsString> = [
            "--unshare-user",
            "--unshare-pid",
            "--cap-drop",
            "ALL",
            "--dev-bind",
            "/",
            "/",
            "--proc",
            "/proc",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        for hidden in self.hide.iter().filter(|h| h.is_dir()) {
            a.push("--tmpfs".into());
            a.push(hidden.into());
        }
        for e in expose {
            if e.path.exists() && self.hide.iter().any(|h| e.path.starts_with(h)) {
                a.push(if e.writable { "--bind" } else { "--ro-bind" }.into());
                a.push(e.path.clone().into());
                a.push(e.path.clone().into());
            }
        }
        a.push("--info-fd".into());
        a.push(INFO_FD.to_string().into());
        a.push("--".into());
        a
    }
}

/// `bwrap` on PATH, or where Debian and Fedora put it.
pub fn find_bwrap() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("bwrap"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| Some(PathBuf::from("/usr/bin/bwrap")).filter(|p| p.is_file()))
}

/// Whether bwrap can make the namespaces here (unprivileged user namespaces may be off, or
/// forbidden inside a container).
pub fn probe(bwrap: &Path) -> Result<(), String> {
    let out = std::process::Command::new(bwrap)
        .args([
            "--unshare-user",
            "--unshare-pid",
            "--dev-bind",
            "/",
            "/",
            "--proc",
            "/proc",
            "--",
            "/bin/sh",
            "-c",
            "exit 0",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bwrap.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} cannot make a user and pid namespace here: {}",
            bwrap.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// What `sessions.containment` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    /// The sessions' user when set, else a sandbox; sessions do not start without one.
    Auto,
    Sandbox,
    /// Claude Code's own sandbox (the default on macOS).
    Claude,
    None,
}

impl Wanted {
    pub fn parse(value: Option<&str>) -> Result<Wanted, String> {
        match value {
            None | Some("auto") => Ok(Wanted::Auto),
            Some("sandbox") => Ok(Wanted::Sandbox),
            Some("claude") => Ok(Wanted::Claude),
            Some("none") => Ok(Wanted::None),
            Some(other) => Err(format!(
                "sessions.containment must be auto, sandbox, claude or none, not {other:?}"
            )),
        }
    }
}

/// Decide how sessions are contained on this machine, or say why they cannot be.
pub fn decide(
    wanted: Wanted,
    run_as: Option<RunAs>,
    hide: Vec<PathBuf>,
) -> Result<Containment, String> {
    match (wanted, run_as) {
        (Wanted::Auto | Wanted::None, Some(r)) => Ok(Containment::User(r)),
        (Wanted::None, None) => Ok(Containment::None),
        (Wanted::Claude, _) => Ok(Containment::Claude { hide }),
        // No bubblewrap on macOS: Claude Code's own sandbox (Seatbelt) instead.
        (Wanted::Auto, None) if cfg!(target_os = "macos") => Ok(Containment::Claude { hide }),
        (Wanted::Sandbox, Some(_)) => Err(
            "sessions.containment is sandbox, but sessions.uid is set: a sandbox is for sessions that run as vyred's own user; unset one of them".into(),
        ),
        (Wanted::Auto | Wanted::Sandbox, None) => {
            if !cfg!(target_os = "linux") {
                return Err("sessions on this system need sessions.uid, or sessions.containment set to none".into());
            }
            let bwrap = find_bwrap().ok_or_else(|| {
                "sessions run in a sandbox, which needs bubblewrap: install it (Debian and Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap), or set sessions.uid to run them as their own user, or set sessions.containment to none to run them uncontained".to_string()
            })?;
            probe(&bwrap).map_err(|e| {
                format!("{e}; allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or the AppArmor profile for bwrap), set sessions.uid, or set sessions.containment to none")
            })?;
            Ok(Containment::Sandbox(Sandbox { bwrap, hide }))
        }
    }
}

/// Managed settings that put a session's commands in Claude Code's own sandbox with `hidden`
/// out of reach, and its own socket the only unix socket it may use.
pub fn claude_settings(hidden: &[PathBuf], socket: Option<&Path>) -> serde_json::Value {
    let paths: Vec<String> = hidden.iter().map(|p| p.display().to_string()).collect();
    // Permission rules name an absolute path with a leading `//`.
    let rules = |tool: &str| -> Vec<String> {
        paths
            .iter()
            .map(|p| format!("{tool}(/{}/**)", p.trim_end_matches('/')))
            .collect()
    };
    let deny = [rules("Read"), rules("Edit")].concat();
    serde_json::json!({
        "sandbox": {
            "enabled": true,
            "allowUnsandboxedCommands": false,
            "filesystem": { "denyRead": paths, "denyWrite": paths },
            "network": { "allowUnixSockets": socket.map(|s| vec![s.display().to_string()]).unwrap_or_default() },
        },
        "permissions": { "deny": deny },
    })
}

/// This machine's containment for sessions, decided at the first use and shared by everything
/// that runs a program for them (the sessions, `claude --version`). A failed decision is tried
/// again at the next use, so installing bubblewrap needs no restart.
#[derive(Debug)]
pub struct Contain {
    wanted: Wanted,
    run_as: Option<RunAs>,
    hide: Vec<PathBuf>,
    /// What every sandboxed program sees again inside the hidden folders (a bundled CLI).
    pub expose_ro: Vec<PathBuf>,
    decided: tokio::sync::OnceCell<Containment>,
}

impl Contain {
    pub fn new(
        wanted: Wanted,
        run_as: Option<RunAs>,
        hide: Vec<PathBuf>,
        expose_ro: Vec<PathBuf>,
    ) -> Contain {
        Contain {
            wanted,
            run_as,
            hide,
            expose_ro,
            decided: Default::default(),
        }
    }

    /// Nothing contained: for tests and tools that run a fixed program of their own.
    pub fn none() -> Contain {
        Contain::new(Wanted::None, None, Vec::new(), Vec::new())
    }

    /// How sessions are contained here; an error says what to install or set.
    pub async fn get(&self) -> Result<&Containment, String> {
        self.decided
            .get_or_try_init(|| async {
                let (wanted, run_as, hide) = (self.wanted, self.run_as, self.hide.clone());
                let decided = tokio::task::spawn_blocking(move || decide(wanted, run_as, hide))
                    .await
                    .map_err(|e| e.to_string())??;
                if decided == Containment::None {
                    tracing::warn!(
                        "sessions.containment is none: sessions run as vyred's own user, uncontained (ADR 0014)"
                    );
                }
                Ok(decided)
            })
            .await
    }

    /// The user and sandbox to run a short-lived program in, as a session would be.
    pub async fn for_program(
        &self,
    ) -> Result<(Option<RunAs>, Option<super::spawn::SandboxLaunch>), String> {
        let expose: Vec<Exposed> = self
            .expose_ro
            .iter()
            .map(|path| Exposed {
                path: path.clone(),
                writable: false,
            })
            .collect();
        Ok(match self.get().await? {
            Containment::User(r) => (Some(*r), None),
            Containment::Sandbox(s) => (
                None,
                Some(super::spawn::SandboxLaunch {
                    bwrap: s.bwrap.clone(),
                    args: s.args(&expose),
                }),
            ),
            Containment::Claude { .. } | Containment::None => (None, None),
        })
    }
}

/// What sessions must not see: vyred's home and the runtime folder with the session bus.
pub fn hidden_paths(vyre_home: &Path) -> Vec<PathBuf> {
    let mut hide = vec![vyre_home.to_path_buf()];
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
        && runtime.is_absolute()
        && runtime != Path::new("/")
    {
        hide.push(runtime);
    }
    hide
}

/// The sandbox bwrap made, from its `--info-fd` report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxInfo {
    /// The sandbox's first process (its pid 1), in vyred's view: killing it ends the sandbox.
    pub init: i32,
    /// The sandbox's pid namespace.
    pub pid_namespace: u64,
}

impl SandboxInfo {
    pub fn parse(report: &[u8]) -> Option<SandboxInfo> {
        let v: serde_json::Value = serde_json::from_slice(report).ok()?;
        Some(SandboxInfo {
            init: i32::try_from(v["child-pid"].as_i64()?).ok()?,
            pid_namespace: v["pid-namespace"].as_u64()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_is_chosen_as_asked() {
        assert_eq!(Wanted::parse(None), Ok(Wanted::Auto));
        assert_eq!(Wanted::parse(Some("none")), Ok(Wanted::None));
        assert!(Wanted::parse(Some("off")).is_err());
        let r = RunAs { uid: 10, gid: 10 };
        assert_eq!(
            decide(Wanted::Auto, Some(r), vec![]),
            Ok(Containment::User(r))
        );
        assert_eq!(decide(Wanted::None, None, vec![]), Ok(Containment::None));
        assert_eq!(
            decide(Wanted::None, Some(r), vec![]),
            Ok(Containment::User(r)),
            "the sessions' user is kept whatever else is asked"
        );
        assert!(decide(Wanted::Sandbox, Some(r), vec![]).is_err());
    }

    #[test]
    fn hidden_folders_are_covered_and_what_is_needed_is_bound_again() {
        let dir = std::env::temp_dir().join(format!("vyre-sandbox-args-{}", std::process::id()));
        let home = dir.join("vyre-home");
        std::fs::create_dir_all(home.join("s")).unwrap();
        std::fs::write(home.join("s/t1.sock"), b"").unwrap();
        let outside = dir.join("work");
        std::fs::create_dir_all(&outside).unwrap();
        let sandbox = Sandbox {
            bwrap: "/usr/bin/bwrap".into(),
            hide: vec![home.clone(), dir.join("missing")],
        };
        let args: Vec<String> = sandbox
            .args(&[
                Exposed {
                    path: home.join("s/t1.sock"),
                    writable: true,
                },
                Exposed {
                    path: outside.clone(),
                    writable: true,
                },
            ])
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        let h = home.display().to_string();
        let sock = home.join("s/t1.sock").display().to_string();
        let at = |w: &str| args.iter().position(|a| a == w).unwrap();
        assert_eq!(args[at("--tmpfs") + 1], h);
        assert_eq!(
            args[at("--bind") + 1..at("--bind") + 3],
            [sock.clone(), sock]
        );
        assert!(at("--tmpfs") < at("--bind"), "bound again after hiding");
        assert!(
            !args
                .iter()
                .any(|a| a.contains("missing") || *a == outside.display().to_string()),
            "nothing for a missing folder or a path that is not hidden: {args:?}"
        );
        assert_eq!(args.last().map(String::as_str), Some("--"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn claude_code_s_own_sandbox_hides_the_folders_from_commands_and_tools() {
        let s = claude_settings(
            &["/home/p/.vyre".into()],
            Some(Path::new("/home/p/.vyre/s/t.sock")),
        );
        assert_eq!(s["sandbox"]["enabled"], true);
        assert_eq!(s["sandbox"]["allowUnsandboxedCommands"], false);
        assert_eq!(
            s["sandbox"]["filesystem"]["denyRead"],
            serde_json::json!(["/home/p/.vyre"])
        );
        assert_eq!(
            s["sandbox"]["network"]["allowUnixSockets"],
            serde_json::json!(["/home/p/.vyre/s/t.sock"])
        );
        assert_eq!(
            s["permissions"]["deny"],
            serde_json::json!(["Read(//home/p/.vyre/**)", "Edit(//home/p/.vyre/**)"])
        );
    }

    #[test]
    fn bwraps_report_is_read() {
        let report = br#"{
    "child-pid": 18182,
    "mnt-namespace": 4026532179,
    "pid-namespace": 4026532180
}"#;
        assert_eq!(
            SandboxInfo::parse(report),
            Some(SandboxInfo {
                init: 18182,
                pid_namespace: 4026532180
            })
        );
        assert_eq!(SandboxInfo::parse(b"{\"child-pid\": 1"), None);
    }
}
