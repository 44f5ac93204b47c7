//! `vyre box add user@host`: put Vyre on a server over SSH with the system's `ssh` client. It
//! checks the host can be reached and takes the key (and says which failed), finds a container
//! engine there (Docker, or podman; installs Docker with apt when there is none), sends the box
//! image when the host lacks it, (re)starts the container with `VYRE_HOME` on a volume and its
//! port published on the host's loopback, waits for vyred's health, opens the tunnel, and prints
//! (and opens) the onboarding link. Run again, it replaces the container and keeps the volume.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;

use super::fail;

/// The image `box-image/build` makes.
pub const DEFAULT_IMAGE: &str = "localhost/vyre-box:dev";
const CONTAINER: &str = "vyre-box";

#[derive(Debug, Args)]
pub struct BoxAdd {
    /// Where: `user@host`.
    target: String,
    /// The SSH port.
    #[arg(long, short = 'p')]
    port: Option<u16>,
    /// The SSH key to use (default: ssh's own choice).
    #[arg(long, short = 'i')]
    identity: Option<String>,
    /// The box image (built with box-image/build).
    #[arg(long, default_value = DEFAULT_IMAGE)]
    image: String,
    /// The port vyred gets on the host's loopback.
    #[arg(long, default_value_t = 4477)]
    remote_port: u16,
    /// The local end of the tunnel (default: 4477, or a free port when that is taken).
    #[arg(long)]
    local_port: Option<u16>,
    /// Do not open a browser.
    #[arg(long)]
    no_browser: bool,
}

#[derive(Debug, Args)]
pub struct BoxArgs {
    #[command(subcommand)]
    command: BoxCommand,
}

#[derive(Debug, clap::Subcommand)]
enum BoxCommand {
    /// Install Vyre on a server over SSH and open it here.
    Add(BoxAdd),
}

/// `vyre box add <target>` with every option at its default (`vyre up`'s first-run question).
pub fn add_to(target: &str) -> i32 {
    let add = BoxAdd {
        target: target.to_string(),
        port: None,
        identity: None,
        image: DEFAULT_IMAGE.to_string(),
        remote_port: 4477,
        local_port: None,
        no_browser: false,
    };
    match add_box(&add) {
        Ok(()) => 0,
        Err(e) => fail(&e),
    }
}

pub fn run(args: BoxArgs) -> i32 {
    match args.command {
        BoxCommand::Add(add) => match add_box(&add) {
            Ok(()) => 0,
            Err(e) => fail(&e),
        },
    }
}

impl BoxAdd {
    fn ssh(&self) -> Command {
        let mut cmd = Command::new("ssh");
        cmd.args([
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=10",
            "-o",
            "StrictHostKeyChecking=accept-new",
        ]);
        if let Some(port) = self.port {
            cmd.args(["-p", &port.to_string()]);
        }
        if let Some(key) = &self.identity {
            cmd.args(["-i", key, "-o", "IdentitiesOnly=yes"]);
        }
        cmd
    }

    /// Run a shell script on the host; its stdout, or why it failed.
    fn remote(&self, script: &str) -> Result<String, String> {
        let out = self
            .ssh()
            .arg(&self.target)
            .arg(script)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run ssh ({e}); install the OpenSSH client"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(explain(
                &self.target,
                out.status.code(),
                &String::from_utf8_lossy(&out.stderr),
            ))
        }
    }
}

/// ssh's failure in words: unreachable, the key refused, or the step's own error.
pub fn explain(target: &str, code: Option<i32>, stderr: &str) -> String {
    let last = stderr
        .lines()
        .rfind(|l| !l.trim().is_empty() && !l.starts_with("Warning: Permanently added"))
        .unwrap_or("")
        .trim();
    if code == Some(255) {
        if stderr.contains("Permission denied") {
            return format!(
                "{target} refused the key ({last}); add your public key to the server's ~/.ssh/authorized_keys, or pass the right one with -i"
            );
        }
        if stderr.contains("Host key verification failed") {
            return format!(
                "{target}'s host key is not the one known for it ({last}); check you have the right server"
            );
        }
        return format!("cannot reach {target} ({last})");
    }
    format!("on {target}: {last}")
}

fn free_local_port(wanted: u16) -> u16 {
    if std::net::TcpListener::bind(("127.0.0.1", wanted)).is_ok() {
        return wanted;
    }
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(wanted)
}

/// Which engine runs containers on the host: a working Docker, else podman, else Docker
/// installed with apt.
const ENGINE: &str = r#"set -e
if docker info >/dev/null 2>&1; then echo docker; exit 0; fi
if command -v podman >/dev/null 2>&1; then echo podman; exit 0; fi
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo -n"
$SUDO apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq docker.io >/dev/null
echo "$SUDO docker""#;

