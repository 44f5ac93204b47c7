//! Vyre's daemon (vyred) and the `vyre` command, as a library so the binary, the tests and the
//! Tauri shell all start the same daemon.
//!
//! The folders are the architecture (see `docs/architecture.md` for the why):
//! - [`kernel`]: what every part shares and no part owns: paths and config, the store (SQLite,
//!   migrations, the writer with group commit), the event log and bus, the redactor, typed tools
//!   with their registry and the Rules, the module contract ([`kernel::module`]), the
//!   capabilities modules provide each other ([`kernel::contracts`]), device tokens, and the
//!   small libraries every module may use (transcripts, folders, nofollow, the floor).
//! - [`modules`]: each built-in module in its own room (`modules/<name>/`, with its
//!   `module.json`): devices, system, vault, sessions (the sessions, threads and agents modules),
//!   recall, projects, harness, onboarding, pairing. A module imports the kernel and itself,
//!   never another module (`tests/it/layers.rs` holds it); `modules/mod.rs` is the one list.
//! - [`surfaces`]: how people and programs reach the tools: the HTTP API (with Server-Sent
//!   Events and the sessions' own sockets), the `vyre` command and its client of vyred.
//! - [`daemon`]: vyred's lifecycle, the composition root that starts the kernel, loads the
//!   modules and serves the surfaces.

pub mod daemon;
pub mod kernel;
pub mod modules;
pub mod surfaces;

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
