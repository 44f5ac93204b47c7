//! Which Claude Code CLI runs sessions (`sessions.claude`): `installed` (the `claude` on PATH,
//! the default), a path, or `bundled` (the pinned version, installed with npm on first use into
//! `VYRE_HOME/claude-code`). Whatever the source, its version is checked once: older than the
//! pinned one is refused with what to install; newer is allowed with a warning in the log.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;

use super::claude::PINNED_VERSION;
use super::spawn::{self, SpawnSpec};
use crate::kernel::events::NewEvent;
use crate::kernel::module::Ctx;

#[derive(Debug, Clone)]
pub enum Source {
    Installed,
    Path(PathBuf),
    Bundled { dir: PathBuf },
}

impl Source {
    pub fn parse(setting: Option<&str>, home: &Path) -> Source {
        match setting {
            None | Some("installed") => Source::Installed,
            Some("bundled") => Source::Bundled {
                dir: home.join("claude-code"),
            },
            Some(path) => Source::Path(PathBuf::from(path)),
        }
    }
}

pub struct ClaudeCli {
    source: Source,
    /// How its version is asked.
    probe: Probe,
    /// Where install events go (the `sessions` module).
    ctx: Option<Ctx>,
    resolved: OnceCell<PathBuf>,
}

fn install_hint() -> String {
    format!(
        "install it with `npm install -g @anthropic-ai/claude-code@{PINNED_VERSION}`, or set sessions.claude in config.json to its path or to \"bundled\""
    )
}

/// `2.1.328 (Claude Code)` → `[2, 1, 328]`.
pub fn parse_version(text: &str) -> Option<Vec<u64>> {
    let word = text.split_whitespace().next()?;
    let parts: Option<Vec<u64>> = word.split('.').map(|p| p.parse().ok()).collect();
    parts.filter(|p| p.len() == 3)
}

/// Who runs the CLI to ask its version: the sessions' user, in their HOME, with what a
/// session's environment starts from. The program may be one a session wrote (a `claude` on
/// PATH, a configured path), so it never runs with vyred's user or privileges.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The sessions' HOME.
    pub home: PathBuf,
    /// The sessions' containment: their user (`sessions.uid`) or their sandbox (ADR 0014).
    pub contain: std::sync::Arc<super::sandbox::Contain>,
}

/// How long `claude --version` may take.
const VERSION_PATIENCE: Duration = Duration::from_secs(15);

/// What `program --version` prints, run as a session would be (see [`Probe`]).
async fn version_of(program: &Path, probe: &Probe) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let (run_as, sandbox) = match probe.contain.for_program().await {
        Ok(how) => how,
        Err(e) => {
            tracing::warn!(program = %program.display(), "{} --version is not run: {e}", program.display());
            return None;
        }
    };
    let spawned = spawn::spawn(SpawnSpec {
        program: program.to_path_buf(),
        args: vec!["--version".into()],
        // Every user may enter it, and it holds nothing the program could use.
        cwd: PathBuf::from("/"),
        env: super::claude::base_environment(&probe.home),
        fd3: None,
        // It ends at once; stopping its group below ends what it may have started.
        subreaper: None,
        run_as,
        sandbox,
    });
    let mut spawned = match spawned {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(program = %program.display(), "cannot run {} --version: {e}", program.display());
            return None;
        }
    };
    drop(spawned.stdin);
    let mut out = String::new();
    let read = tokio::time::timeout(VERSION_PATIENCE, async {
        // At most a line is expected; a program that says more is cut short.
        let mut stdout = (&mut spawned.stdout).take(4096);
        stdout.read_to_string(&mut out).await
    })
    .await;
    spawn::kill_group(&mut spawned.child, spawned.pgid, Duration::from_millis(100)).await;
    match read {
        Ok(Ok(_)) => Some(out.trim().to_string()),
        _ => None,
    }
}

/// What `sessions.claude` says about the CLI, found without installing anything.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Detected {
    /// `installed` (on PATH), `path` (configured) or `bundled`.
    pub source: String,
    pub found: bool,
    pub path: Option<String>,
    /// What `claude --version` printed, first word.
    pub version: Option<String>,
    /// The version Vyre speaks to.
    pub pinned: String,
    /// Why it cannot run, and what to do; none when it can.
    pub problem: Option<String>,
}

impl ClaudeCli {
    /// Look for the CLI and ask its version, installing nothing: what the onboarding shows.
    pub async fn detect(&self) -> Detected {
        let (source, candidate) = match &self.source {
            Source::Installed => (
                "installed",
                std::env::var_os("PATH").and_then(|paths| {
                    std::env::split_paths(&paths)
                        .map(|p| p.join("claude"))
                        .find(|p| p.is_file())
                }),
            ),
            Source::Path(path) => ("path", Some(path.clone()).filter(|p| p.is_file())),
            Source::Bundled { dir } => (
                "bundled",
                Some(dir.join("node_modules/.bin/claude")).filter(|p| p.is_file()),
            ),
        };
        let mut found = Detected {
            source: source.into(),
            found: false,
            path: None,
            version: None,
            pinned: PINNED_VERSION.into(),
            problem: None,
        };
        let Some(program) = candidate else {
            found.problem = Some(match self.source {
                Source::Bundled { .. } => format!(
                    "Claude Code {PINNED_VERSION} is installed with npm when the first session starts"
                ),
                _ => format!("Claude Code was not found; {}", install_hint()),
            });
            return found;
        };
        found.path = Some(program.display().to_string());
        let version = version_of(&program, &self.probe).await;
        found.version = version
            .as_deref()
            .and_then(|v| v.split_whitespace().next())
            .map(str::to_string);
        let pinned = parse_version(PINNED_VERSION).expect("the pinned version parses");
        match version.as_deref().and_then(parse_version) {
            Some(v) if v < pinned => {
                found.problem = Some(format!(
                    "Claude Code {} is older than {PINNED_VERSION}; {}",
                    found.version.as_deref().unwrap_or("?"),
                    install_hint()
                ))
            }
            Some(_) => found.found = true,
            None => {
                found.found = true;
                found.problem = Some("its version could not be read".into());
            }
        }
        found
    }

