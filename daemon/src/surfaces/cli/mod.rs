//! The `vyre` command. `vyre daemon` runs vyred; every other command is a client of a running
//! vyred over its socket. Module tools listed under `shows.cli` are commands too:
//! `vyre <module> <tool> [--flag value ...]`, with flags from the tool's input schema.

mod app_build;
mod box_cmd;
mod daemon_cmds;
mod drain;
mod events_cmd;
mod first_run;
mod harness_cmd;
mod home_cmd;
mod hook_cmd;
mod host_key;
mod lean_memory;
mod mcp_cmd;
mod remind_cmd;
mod resume_cmd;
mod service_cmd;
mod sh;
mod ssh;
mod status_cmd;
mod tool_cmd;
mod uninstall_cmd;
mod vault_cmd;
mod vault_pass_cmd;
mod vault_put;

use clap::{Parser, Subcommand};

use crate::kernel::config::Role;
use crate::kernel::paths::VyreHome;
use crate::surfaces::client::Client;

#[derive(Debug, Parser)]
#[command(
    name = "vyre",
    version,
    about = "Vyre: Claude Code on machines you own",
    disable_help_subcommand = true
)]
struct Cli {
    /// Without a command: the home (projects, a new session, agents).
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run vyred in the foreground (what Docker, systemd and tests run).
    Daemon {
        /// Which machine this is: box (a server) or local (the Mac).
        #[arg(long)]
        role: Option<Role>,
        /// The loopback HTTP port; 0 for any free port.
        #[arg(long)]
        port: Option<u16>,
    },
    /// Start vyred in the background if none runs, and say where it is.
    Up {
        #[arg(long)]
        role: Option<Role>,
        #[arg(long)]
        port: Option<u16>,
        /// When an older vyred runs and is restarted onto this binary: how long to let its
        /// running turns finish first, in seconds (0: restart at once).
        #[arg(long, value_name = "SECONDS", default_value_t = 300)]
        wait: u64,
    },
    /// Stop vyred gracefully.
    Down,
    /// Before removing the program: stop vyred, remove its service units and the harness
    /// plugin. VYRE_HOME stays unless --purge --yes.
    Uninstall {
        /// Also delete VYRE_HOME (the store, the vault, the logs); needs --yes.
        #[arg(long)]
        purge: bool,
        /// Confirm --purge.
        #[arg(long)]
        yes: bool,
    },
    /// Print a one-time link that signs a browser in (the onboarding while Vyre has no owner).
    Open,
    /// What runs: version, role, uptime, modules, store, listeners.
    Status {
        /// Print the raw JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check the installation and say what is wrong and how to fix it.
    Doctor {
        #[arg(long)]
        json: bool,
    },
    /// Print events from the log; with --follow, keep printing new ones.
    Events {
        /// Start after this event id (default: the last 20 events, or only new ones with --follow).
        #[arg(long)]
        since: Option<i64>,
        /// Only these types, comma-separated; `thread.*` matches a prefix.
        #[arg(long)]
        types: Option<String>,
        /// Only events of this thread.
        #[arg(long)]
        thread: Option<String>,
        #[arg(long, short)]
        follow: bool,
        /// Print each event as one line of JSON.
        #[arg(long)]
        json: bool,
    },
    /// Open a session in this terminal (`claude --resume <id>` in its folder); a session Vyre
    /// runs idle is handed over first.
    Resume {
        /// The session (thread) id.
        id: String,
    },
    /// What the harness plugin's hooks run: hands the hook's input to vyred and prints its
    /// answer. In a session Vyre runs, PreToolUse denies when vyred cannot be asked; a terminal
    /// session without vyred gets nothing from it.
    Hook {
        /// SessionStart, UserPromptSubmit, PreToolUse or Stop.
        event: String,
    },
    /// The Vyre MCP server over stdio, for a Claude Code session (the harness plugin starts it).
    Mcp,
    /// The harness plugin for plain `claude`: install or uninstall it, or a harness tool.
    #[command(subcommand, after_help = harness_cmd::TOOLS_HELP)]
    Harness(harness_cmd::HarnessCommand),
    /// A box: `vyre box add user@host` installs Vyre on a server over SSH and opens it here.
    Box(box_cmd::BoxArgs),
    /// vyred as a systemd service (a server without Docker): install or uninstall it.
    #[command(subcommand)]
    Service(service_cmd::ServiceCommand),
    /// The vault: store credentials, grant them to modules and agents, rotate the key.
    #[command(subcommand)]
    Vault(vault_cmd::VaultCommand),
    /// Set a reminder in words: `vyre remind me in 20m to check the deploy`, `vyre remind me
    /// tomorrow at 9 to call the bank`, `vyre remind me to stretch in 1h`.
    Remind {
        /// The reminder, as you would say it.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        words: Vec<String>,
    },
    /// List every tool vyred offers, with the command that runs it.
    Tools {
        #[arg(long)]
        json: bool,
    },
    /// A module's tool: `vyre <module> <tool> [--flag value ...]` or `--json '{...}'`.
    #[command(external_subcommand)]
    Module(Vec<String>),
}

/// Run the command line; returns the process exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Daemon { role, port }) => daemon_cmds::daemon(role, port),
        command => {
            if !matches!(command, Some(Command::Mcp | Command::Hook { .. })) {
                end_quietly_on_a_closed_stdout();
            }
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => return fail(&format!("cannot start: {e}")),
            };
            runtime.block_on(run_client(command))
        }
    }
}