fn add_box(add: &BoxAdd) -> Result<(), String> {
    println!("Checking {} ...", add.target);
    add.remote("true")?;
    let engine = add.remote(ENGINE)?.trim().to_string();
    if engine.is_empty() {
        return Err(format!(
            "no container engine could be found or installed on {}",
            add.target
        ));
    }
    println!("  container engine: {engine}");
    let has_image = add
        .remote(&format!(
            "{engine} image inspect {} >/dev/null 2>&1 && echo yes || echo no",
            add.image
        ))?
        .trim()
        == "yes";
    if !has_image {
        println!("  sending the image {} ...", add.image);
        let local = ["podman", "docker"]
            .into_iter()
            .find(|e| {
                Command::new(e)
                    .args(["image", "inspect", &add.image])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            })
            .ok_or_else(|| {
                format!(
                    "the image {} is not here either; build it with box-image/build",
                    add.image
                )
            })?;
        let mut save = Command::new(local)
            .args(["save", &add.image])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {local} save: {e}"))?;
        let stdout = save.stdout.take().expect("piped");
        let load = add
            .ssh()
            .arg(&add.target)
            .arg(format!("{engine} load"))
            .stdin(stdout)
            .output()
            .map_err(|e| format!("cannot run ssh: {e}"))?;
        let _ = save.wait();
        if !load.status.success() {
            return Err(explain(
                &add.target,
                load.status.code(),
                &String::from_utf8_lossy(&load.stderr),
            ));
        }
    }
    // Again is safe: the container is replaced, the volumes (VYRE_HOME, and the sessions' HOME
    // with their transcripts and work) kept.
    let run = format!(
        "{engine} rm -f {CONTAINER} >/dev/null 2>&1 || true; {engine} volume create {CONTAINER} >/dev/null 2>&1 || true; {engine} volume create {CONTAINER}-sessions >/dev/null 2>&1 || true; {engine} run -d --name {CONTAINER} --restart unless-stopped -p 127.0.0.1:{port}:4477 -v {CONTAINER}:/var/lib/vyre -v {CONTAINER}-sessions:/home/vyre-session {image} >/dev/null",
        port = add.remote_port,
        image = add.image,
    );
    add.remote(&run)?;
    println!("  started the container {CONTAINER}");
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let healthy = add.remote(&format!(
            "{engine} exec {CONTAINER} curl -fsS http://127.0.0.1:4477/v1/health >/dev/null 2>&1 && echo up || echo down"
        ))?;
        if healthy.trim() == "up" {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "vyred did not answer on {} within 90 s; see `{engine} logs {CONTAINER}` there",
                add.target
            ));
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    println!("  vyred answers");
    let opened = add.remote(&format!("{engine} exec {CONTAINER} vyre open"))?;
    let link = opened
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .ok_or_else(|| format!("vyred on {} gave no link: {opened}", add.target))?
        .to_string();
    let local = add.local_port.unwrap_or_else(|| free_local_port(4477));
    let mut tunnel = add.ssh();
    tunnel
        .args(["-N", "-o", "ExitOnForwardFailure=yes", "-L"])
        .arg(format!("{local}:127.0.0.1:{}", add.remote_port))
        .arg(&add.target)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let child = tunnel
        .spawn()
        .map_err(|e| format!("cannot open the tunnel: {e}"))?;
    // The link's address is the box's loopback; here it is the tunnel's end.
    let path = link
        .split_once("127.0.0.1:")
        .and_then(|(_, rest)| rest.split_once('/'))
        .map(|(_, p)| p)
        .unwrap_or("");
    let here = format!("http://127.0.0.1:{local}/{path}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", local)).is_err() {
        if Instant::now() > deadline {
            return Err("the tunnel did not open within 20 s".into());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    println!();
    println!(
        "Vyre runs on {}. The tunnel (ssh pid {}) keeps it at http://127.0.0.1:{local}/ here.",
        add.target,
        child.id()
    );
    println!("Set it up in your browser (the link works once, for an hour):");
    println!("  {here}");
    if !add.no_browser {
        let opener = if cfg!(target_os = "macos") {
            "open"
        } else {
            "xdg-open"
        };
        let _ = Command::new(opener)
            .arg(&here)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_failures_say_which_it_was() {
        let refused = explain(
            "sam@box",
            Some(255),
            "root@127.0.0.1: Permission denied (publickey).\n",
        );
        assert!(refused.contains("refused the key"), "{refused}");
        let down = explain(
            "sam@box",
            Some(255),
            "ssh: connect to host box port 22: Connection refused\n",
        );
        assert!(down.starts_with("cannot reach sam@box"), "{down}");
        let step = explain("sam@box", Some(1), "Error: no such image\n");
        assert_eq!(step, "on sam@box: Error: no such image");
    }
}