    pub fn new(source: Source, probe: Probe, ctx: Option<Ctx>) -> ClaudeCli {
        ClaudeCli {
            source,
            probe,
            ctx,
            resolved: OnceCell::new(),
        }
    }

    /// A fixed program run as vyred's own user with HOME `home` (tests, tools).
    pub fn at(program: PathBuf, home: PathBuf) -> ClaudeCli {
        let contain = std::sync::Arc::new(super::sandbox::Contain::none());
        Self::new(Source::Path(program), Probe { home, contain }, None)
    }

    /// The program to run, installed and checked on first use.
    pub async fn program(&self) -> Result<PathBuf, String> {
        self.resolved
            .get_or_try_init(|| self.resolve())
            .await
            .cloned()
    }

    async fn resolve(&self) -> Result<PathBuf, String> {
        let program = match &self.source {
            Source::Installed => std::env::var_os("PATH")
                .and_then(|paths| {
                    std::env::split_paths(&paths)
                        .map(|p| p.join("claude"))
                        .find(|p| p.is_file())
                })
                .ok_or_else(|| {
                    format!(
                        "Claude Code is not installed: no `claude` on PATH; {}",
                        install_hint()
                    )
                })?,
            Source::Path(path) => {
                if !path.is_file() {
                    return Err(format!(
                        "Claude Code was not found at {}: {}",
                        path.display(),
                        install_hint()
                    ));
                }
                path.clone()
            }
            Source::Bundled { dir } => self.bundled(dir).await?,
        };
        match version_of(&program, &self.probe)
            .await
            .as_deref()
            .and_then(|v| parse_version(v).map(|p| (v.to_string(), p)))
        {
            Some((text, version)) => {
                let pinned = parse_version(PINNED_VERSION).expect("the pinned version parses");
                if version < pinned {
                    return Err(format!(
                        "Claude Code {} at {} is older than {PINNED_VERSION}, the version Vyre speaks to; {}",
                        text.split_whitespace().next().unwrap_or("?"),
                        program.display(),
                        install_hint()
                    ));
                }
                if version > pinned {
                    tracing::warn!(version = %text, pinned = PINNED_VERSION, "Claude Code is newer than the version Vyre was tested with");
                }
            }
            None => {
                tracing::warn!(program = %program.display(), "cannot tell Claude Code's version; going on")
            }
        }
        Ok(program)
    }

    /// The pinned CLI in `dir`, installed with npm when it is missing or another version.
    async fn bundled(&self, dir: &Path) -> Result<PathBuf, String> {
        let program = dir.join("node_modules/.bin/claude");
        let current = version_of(&program, &self.probe).await.unwrap_or_default();
        if current.split_whitespace().next() == Some(PINNED_VERSION) {
            return Ok(program);
        }
        self.emit(
            "claude.install_started",
            serde_json::json!({ "version": PINNED_VERSION }),
        )
        .await;
        let started = Instant::now();
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let out = tokio::process::Command::new("npm")
            .args(["install", "--prefix"])
            .arg(dir)
            .args([
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                &format!("@anthropic-ai/claude-code@{PINNED_VERSION}"),
            ])
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output()
            .await;
        let failure = match out {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("sessions.claude is \"bundled\", which installs Claude Code with npm, and npm is not on PATH".to_string()),
            Err(e) => Some(format!("npm could not run: {e}")),
            Ok(o) if !o.status.success() => Some(format!(
                "npm install of @anthropic-ai/claude-code@{PINNED_VERSION} failed: {}",
                String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("no output")
            )),
            Ok(_) if !program.is_file() => Some(format!("npm finished but {} is missing", program.display())),
            Ok(_) => None,
        };
        match failure {
            Some(error) => {
                self.emit(
                    "claude.install_failed",
                    serde_json::json!({ "version": PINNED_VERSION, "error": error }),
                )
                .await;
                Err(error)
            }
            None => {
                let seconds = started.elapsed().as_secs();
                self.emit(
                    "claude.installed",
                    serde_json::json!({ "version": PINNED_VERSION, "seconds": seconds }),
                )
                .await;
                Ok(program)
            }
        }
    }

    async fn emit(&self, kind: &str, payload: serde_json::Value) {
        if let Some(ctx) = &self.ctx
            && let Err(e) = ctx.events().emit(NewEvent::new(kind, payload)).await
        {
            tracing::warn!(error = %e, "cannot record {kind}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_numbers() {
        assert_eq!(
            parse_version("2.1.328 (Claude Code)"),
            Some(vec![2, 1, 328])
        );
        assert!(parse_version("2.1.99").unwrap() < parse_version("2.1.328").unwrap());
        assert_eq!(parse_version("garbage"), None);
        assert_eq!(parse_version(""), None);
    }
}
