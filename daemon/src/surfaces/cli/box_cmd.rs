//! `vyre box add user@host`: put Vyre on a server over SSH with the system's `ssh` client
//! ([`super::ssh`]). It checks the host can be reached and takes the key (and says which
//! failed), trusting an unknown host key only after the person saw its fingerprint and said yes,
//! or from `--known-hosts` ([`super::host_key`]), finds a container
//! engine there (Docker, or podman; installs Docker with apt when there is none), sends the box
//! image when the host lacks it, (re)starts the container with `VYRE_HOME` on a volume and its
//! port published on the host's loopback, waits for vyred's health, opens the tunnel, and prints
//! (and opens) the onboarding link. Run again, it replaces the container and keeps the volume.
//! Every word of a command run there is quoted ([`super::sh`]).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;

use super::ssh::{self, Ssh};
use super::{fail, host_key, sh};

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
    /// Trust only the host keys in this file (known_hosts format) instead of asking.
    #[arg(long)]
    known_hosts: Option<std::path::PathBuf>,
    /// Where phones reach the box's private network, host:port as the internet sees them
    /// (default: the host ssh connects to, port 51820).
    #[arg(long)]
    endpoint: Option<String>,
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
        known_hosts: None,
        endpoint: None,
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
    fn ssh(&self) -> Ssh {
        Ssh {
            target: self.target.clone(),
            port: self.port,
            identity: self.identity.clone(),
            known_hosts: self.known_hosts.clone(),
        }
    }
}

/// The WireGuard endpoint devices are given: the host ssh really connects to (its
/// configuration's `HostName`, not an alias), at the published port.
fn wireguard_endpoint(ssh: &Ssh) -> Result<String, String> {
    let host = ssh
        .resolved()?
        .into_iter()
        .find(|(k, _)| k == "hostname")
        .map(|(_, v)| v)
        .ok_or_else(|| format!("ssh names no host for {}", ssh.target))?;
    Ok(endpoint_of(&host))
}

/// `host:51820`, an IPv6 address in brackets.
fn endpoint_of(host: &str) -> String {
    if host.parse::<std::net::Ipv6Addr>().is_ok() {
        format!("[{host}]:51820")
    } else {
        format!("{host}:51820")
    }
}

/// Ask the person at the terminal; none when stdin is not one.
fn terminal_ask() -> Option<impl FnMut(&str) -> bool> {
    use std::io::{BufRead, IsTerminal, Write};
    std::io::stdin().is_terminal().then_some(|question: &str| {
        print!("{question}");
        let _ = std::io::stdout().flush();
        let mut answer = String::new();
        let _ = std::io::stdin().lock().read_line(&mut answer);
        matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
    })
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
/// installed with apt. It prints one of [`ENGINES`].
const ENGINE: &str = r#"set -e
if docker info >/dev/null 2>&1; then echo docker; exit 0; fi
if command -v podman >/dev/null 2>&1; then echo podman; exit 0; fi
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo -n"
$SUDO apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq docker.io >/dev/null
echo "$SUDO docker""#;

/// The engines [`ENGINE`] may name, as the words of a command.
const ENGINES: &[&[&str]] = &[&["docker"], &["podman"], &["sudo", "-n", "docker"]];

/// The engine's words for what the host printed, or why it is not one Vyre drives.
fn engine_words(printed: &str, target: &str) -> Result<&'static [&'static str], String> {
    let printed = printed.split_whitespace().collect::<Vec<_>>();
    if printed.is_empty() {
        return Err(format!(
            "no container engine could be found or installed on {target}"
        ));
    }
    ENGINES
        .iter()
        .find(|e| **e == printed.as_slice())
        .copied()
        .ok_or_else(|| {
            format!(
                "{target} named a container engine Vyre does not drive: {}",
                printed.join(" ")
            )
        })
}

/// A command line for the host's shell: the engine's words, then `args`, each quoted.
fn engine_cmd(engine: &[&str], args: &[&str]) -> String {
    let words: Vec<&str> = engine.iter().chain(args).copied().collect();
    sh::command(&words)
}

