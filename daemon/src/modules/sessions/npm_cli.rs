//! Which CLI from npm runs a provider's sessions (`sessions.claude` for Claude Code,
//! `sessions.codex` for Codex): `installed` (the program on PATH, the default), a path, or
//! `bundled` (the pinned version, installed with npm on first use into `VYRE_HOME/<dir>`).
//! Whatever the source, its version is checked once: older than the pinned one is refused with
//! what to install; newer is allowed with a warning in the log.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;

use super::spawn::{self, SpawnSpec};
use crate::kernel::events::NewEvent;
use crate::kernel::module::Ctx;

/// A CLI Vyre runs and the version it was tested with.
#[derive(Debug)]
pub struct Package {
    /// What a person calls it: "Claude Code".
    pub name: &'static str,
    /// Its npm package and the pinned version.
    pub npm: &'static str,
    pub version: &'static str,
    /// Its program's name on PATH and in the package's `.bin`.
    pub bin: &'static str,
    /// The setting that chooses it: "sessions.claude".
    pub setting: &'static str,
    /// The folder of `VYRE_HOME` a bundled copy is installed in.
    pub dir: &'static str,
    /// The prefix of its install events (`<events>.install_started` ...).
    pub events: &'static str,
}

pub const CLAUDE: Package = Package {
    name: "Claude Code",
    npm: "@anthropic-ai/claude-code",
    version: super::claude::PINNED_VERSION,
    bin: "claude",
    setting: "sessions.claude",
    dir: "claude-code",
    events: "claude",
};

pub const CODEX: Package = Package {
    name: "Codex",
    npm: "@openai/codex",
    version: super::codex::PINNED_VERSION,
    bin: "codex",
    setting: "sessions.codex",
    dir: "codex",
    events: "codex",
};

#[derive(Debug, Clone)]
pub enum Source {
    Installed,
    Path(PathBuf),
    Bundled { dir: PathBuf },
}

impl Source {
    pub fn parse(setting: Option<&str>, home: &Path, package: &Package) -> Source {
        match setting {
            None | Some("installed") => Source::Installed,
            Some("bundled") => Source::Bundled {
                dir: home.join(package.dir),
            },
            Some(path) => Source::Path(PathBuf::from(path)),
        }
    }
}

pub struct NpmCli {
    package: &'static Package,
    source: Source,
    /// How its version is asked.
    probe: Probe,
    /// Where install events go (the `sessions` module).
    ctx: Option<Ctx>,
    resolved: OnceCell<PathBuf>,
}

fn install_hint(p: &Package) -> String {
    format!(
        "install it with `npm install -g {}@{}`, or set {} in config.json to its path or to \"bundled\"",
        p.npm, p.version, p.setting
    )
}

/// `bin` on vyred's PATH.
pub fn on_path(bin: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(bin))
            .find(|p| p.is_file())
    })
}

/// `2.1.328 (Claude Code)` → `[2, 1, 328]`.
pub fn parse_version(text: &str) -> Option<Vec<u64>> {
    let word = text.split_whitespace().next()?;
    let parts: Option<Vec<u64>> = word.split('.').map(|p| p.parse().ok()).collect();
    parts.filter(|p| p.len() == 3)
}

/// The first word of `text` that is a version: `codex-cli 0.171.0` → `[0, 171, 0]`.
fn version_in(text: &str) -> Option<Vec<u64>> {
    text.split_whitespace().find_map(parse_version)
}

/// That word itself.
fn version_word(text: &str) -> Option<&str> {
    text.split_whitespace().find(|w| parse_version(w).is_some())
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

/// How long `<program> --version` may take.
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

/// What `sessions.claude` (or the package's setting) says about the CLI, found without
/// installing anything.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Detected {
    /// `installed` (on PATH), `path` (configured) or `bundled`.
    pub source: String,
    pub found: bool,
    pub path: Option<String>,
    /// What `<program> --version` printed, first word.
    pub version: Option<String>,
    /// The version Vyre speaks to.
    pub pinned: String,
    /// Why it cannot run, and what to do; none when it can.
    pub problem: Option<String>,
}

