//! Vyre's daemon (vyred) and the `vyre` command, as a library so the binary, the tests and the
//! Tauri shell all start the same daemon.
//!
//! Map of the crate (see `docs/architecture.md` for the why):
//! - [`paths`], [`config`]: where things live and what the user set.
//! - [`store`]: SQLite with WAL, migrations, the writer thread with group commit.
//! - [`events`]: the append-only event log, the bus and the follower.
//! - [`redact`]: the credential detector every event passes.
//! - [`tools`], [`rules`]: typed tools, the registry every call goes through, and the Rules.
//! - [`modules`]: the module contract, the loader and each module's `Ctx`.
//! - [`devices`]: credentials of HTTP callers.
//! - [`vault`]: sealed credentials, grants, and the key stores (a built-in module).
//! - [`api`]: the HTTP API on the socket and on loopback TCP, including Server-Sent Events.
//! - [`kernel`], [`daemon`], [`lock`]: the shared handle and vyred's lifecycle.
//! - [`nofollow`]: reading and writing files in folders a session can write, never through a link.
//! - [`sessions`]: the provider router, the Claude driver, the Switchboard, agents and slots.
//! - [`transcripts`]: the one reader of Claude Code's transcript files; [`recall`] searches them;
//!   [`projects`] groups sessions into projects and lists the catalogue.
//! - [`client`], [`cli`]: the `vyre` command, a client of vyred over its socket.

pub mod api;
pub mod builtin;
pub mod cli;
pub mod client;
pub mod config;
pub mod contracts;
pub mod daemon;
pub mod devices;
pub mod events;
pub mod floor;
pub mod folders;
pub mod harness;
pub mod ids;
pub mod kernel;
mod kernel_migrations;
pub mod links;
pub mod lock;
pub mod logging;
pub mod modules;
pub mod nofollow;
pub mod onboarding;
pub mod owner;
pub mod pairing;
pub mod paths;
pub mod peer;
pub mod projects;
pub mod recall;
pub mod redact;
pub mod rules;
pub mod sessions;
pub mod store;
pub mod tools;
pub mod transcripts;
pub mod vault;

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
