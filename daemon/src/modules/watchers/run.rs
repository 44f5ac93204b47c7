//! One run of a watcher: its program in the network sandbox ([`crate::kernel::jail::Net`]: the
//! system read-only, its own folder read-only, the network, nothing of the person's or of
//! vyred's), the request on its stdin, its output read whole (capped) under its deadline, and the
//! whole process group killed when it ends or overruns. Vault values it was given never reach
//! its log: they are scrubbed from what it says and what it writes to stderr.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::contain::{Contain, Copy};
use super::protocol::{self, Said};
use super::spec::{Run, Watcher};
use crate::kernel::jail;

/// What a run is given.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub since: Value,
    /// The vault items it declared and was granted, by name: a value, or an env set's
    /// variables as an object.
    pub vault: BTreeMap<String, Value>,
    /// The variables of the env sets among them, set in its environment.
    pub env: Vec<(String, String)>,
    pub dry_run: bool,
    /// What its webhook was called with (a webhook watcher's run).
    pub webhook: Option<Value>,
}

/// Where the programs a run needs are, and how it is contained.
#[derive(Debug, Clone)]
pub struct Env {
    pub contain: Contain,
    /// Node, for `watch.js`.
    pub node: Option<PathBuf>,
    /// Vyre's runner for `watch.js` (`runner.mjs`, written where vyred keeps its runtime).
    pub runner: PathBuf,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RunError {
    #[error("it cannot start: {0}")]
    Start(String),
    #[error("it did not finish within {0} s and was stopped")]
    TimedOut(u64),
    #[error("{0}")]
    Protocol(String),
    /// It ended badly: `why` in its own words (its `error` line) or its stderr's, with what it
    /// logged before (kept in its log: that is where to look for why).
    #[error("{why}")]
    Failed {
        status: String,
        why: String,
        logs: Vec<String>,
    },
}

/// A run that ended well: what it said, and its stderr (scrubbed).
#[derive(Debug)]
pub struct Ran {
    pub said: Said,
    pub stderr: String,
}

/// Address space a program other than Node may take (Node reserves far more than it uses, so
/// its heap is capped by its own flag instead).
const MAX_MEMORY: u64 = 1024 * 1024 * 1024;
const NODE_HEAP_MB: u32 = 256;
const MAX_STDERR: usize = 16 * 1024;

/// Run `w` once.
pub fn run(w: &Watcher, env: &Env, req: &Request) -> Result<Ran, RunError> {
    // As another user, the run reads a copy of its folder (it cannot enter VYRE_HOME).
    let copy = match env.contain {
        Contain::User { .. } => Some(
            Copy::of(&w.folder, &env.runner)
                .map_err(|e| RunError::Start(format!("its folder cannot be copied: {e}")))?,
        ),
        Contain::Sandbox { .. } => None,
    };
    let (folder, runner) = match &copy {
        Some(c) => (c.dir.clone(), c.runner.clone()),
        None => (w.folder.clone(), env.runner.clone()),
    };
    let (program, args, node) = match &w.run {
        Run::Node { script } => {
            let node = env.node.clone().ok_or_else(|| {
                RunError::Start("Node is not installed here, and watch.js needs it".into())
            })?;
            let script = copy
                .as_ref()
                .map_or_else(|| script.clone(), |c| c.place(&w.folder, script));
            let args = vec![
                format!("--max-old-space-size={NODE_HEAP_MB}"),
                runner.to_string_lossy().into_owned(),
                script.to_string_lossy().into_owned(),
            ];
            (node, args, true)
        }
        Run::Command { program, args } => {
            let found = if program.contains('/') {
                let p = folder.join(program);
                p.is_file().then_some(p)
            } else {
                jail::find(program)
            };
            let p = found
                .ok_or_else(|| RunError::Start(format!("{program:?} is not installed here")))?;
            (p, args.clone(), false)
        }
    };
    let (mut cmd, run_as) = match &env.contain {
        Contain::Sandbox { bwrap } => {
            let mut read_only = vec![runner.clone()];
            if let Some(dir) = program.parent() {
                read_only.push(dir.to_path_buf());
            }
            let net = jail::Net {
                read_only,
                workdir: Some(folder.clone()),
                env: settable(&req.env),
            };
            (jail::net_command(bwrap, &program, &args, &net), None)
        }
        Contain::User { uid, gid } => {
            let mut cmd = std::process::Command::new(&program);
            cmd.args(&args)
                .current_dir(&folder)
                .env_clear()
                .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                .env("LANG", "C.UTF-8")
                .env("HOME", "/tmp")
                .envs(settable(&req.env))
                .process_group(0);
            (cmd, Some((*uid, *gid)))
        }
    };
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // CPU time past the wall deadline (a busy loop meets the deadline first and is told so;
    // the CPU limit only backs it up).
    let cpu = w.timeout_s * 2 + 5;
    // SAFETY: setrlimit, setgroups, setgid and setuid are async-signal-safe and touch no
    // memory of the parent.
    unsafe {
        cmd.pre_exec(move || {
            use nix::sys::resource::{Resource, setrlimit};
            if !node {
                setrlimit(Resource::RLIMIT_AS, MAX_MEMORY, MAX_MEMORY)
                    .map_err(std::io::Error::from)?;
            }
            setrlimit(Resource::RLIMIT_CPU, cpu, cpu).map_err(std::io::Error::from)?;
            setrlimit(Resource::RLIMIT_CORE, 0, 0).map_err(std::io::Error::from)?;
            if let Some((uid, gid)) = run_as {
                // Groups first, then the group, then the user: each needs the privilege that
                // the next one gives up.
                let groups = [gid as libc::gid_t];
                if libc::setgroups(1, groups.as_ptr()) < 0
                    || libc::setgid(gid as libc::gid_t) < 0
                    || libc::setuid(uid as libc::uid_t) < 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| RunError::Start(format!("{}: {e}", cmd.get_program().to_string_lossy())))?;
    let pgid = child.id() as i32;
    let input = json!({
        "since": req.since, "vault": req.vault, "dry_run": req.dry_run, "webhook": req.webhook
    })
    .to_string()
        + "\n";
    let mut stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || {
        // A script that never reads its input is its own business.
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = (&mut stdout)
            .take(protocol::MAX_OUTPUT as u64 + 1)
            .read_to_end(&mut out);
        if out.len() > protocol::MAX_OUTPUT {
            jail::kill(pgid);
        }
        out
    });
    let mut stderr = child.stderr.take().expect("piped");
    let errors = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = (&mut stderr).take(MAX_STDERR as u64).read_to_end(&mut text);
        // Drained past the cap, so a chatty script never blocks on a full pipe.
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        String::from_utf8_lossy(&text).into_owned()
    });
    let deadline = Duration::from_secs(w.timeout_s);
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < deadline => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => break None,
        }
    };
    jail::kill(pgid);
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    let stderr = scrub(errors.join().unwrap_or_default().trim(), &req.vault);
    let Some(status) = status else {
        let _ = child.wait();
        return Err(RunError::TimedOut(w.timeout_s));
    };
    let mut said =
        protocol::read(&out).map_err(|why| RunError::Protocol(scrub(&why, &req.vault)))?;
    for line in said.logs.iter_mut() {
        *line = scrub(line, &req.vault);
    }
    if let Some(error) = said.error.take() {
        return Err(RunError::Failed {
            status: status.to_string(),
            why: scrub(&error, &req.vault),
            logs: said.logs,
        });
    }
    if !status.success() {
        return Err(RunError::Failed {
            status: status.to_string(),
            why: if stderr.is_empty() {
                format!("it stopped ({status}) without saying why")
            } else {
                stderr
            },
            logs: said.logs,
        });
    }
    Ok(Ran { said, stderr })
}