/// A command whose reader goes away (`vyre tools | head`) ends the way a Unix tool does, by
/// SIGPIPE, instead of panicking in `println!`. Rust ignores SIGPIPE from the start; the daemon
/// keeps that (a closed connection is an error to handle, never a reason to die), and so do
/// `vyre mcp` and `vyre hook`, which answer Claude Code on stdio and must fail closed in words.
fn end_quietly_on_a_closed_stdout() {
    // SAFETY: called before any thread is started; it only resets one signal's disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

async fn run_client(command: Option<Command>) -> i32 {
    let home = match VyreHome::from_env() {
        Ok(home) => home,
        Err(e) => return fail(&e.to_string()),
    };
    // Inside a session, its own socket is the only one it can reach (ADR 0014), and every
    // command there speaks for the session.
    let socket = std::env::var_os("VYRE_SOCKET")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| home.socket());
    if let Some(Command::Hook { event }) = &command {
        let reach = match std::env::var_os("VYRE_SOCKET") {
            Some(socket) => hook_cmd::Reach::Session(socket.into()),
            None => hook_cmd::Reach::Terminal(home.socket()),
        };
        return hook_cmd::hook(reach, event).await;
    }
    if let Some(Command::Mcp) = &command {
        return mcp_cmd::run(Client::socket(socket)).await;
    }
    if let Some(Command::Service(service)) = command {
        return service_cmd::run(&home, service);
    }
    if let Some(Command::Box(args)) = command {
        return box_cmd::run(args);
    }
    let client = Client::socket(socket);
    let Some(command) = command else {
        return home_cmd::home(&client).await;
    };
    match command {
        Command::Daemon { .. } => unreachable!("handled before"),
        Command::Up { role, port, wait } => {
            let wait = std::time::Duration::from_secs(wait);
            daemon_cmds::up(&home, &client, role, port, wait).await
        }
        Command::Down => daemon_cmds::down(&home, &client).await,
        Command::Uninstall { purge, yes } => uninstall_cmd::run(&home, &client, purge, yes).await,
        Command::Open => daemon_cmds::open(&client).await,
        Command::Status { json } => status_cmd::status(&client, json).await,
        Command::Doctor { json } => status_cmd::doctor(&home, &client, json).await,
        Command::Events {
            since,
            types,
            thread,
            follow,
            json,
        } => events_cmd::events(&client, since, types, thread, follow, json).await,
        Command::Tools { json } => tool_cmd::list(&client, json).await,
        Command::Remind { words } => remind_cmd::remind(&client, &words).await,
        Command::Vault(command) => vault_cmd::run(&client, command).await,
        Command::Resume { id } => resume_cmd::resume(&client, &id).await,
        Command::Hook { .. } | Command::Mcp | Command::Service(_) | Command::Box(_) => {
            unreachable!("handled before")
        }
        Command::Harness(command) => harness_cmd::run(&client, command).await,
        Command::Module(args) => tool_cmd::run(&client, &args).await,
    }
}

/// Print an error for a person and return the failure exit code.
pub(crate) fn fail(message: &str) -> i32 {
    eprintln!("vyre: {message}");
    1
}