fn add_box(add: &BoxAdd) -> Result<(), String> {
    ssh::check_word("target", &add.target)?;
    ssh::check_word("image", &add.image)?;
    let ssh = add.ssh();
    println!("Checking {} ...", add.target);
    let mut ask = terminal_ask();
    host_key::ensure_trusted(
        &ssh,
        ask.as_mut().map(|a| a as &mut dyn FnMut(&str) -> bool),
    )?;
    let endpoint = match &add.endpoint {
        Some(e) => e.clone(),
        None => wireguard_endpoint(&ssh)?,
    };
    ssh::check_word("endpoint", &endpoint)?;
    let engine = engine_words(&ssh.remote(ENGINE)?, &add.target)?;
    println!("  container engine: {}", engine.join(" "));
    let has_image = ssh
        .remote(&format!(
            "{} >/dev/null 2>&1 && echo yes || echo no",
            engine_cmd(engine, &["image", "inspect", &add.image])
        ))?
        .trim()
        == "yes";
    if !has_image {
        println!("  sending the image {} ...", add.image);
        let local = ["podman", "docker"]
            .into_iter()
            .find(|e| {
                Command::new(e)
                    .args(["image", "inspect", "--", &add.image])
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
            .args(["save", "--", &add.image])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {local} save: {e}"))?;
        let stdout = save.stdout.take().expect("piped");
        let load = ssh
            .command(&[])
            .arg(engine_cmd(engine, &["load"]))
            .stdin(stdout)
            .output()
            .map_err(|e| format!("cannot run ssh: {e}"))?;
        let _ = save.wait();
        if !load.status.success() {
            return Err(ssh::explain(
                &add.target,
                load.status.code(),
                &String::from_utf8_lossy(&load.stderr),
            ));
        }
    }
    // Again is safe: the container is replaced, the volumes (VYRE_HOME, and the sessions' HOME
    // with their transcripts and work) kept.
    let sessions_volume = format!("{CONTAINER}-sessions");
    let publish = format!("127.0.0.1:{}:4477", add.remote_port);
    // The private network's WireGuard port, on every interface: phones reach it from anywhere,
    // and it answers nothing to a key vyred did not issue (ADR 0018).
    let wireguard = "51820:51820/udp";
    // Where the devices that join are told to find it (`network.endpoint`).
    let endpoint_env = format!("VYRE_NETWORK_ENDPOINT={endpoint}");
    let home_mount = format!("{CONTAINER}:/var/lib/vyre");
    let sessions_mount = format!("{sessions_volume}:/home/vyre-session");
    let run = [
        format!(
            "{} >/dev/null 2>&1 || true",
            engine_cmd(engine, &["rm", "-f", CONTAINER])
        ),
        format!(
            "{} >/dev/null 2>&1 || true",
            engine_cmd(engine, &["volume", "create", CONTAINER])
        ),
        format!(
            "{} >/dev/null 2>&1 || true",
            engine_cmd(engine, &["volume", "create", &sessions_volume])
        ),
        format!(
            "{} >/dev/null",
            engine_cmd(
                engine,
                &[
                    "run",
                    "-d",
                    "--name",
                    CONTAINER,
                    "--restart",
                    "unless-stopped",
                    "-p",
                    &publish,
                    "-p",
                    wireguard,
                    "-e",
                    &endpoint_env,
                    "-v",
                    &home_mount,
                    "-v",
                    &sessions_mount,
                    "--",
                    &add.image,
                ]
            )
        ),
    ]
    .join("; ");
    ssh.remote(&run)?;
    println!("  started the container {CONTAINER}");
    let health = format!(
        "{} >/dev/null 2>&1 && echo up || echo down",
        engine_cmd(
            engine,
            &[
                "exec",
                CONTAINER,
                "curl",
                "-fsS",
                "http://127.0.0.1:4477/v1/health"
            ]
        )
    );
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if ssh.remote(&health)?.trim() == "up" {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "vyred did not answer on {} within 90 s; see `{}` there",
                add.target,
                engine_cmd(engine, &["logs", CONTAINER])
            ));
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    println!("  vyred answers");
    let opened = ssh.remote(&engine_cmd(engine, &["exec", CONTAINER, "vyre", "open"]))?;
    let link = opened
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .ok_or_else(|| format!("vyred on {} gave no link: {opened}", add.target))?
        .to_string();
    let local = add.local_port.unwrap_or_else(|| free_local_port(4477));
    let forward = format!("{local}:127.0.0.1:{}", add.remote_port);
    let mut tunnel = ssh.command(&["-N", "-o", "ExitOnForwardFailure=yes", "-L", &forward]);
    tunnel
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
    fn the_endpoint_is_the_real_host_at_the_wireguard_port() {
        assert_eq!(endpoint_of("203.0.113.7"), "203.0.113.7:51820");
        assert_eq!(endpoint_of("box.example.com"), "box.example.com:51820");
        assert_eq!(endpoint_of("2001:db8::7"), "[2001:db8::7]:51820");
    }

    #[test]
    fn only_the_engines_vyre_drives_are_taken() {
        assert_eq!(engine_words("docker\n", "h").unwrap(), ["docker"]);
        assert_eq!(engine_words(" docker\n", "h").unwrap(), ["docker"]);
        assert_eq!(
            engine_words("sudo -n docker\n", "h").unwrap(),
            ["sudo", "-n", "docker"]
        );
        assert!(
            engine_words("", "h")
                .unwrap_err()
                .contains("no container engine")
        );
        assert!(engine_words("docker; touch x", "h").is_err());
    }

    #[test]
    fn every_word_of_a_remote_command_is_quoted() {
        assert_eq!(
            engine_cmd(
                &["sudo", "-n", "docker"],
                &["image", "inspect", "x; touch /tmp/pwned"]
            ),
            "sudo -n docker image inspect 'x; touch /tmp/pwned'"
        );
        assert_eq!(
            engine_cmd(&["podman"], &["run", "--", "$(id)"]),
            "podman run -- '$(id)'"
        );
    }
}
