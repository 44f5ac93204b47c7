//! `vyre daemon`, `vyre up` and `vyre down`.

use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::drain::Drained;
use super::{fail, lean_memory};
use crate::daemon::{Daemon, DaemonOptions};
use crate::kernel::config::Role;
use crate::kernel::paths::VyreHome;
use crate::surfaces::client::{Client, ClientError};

/// Run vyred in the foreground until SIGTERM or SIGINT.
pub fn daemon(role: Option<Role>, port: Option<u16>) -> i32 {
    lean_memory::fewer_malloc_arenas();
    let relocations = lean_memory::drop_relocations();
    let home = match VyreHome::from_env() {
        Ok(home) => home,
        Err(e) => return fail(&e.to_string()),
    };
    // Everything vyred creates (the store, logs, the socket) is for its own user only.
    nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o077));
    if let Err(e) = home.ensure() {
        return fail(&format!("cannot prepare {}: {e}", home.root().display()));
    }
    // Read the config once here for the log filter; the daemon reads it again and reports it.
    let log_filter = match crate::kernel::config::load(&home.config_file()) {
        Ok(c) => c.config.log,
        Err(e) => return fail(&e.to_string()),
    };
    let _guard = match crate::kernel::logging::init(&home, log_filter.as_deref()) {
        Ok(g) => g,
        Err(e) => return fail(&e),
    };
    // A panic is caught where it happens (a module is disabled, vyred goes on); make sure its
    // message reaches the log file, not only stderr.
    std::panic::set_hook(Box::new(|info| {
        tracing::error!(panic = %info, "panic");
    }));
    tracing::debug!(bytes = relocations, "relocation tables dropped from memory");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(lean_memory::WORKERS)
        .enable_all()
        .thread_name("vyred")
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(&format!("cannot start the runtime: {e}")),
    };
    runtime.block_on(async move {
        let mut options = DaemonOptions::new(home);
        options.role = role;
        options.port = port;
        options.when_quiet = Some(lean_memory::give_back_freed);
        let daemon = match Daemon::bind(options).await {
            Ok(d) => d,
            Err(e) => return fail(&e.to_string()),
        };
        eprintln!(
            "vyred {} listening on {} and http://{}",
            crate::kernel::VERSION,
            daemon.socket_path().display(),
            daemon.http_addr()
        );
        // On a box started by Docker or systemd, its log is where the person looks first.
        if !daemon.kernel().owner().exists() {
            match daemon
                .kernel()
                .links()
                .issue(crate::kernel::links::LinkKind::Onboard, crate::kernel::links::LINK_TTL)
                .await
            {
                Ok(link) => eprintln!(
                    "onboard: http://{}/onboard?t={} (once, within an hour; `vyre open` prints another)",
                    daemon.http_addr(),
                    link.token
                ),
                Err(e) => tracing::warn!("cannot issue the onboarding link: {e}"),
            }
        }
        let kernel = daemon.kernel().clone();
        tokio::spawn(async move {
            wait_for_signal().await;
            kernel.request_shutdown();
        });
        match daemon.serve().await {
            Ok(()) => 0,
            Err(e) => {
                tracing::error!("{e}");
                1
            }
        }
    })
}

async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::error!("cannot listen for signals; stop vyred with `vyre down`");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM received"),
        _ = int.recv() => tracing::info!("SIGINT received"),
    }
}

/// How long `vyre up` waits for a new vyred to answer.
const START_WAIT: Duration = Duration::from_secs(20);

pub async fn up(
    home: &VyreHome,
    client: &Client,
    role: Option<Role>,
    port: Option<u16>,
    wait: Duration,
) -> i32 {
    super::app_build::ensure_built();
    if let Ok(health) = client.get("/v1/health").await {
        let running = health["version"].as_str().unwrap_or("?");
        match Upgrade::from(running, crate::kernel::VERSION) {
            Upgrade::Same => {}
            Upgrade::Newer => println!(
                "vyred {running} is running, newer than this vyre ({}); it is left as it is. To run this one instead: vyre down && vyre up",
                crate::kernel::VERSION
            ),
            Upgrade::Older => {
                return restart(home, client, &health, role, port, wait).await;
            }
        }
        println!("vyred is already running ({}).", describe(&health));
        print_where(home);
        print_tunnel(home, &health);
        return where_then_link(client, &health).await;
    }
    start(home, client, role, port).await
}

/// How the running vyred's version compares with this binary's.
#[derive(Debug, PartialEq, Eq)]
enum Upgrade {
    Same,
    /// The running one is older (or of a version that cannot be ordered): restart onto this one.
    Older,
    /// The running one is newer: an older vyre does not take its place unasked.
    Newer,
}

