//! Each owned session's own socket (ADR 0014): the HTTP surface serves vyred's API on it, and
//! whatever connects there is that session. The daemon provides this; the sessions layer opens
//! a socket as a session starts and closes it as the session ends.

use std::path::PathBuf;

use super::Capability;

pub trait SessionSockets: Send + Sync {
    /// Open (or keep) thread `thread`'s socket; its path, or none when the path would be too
    /// long for a unix socket (the session then reaches vyred's own socket, where its ancestry
    /// still marks it as a session).
    fn open(&self, thread: &str) -> std::io::Result<Option<PathBuf>>;
    /// Close the thread's socket and remove its file.
    fn close(&self, thread: &str);
}

impl Capability for dyn SessionSockets {
    const NAME: &'static str = "session-sockets";
}
