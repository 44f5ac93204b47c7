//! The surfaces: how people and programs reach vyred's tools. Each is a client of the one
//! registry (`kernel::tools`), never a second path to a module.
//!
//! - [`api`]: HTTP on the Unix socket and loopback TCP, Server-Sent Events, each session's own
//!   socket, the web app's files;
//! - [`cli`]: the `vyre` command;
//! - [`client`]: the `vyre` command's client of vyred over its socket.

pub mod api;
pub mod cli;
pub mod client;