impl Upgrade {
    fn from(running: &str, this: &str) -> Self {
        if running == this {
            return Upgrade::Same;
        }
        let numbers = |v: &str| -> Option<Vec<u64>> {
            v.split(['-', '+'])
                .next()?
                .split('.')
                .map(|n| n.parse().ok())
                .collect()
        };
        match (numbers(running), numbers(this)) {
            (Some(r), Some(t)) if r > t => Upgrade::Newer,
            _ => Upgrade::Older,
        }
    }
}

/// `vyre up` with an older vyred running from this home: let its running turns finish (at most
/// `wait`, see `drain`), stop it (calls in flight finish, the store closes) and start this
/// binary on the same home, role and port, so the data, the links it issued and the address in
/// the browser stay. A vyred run by a systemd unit is restarted by systemd, so the person is told
/// the command instead.
async fn restart(
    home: &VyreHome,
    client: &Client,
    health: &Value,
    role: Option<Role>,
    port: Option<u16>,
    wait: Duration,
) -> i32 {
    let running = health["version"].as_str().unwrap_or("?");
    let this = crate::kernel::VERSION;
    if let Some(command) = super::service_cmd::restart_command() {
        println!("vyred {running} is running as a systemd service; this vyre is {this}.");
        println!("Restart the service onto the new binary: {command}");
        return 1;
    }
    println!(
        "vyred {running} is running from {}; this vyre is {this}: restarting it onto {this}.",
        home.root().display()
    );
    match super::drain::wait_for_turns(client, wait).await {
        Drained::Idle => {}
        Drained::Finished { turns } => {
            println!("{} finished.", capitalized(&super::drain::turns(turns)))
        }
        Drained::TimedOut { left } => println!(
            "{} still under way ({}): the restart stops them, and each thread resumes on its next message.",
            capitalized(&super::drain::turns(left.len())),
            left.iter()
                .map(|b| b.thread.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
    let role = role.or_else(|| health["role"].as_str().and_then(|r| r.parse().ok()));
    let port = port.or_else(|| {
        std::fs::read_to_string(home.addr_file())
            .ok()
            .and_then(|a| a.trim().rsplit_once(':').and_then(|(_, p)| p.parse().ok()))
    });
    if let Err(e) = stop(home, client).await {
        return fail(&format!(
            "{e}; stop it with `vyre down`, then run `vyre up` again"
        ));
    }
    start(home, client, role, port).await
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// Start vyred in the background and wait until it answers.
async fn start(home: &VyreHome, client: &Client, role: Option<Role>, port: Option<u16>) -> i32 {
    if let Err(e) = home.ensure() {
        return fail(&format!("cannot prepare {}: {e}", home.root().display()));
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return fail(&format!("cannot find the vyre binary: {e}")),
    };
    let out_path = home.logs().join("vyred.out");
    let out = match std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&out_path)
    {
        Ok(f) => f,
        Err(e) => return fail(&format!("cannot open {}: {e}", out_path.display())),
    };
    let start_of_run = out.metadata().map(|m| m.len()).unwrap_or(0);
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("daemon").env("VYRE_HOME", home.root());
    if let Some(role) = role {
        cmd.args(["--role", role.as_str()]);
    }
    if let Some(port) = port {
        cmd.args(["--port", &port.to_string()]);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(match out.try_clone() {
            Ok(f) => Stdio::from(f),
            Err(_) => Stdio::null(),
        });
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent; it detaches the
    // daemon from this terminal's session so closing the terminal does not stop it.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()
                .map(|_| ())
                .map_err(std::io::Error::from)
        });
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return fail(&format!("cannot start vyred: {e}")),
    };
    let deadline = Instant::now() + START_WAIT;
    loop {
        if let Ok(health) = client.get("/v1/health").await {
            println!("Vyre is running ({}).", describe(&health));
            print_where(home);
            print_tunnel(home, &health);
            return where_then_link(client, &health).await;
        }
        if let Ok(Some(status)) = child.try_wait() {
            let text = std::fs::read(&out_path).unwrap_or_default();
            let tail = String::from_utf8_lossy(&text[(start_of_run as usize).min(text.len())..])
                .into_owned();
            let reason = tail
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix("vyre: "))
                .unwrap_or("see the logs")
                .to_string();
            return fail(&format!(
                "vyred exited ({status}) before it was ready: {reason}"
            ));
        }
        if Instant::now() > deadline {
            return fail(&format!(
                "vyred did not answer within {}s; see {}",
                START_WAIT.as_secs(),
                home.logs().display()
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub async fn down(home: &VyreHome, client: &Client) -> i32 {
    match stop(home, client).await {
        Ok(true) => {
            println!("vyred stopped.");
            0
        }
        Ok(false) => {
            println!("vyred is not running.");
            0
        }
        Err(e) => fail(&e),
    }
}

/// Stop vyred gracefully and wait until it is gone; false when none was running.
pub async fn stop(home: &VyreHome, client: &Client) -> Result<bool, String> {
    match client.call("system.stop", &json!({})).await {
        Ok(_) => {}
        Err(ClientError::NotRunning(_)) => return Ok(false),
        Err(e) => return Err(e.to_string()),
    }
    // Stopped once the lock is free: calls in flight have finished and the store is closed.
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if lock_is_free(home) {
            return Ok(true);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err("vyred was asked to stop but is still running after 30s".into())
}

fn lock_is_free(home: &VyreHome) -> bool {
    match std::fs::File::open(home.lock_file()) {
        Ok(f) => match f.try_lock_shared() {
            Ok(()) => true,
            Err(std::fs::TryLockError::WouldBlock) => false,
            Err(_) => true,
        },
        Err(_) => true,
    }
}

fn describe(health: &Value) -> String {
    format!(
        "vyred {}, role {}, up {}s",
        health["version"].as_str().unwrap_or("?"),
        health["role"].as_str().unwrap_or("?"),
        health["uptime_s"].as_u64().unwrap_or(0)
    )
}

/// On a Mac's first start in a terminal, where Vyre should run (a box, a server, here); then
/// the onboarding link (or the app's address once onboarded).
async fn where_then_link(client: &Client, health: &Value) -> i32 {
    match super::first_run::ask(client, health).await {
        super::first_run::Choice::Failed(code) => code,
        super::first_run::Choice::Here | super::first_run::Choice::Done => {
            print_link(client, false).await
        }
    }
}

/// The link a browser opens: the onboarding while there is no owner; with `always`, a sign-in
/// link for one more browser once there is.
async fn print_link(client: &Client, always: bool) -> i32 {
    if !always {
        // `system.status` says whether the onboarding is done and where the app is, cheaply.
        let status = match client.call("system.status", &json!({})).await {
            Ok(s) => s,
            Err(e) => return fail(&e.to_string()),
        };
        if status["onboarded"] == true {
            let addr = status["listeners"].as_array().and_then(|ls| {
                ls.iter()
                    .find(|l| l["kind"] == "http")
                    .and_then(|l| l["address"].as_str())
            });
            if let Some(addr) = addr {
                println!();
                println!("The app: http://{addr}/app/ (`vyre open` signs in another browser)");
            }
            return 0;
        }
    }
    match client.call("devices.link", &json!({})).await {
        Ok(link) => {
            let url = link["url"].as_str().unwrap_or("?");
            println!();
            if link["kind"] == "onboard" {
                println!("Set Vyre up in your browser (the link works once, for an hour):");
            } else {
                println!("Open this in the browser to sign in (it works once, for an hour):");
            }
            println!("  {url}");
            0
        }
        Err(e) => fail(&e.to_string()),
    }
}

/// On a server (role box), how a laptop reaches it: vyred answers on loopback only, so through
/// an SSH tunnel (until the private network exists).
fn print_tunnel(home: &VyreHome, health: &Value) {
    if health["role"] != "box" {
        return;
    }
    let Some(port) = std::fs::read_to_string(home.addr_file())
        .ok()
        .and_then(|a| a.trim().rsplit_once(':').map(|(_, p)| p.to_string()))
    else {
        return;
    };
    println!();
    println!("From your laptop, open a tunnel to this box first, then the link below works there:");
    println!("  {}", tunnel_line(&port));
}

/// `ssh -N -L <port>:127.0.0.1:<port> <user>@<host>` for this machine.
pub fn tunnel_line(port: &str) -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "you".into());
    let host = crate::surfaces::api::pair_endpoint::host_name();
    format!("ssh -N -L {port}:127.0.0.1:{port} {user}@{host}")
}

/// `vyre open`: a one-time link for a browser.
pub async fn open(client: &Client) -> i32 {
    print_link(client, true).await
}

fn print_where(home: &VyreHome) {
    let addr = std::fs::read_to_string(home.addr_file()).unwrap_or_default();
    let addr = addr.trim();
    if !addr.is_empty() {
        println!("  http    http://{addr}/");
    }
    println!("  socket  {}", home.socket().display());
    println!("  logs    {}", home.logs().display());
    println!("  home    {}", home.root().display());
}

#[cfg(test)]
mod tests {
    use super::Upgrade;

    #[test]
    fn an_older_vyred_is_restarted_and_a_newer_one_left_alone() {
        assert_eq!(Upgrade::from("0.1.0", "0.1.0"), Upgrade::Same);
        assert_eq!(Upgrade::from("0.0.0", "0.1.0"), Upgrade::Older);
        assert_eq!(Upgrade::from("0.9.0", "0.10.0"), Upgrade::Older);
        assert_eq!(Upgrade::from("0.10.0", "0.9.0"), Upgrade::Newer);
        assert_eq!(Upgrade::from("1.0.0", "0.9.9"), Upgrade::Newer);
        assert_eq!(Upgrade::from("0.1.0-rc.1", "0.1.1"), Upgrade::Older);
        // A version that cannot be ordered is not this one: this binary takes its place.
        assert_eq!(Upgrade::from("?", "0.1.0"), Upgrade::Older);
    }
}