/// An env set's variables that a run may be given: not those that would change how it runs
/// (`PATH`, `HOME`, `LANG`, the loader's `LD_*`) or speak for Vyre (`VYRE_*`).
fn settable(env: &[(String, String)]) -> Vec<(String, String)> {
    env.iter()
        .filter(|(k, _)| {
            !matches!(k.as_str(), "PATH" | "HOME" | "LANG")
                && !k.starts_with("LD_")
                && !k.starts_with("VYRE_")
        })
        .cloned()
        .collect()
}

/// `text` with every vault value it was given replaced by its name (`[vault:item]`, or
/// `[vault:item.VAR]` for an env set's variable).
pub fn scrub(text: &str, vault: &BTreeMap<String, Value>) -> String {
    let mut out = text.to_string();
    let mut hide = |label: String, value: &str| {
        if value.len() >= 4 {
            out = out.replace(value, &format!("[vault:{label}]"));
        }
    };
    for (name, value) in vault {
        match value {
            Value::String(v) => hide(name.clone(), v),
            Value::Object(vars) => {
                for (var, v) in vars {
                    hide(format!("{name}.{var}"), v.as_str().unwrap_or_default());
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modules::watchers::spec::{self, Declared};

    fn watcher(
        name: &str,
        script: &str,
        file: &str,
        run: Option<Vec<&str>>,
        timeout_s: u64,
    ) -> Watcher {
        let dir = std::env::temp_dir()
            .join(format!("vyre-watchers-run-{}", std::process::id()))
            .join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(file), script).unwrap();
        spec::check(
            Declared {
                name: name.into(),
                project: "P".into(),
                schedule: "@hourly".into(),
                needs: vec!["token".into()],
                emits: None,
                run: run.map(|r| r.into_iter().map(String::from).collect()),
                timeout_s: Some(timeout_s),
            },
            &dir,
        )
        .unwrap()
    }

    fn env() -> Option<Env> {
        let runner = std::env::temp_dir().join(format!("vyre-runner-{}.mjs", std::process::id()));
        std::fs::write(&runner, include_str!("runner.mjs")).unwrap();
        Some(Env {
            contain: Contain::Sandbox {
                bwrap: jail::bwrap()?,
            },
            node: jail::find("node"),
            runner,
        })
    }

    fn request() -> Request {
        Request {
            since: json!(41),
            vault: BTreeMap::from([("token".to_string(), json!("tok-very-secret"))]),
            env: Vec::new(),
            dry_run: false,
            webhook: None,
        }
    }

    #[test]
    fn an_env_sets_values_are_scrubbed_by_variable_and_runtime_names_are_not_set() {
        let vault = BTreeMap::from([
            (
                "deploy".to_string(),
                json!({ "KEY": "key-value-1", "ID": "ab" }),
            ),
            ("token".to_string(), json!("tok-value-2")),
        ]);
        assert_eq!(
            scrub("k=key-value-1 t=tok-value-2 id=ab", &vault),
            "k=[vault:deploy.KEY] t=[vault:token] id=ab",
            "values under 4 characters are too common to replace"
        );
        let env = [
            ("KEY", "v"),
            ("PATH", "/x"),
            ("HOME", "/x"),
            ("LANG", "x"),
            ("LD_PRELOAD", "/x.so"),
            ("VYRE_SOCKET", "/x"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        assert_eq!(settable(&env), [("KEY".to_string(), "v".to_string())]);
    }

    #[test]
    fn a_script_in_any_language_files_items_logs_and_moves_its_cursor() {
        let Some(env) = env() else {
            eprintln!("skipped: no bwrap");
            return;
        };
        let w = watcher(
            "sh-watcher",
            r#"read input
case "$input" in *'"since":41'*'"token":"tok-very-secret"'*) echo '{"log": "since 41, token tok-very-secret"}';; esac
echo '{"emit": {"title": "Issue 42", "id": "42"}}'
echo '{"since": 42}'"#,
            "watch.sh",
            Some(vec!["sh", "watch.sh"]),
            10,
        );
        let ran = run(&w, &env, &request()).unwrap();
        assert_eq!(ran.said.items.len(), 1);
        assert_eq!(ran.said.since, Some(json!(42)));
        assert!(
            ran.said.logs[0].starts_with("since 41"),
            "{:?}",
            ran.said.logs
        );
        assert!(
            !ran.said.logs[0].contains("tok-very-secret")
                && ran.said.logs[0].contains("[vault:token]"),
            "a vault value never reaches the log: {:?}",
            ran.said.logs
        );
    }

    #[test]
    fn watch_js_runs_as_the_spec_writes_it_and_gets_only_what_it_declared() {
        let Some(env) = env().filter(|e| e.node.is_some()) else {
            eprintln!("skipped: no bwrap or no node");
            return;
        };
        let w = watcher(
            "js-watcher",
            r#"export async function watch({ vault, since, emit, log }) {
  log('since', since);
  emit({ title: `after ${since}`, url: 'https://example.com/' + (since + 1) });
  if (vault.token !== 'tok-very-secret') throw new Error('no token');
  return since + 1;
}"#,
            "watch.js",
            None,
            20,
        );
        let ran = run(&w, &env, &request()).unwrap();
        assert_eq!(ran.said.items[0].title, "after 41");
        assert_eq!(ran.said.since, Some(json!(42)));
        let w = watcher(
            "js-greedy",
            "export async function watch({ vault }) { return vault.get('github'); }",
            "watch.js",
            None,
            20,
        );
        let err = run(&w, &env, &request()).unwrap_err();
        assert!(
            matches!(&err, RunError::Failed { why, .. } if why.contains("not among what this watcher needs")),
            "{err}"
        );
    }

    #[test]
    fn a_bad_script_fails_in_words_and_reaches_nothing_of_the_persons() {
        let Some(env) = env() else {
            eprintln!("skipped: no bwrap");
            return;
        };
        let secret =
            std::env::temp_dir().join(format!("vyre-watchers-secret-{}", std::process::id()));
        std::fs::write(&secret, "the-persons-secret").unwrap();
        let home = std::env::var("HOME").unwrap_or_default();
        let w = watcher(
            "snoop",
            &format!(
                "cat '{}' && echo LEAKED >&2; ls '{home}' >/dev/null 2>&1 && echo SAW-HOME >&2; env | grep -q VYRE && echo ENV >&2; echo '{{\"log\": \"looked\"}}'",
                secret.display()
            ),
            "watch.sh",
            Some(vec!["sh", "watch.sh"]),
            10,
        );
        let ran = run(&w, &env, &request()).unwrap();
        assert!(
            !ran.stderr.contains("LEAKED")
                && !ran.stderr.contains("SAW-HOME")
                && !ran.stderr.contains("ENV"),
            "{}",
            ran.stderr
        );
        for (name, script, want) in [
            ("loops", "while :; do :; done", "did not finish within 1 s"),
            (
                "floods",
                "yes '{\"log\": \"x\"}' | head -c 5000000",
                "more than 4 MiB",
            ),
            ("garbage", "echo 'not json'", "line 1 is not JSON"),
            ("fails", "echo tok-very-secret >&2; exit 3", "[vault:token]"),
        ] {
            let w = watcher(name, script, "watch.sh", Some(vec!["sh", "watch.sh"]), 1);
            let started = Instant::now();
            let err = run(&w, &env, &request()).unwrap_err().to_string();
            assert!(err.contains(want), "{name}: {err}");
            assert!(!err.contains("tok-very-secret"), "{name}: {err}");
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{name} took {:?}",
                started.elapsed()
            );
        }
    }
}

#[cfg(test)]
mod as_another_user {
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::modules::watchers::spec::{self, Declared};

    /// Run as `nobody`, as the box runs watchers as the sessions' user: needs root here.
    #[test]
    fn a_run_as_the_sessions_user_reads_a_copy_of_its_folder_and_nothing_of_vyreds() {
        if !nix::unistd::Uid::effective().is_root() {
            eprintln!("skipped: running as another user needs root");
            return;
        }
        let base = std::env::temp_dir().join(format!("vyre-watch-user-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        // Vyre's home: only vyred's user may enter it.
        let home = base.join("vyre-home");
        std::fs::create_dir_all(home.join("watchers/who")).unwrap();
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(home.join("vault-key"), "walrus").unwrap();
        let folder = home.join("watchers/who");
        let key = home.join("vault-key");
        std::fs::write(
            folder.join("watch.sh"),
            format!(
                "read input\nprintf '{{\"emit\": {{\"title\": \"uid %s\"}}}}\\n' \"$(id -u)\"\ncat {} && echo '{{\"log\": \"read the key\"}}'\nexit 0\n",
                key.display()
            ),
        )
        .unwrap();
        let w = spec::check(
            Declared {
                name: "who".into(),
                project: "P".into(),
                schedule: "@hourly".into(),
                needs: vec![],
                emits: None,
                run: Some(vec!["sh".into(), "watch.sh".into()]),
                timeout_s: Some(10),
            },
            &folder,
        )
        .unwrap();
        let runner = home.join("runner.mjs");
        std::fs::write(&runner, include_str!("runner.mjs")).unwrap();
        let env = Env {
            contain: Contain::User {
                uid: 65534,
                gid: 65534,
            },
            node: jail::find("node"),
            runner,
        };
        let req = Request::default();
        let ran = run(&w, &env, &req).unwrap();
        assert_eq!(ran.said.items[0].title, "uid 65534");
        assert!(ran.said.logs.is_empty(), "vyred's files are out of reach");
        assert!(ran.stderr.contains("Permission denied"), "{}", ran.stderr);

        // watch.js, through the runner copied beside it.
        if env.node.is_some() {
            std::fs::write(
                folder.join("watch.js"),
                "export async function watch({ emit }) { emit({ title: `node as ${process.getuid()}` }); }",
            )
            .unwrap();
            let w = spec::check(
                Declared {
                    name: "who".into(),
                    project: "P".into(),
                    schedule: "@hourly".into(),
                    needs: vec![],
                    emits: None,
                    run: None,
                    timeout_s: Some(20),
                },
                &folder,
            )
            .unwrap();
            let ran = run(&w, &env, &req).unwrap();
            assert_eq!(ran.said.items[0].title, "node as 65534");
        }
        let _ = std::fs::remove_dir_all(&base);
    }
}