impl NpmCli {
    /// Look for the CLI and ask its version, installing nothing: what the onboarding shows.
    pub async fn detect(&self) -> Detected {
        let p = self.package;
        let (source, candidate) = match &self.source {
            Source::Installed => ("installed", on_path(p.bin)),
            Source::Path(path) => ("path", Some(path.clone()).filter(|p| p.is_file())),
            Source::Bundled { dir } => (
                "bundled",
                Some(dir.join("node_modules/.bin").join(p.bin)).filter(|p| p.is_file()),
            ),
        };
        let mut found = Detected {
            source: source.into(),
            found: false,
            path: None,
            version: None,
            pinned: p.version.into(),
            problem: None,
        };
        let Some(program) = candidate else {
            found.problem = Some(match self.source {
                Source::Bundled { .. } => format!(
                    "{} {} is installed with npm when the first session starts",
                    p.name, p.version
                ),
                _ => format!("{} was not found; {}", p.name, install_hint(p)),
            });
            return found;
        };
        found.path = Some(program.display().to_string());
        let version = version_of(&program, &self.probe).await;
        found.version = version
            .as_deref()
            .and_then(version_word)
            .map(str::to_string);
        let pinned = parse_version(p.version).expect("the pinned version parses");
        match version.as_deref().and_then(version_in) {
            Some(v) if v < pinned => {
                found.problem = Some(format!(
                    "{} {} is older than {}; {}",
                    p.name,
                    found.version.as_deref().unwrap_or("?"),
                    p.version,
                    install_hint(p)
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

    pub fn new(
        package: &'static Package,
        source: Source,
        probe: Probe,
        ctx: Option<Ctx>,
    ) -> NpmCli {
        NpmCli {
            package,
            source,
            probe,
            ctx,
            resolved: OnceCell::new(),
        }
    }

    /// A fixed program run as vyred's own user with HOME `home` (tests, tools).
    pub fn at(program: PathBuf, home: PathBuf) -> NpmCli {
        Self::of(&CLAUDE, program, home)
    }

    /// A fixed program of `package`'s, run as vyred's own user with HOME `home`.
    pub fn of(package: &'static Package, program: PathBuf, home: PathBuf) -> NpmCli {
        let contain = std::sync::Arc::new(super::sandbox::Contain::none());
        Self::new(
            package,
            Source::Path(program),
            Probe { home, contain },
            None,
        )
    }

    pub fn package(&self) -> &'static Package {
        self.package
    }

    /// The program to run, installed and checked on first use.
    pub async fn program(&self) -> Result<PathBuf, String> {
        self.resolved
            .get_or_try_init(|| self.resolve())
            .await
            .cloned()
    }

    async fn resolve(&self) -> Result<PathBuf, String> {
        let p = self.package;
        let program = match &self.source {
            Source::Installed => on_path(p.bin).ok_or_else(|| {
                format!(
                    "{} is not installed: no `{}` on PATH; {}",
                    p.name,
                    p.bin,
                    install_hint(p)
                )
            })?,
            Source::Path(path) => {
                if !path.is_file() {
                    return Err(format!(
                        "{} was not found at {}: {}",
                        p.name,
                        path.display(),
                        install_hint(p)
                    ));
                }
                path.clone()
            }
            Source::Bundled { dir } => self.bundled(dir).await?,
        };
        match version_of(&program, &self.probe)
            .await
            .as_deref()
            .and_then(|v| version_in(v).map(|n| (v.to_string(), n)))
        {
            Some((text, version)) => {
                let pinned = parse_version(p.version).expect("the pinned version parses");
                if version < pinned {
                    return Err(format!(
                        "{} {} at {} is older than {}, the version Vyre speaks to; {}",
                        p.name,
                        version_word(&text).unwrap_or("?"),
                        program.display(),
                        p.version,
                        install_hint(p)
                    ));
                }
                if version > pinned {
                    tracing::warn!(version = %text, pinned = p.version, "{} is newer than the version Vyre was tested with", p.name);
                }
            }
            None => {
                tracing::warn!(program = %program.display(), "cannot tell {}'s version; going on", p.name)
            }
        }
        Ok(program)
    }

    /// The pinned CLI in `dir`, installed with npm when it is missing or another version.
    async fn bundled(&self, dir: &Path) -> Result<PathBuf, String> {
        let p = self.package;
        let program = dir.join("node_modules/.bin").join(p.bin);
        let current = version_of(&program, &self.probe).await.unwrap_or_default();
        if version_in(&current) == parse_version(p.version) {
            return Ok(program);
        }
        self.emit(
            "install_started",
            serde_json::json!({ "version": p.version }),
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
                &format!("{}@{}", p.npm, p.version),
            ])
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output()
            .await;
        let failure = match out {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(format!(
                "{} is \"bundled\", which installs {} with npm, and npm is not on PATH",
                p.setting, p.name
            )),
            Err(e) => Some(format!("npm could not run: {e}")),
            Ok(o) if !o.status.success() => Some(format!(
                "npm install of {}@{} failed: {}",
                p.npm,
                p.version,
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .last()
                    .unwrap_or("no output")
            )),
            Ok(_) if !program.is_file() => {
                Some(format!("npm finished but {} is missing", program.display()))
            }
            Ok(_) => None,
        };
        match failure {
            Some(error) => {
                self.emit(
                    "install_failed",
                    serde_json::json!({ "version": p.version, "error": error }),
                )
                .await;
                Err(error)
            }
            None => {
                let seconds = started.elapsed().as_secs();
                self.emit(
                    "installed",
                    serde_json::json!({ "version": p.version, "seconds": seconds }),
                )
                .await;
                Ok(program)
            }
        }
    }

    /// Event `<package's events>.<what>`.
    async fn emit(&self, what: &str, payload: serde_json::Value) {
        let kind = format!("{}.{what}", self.package.events);
        if let Some(ctx) = &self.ctx
            && let Err(e) = ctx.events().emit(NewEvent::new(&kind, payload)).await
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
        assert_eq!(version_in("codex-cli 0.171.0"), Some(vec![0, 171, 0]));
        assert_eq!(version_word("codex-cli 0.171.0"), Some("0.171.0"));
        assert_eq!(version_in("codex-cli"), None);
    }
}
