//! Who is calling: always what vyred verified, never a claim in the input.

use serde::Serialize;

/// The verified origin of a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Caller {
    /// A person at this machine: a process of vyred's own user on the socket, not started by a
    /// Claude Code session.
    Socket { uid: u32, pid: Option<i32> },
    /// A person on a paired device, by its device credential over HTTP. `kind` is the device's
    /// as verified with this request (`onboarding` fences a browser to the onboarding).
    Device {
        id: String,
        name: String,
        #[serde(skip)]
        kind: String,
    },
    /// Another Vyre paired with this one (the Mac, on the box), by its device credential. It is
    /// a person only for a call that carries a presence assertion it signed, checked by this
    /// vyred (`crate::kernel::presence`); `present` then names the caller there it vouches
    /// for. It may call only the tools `link.allow` lists.
    Linked {
        id: String,
        name: String,
        present: Option<String>,
    },
    /// A module calling another module's tool through `ctx.call`.
    Module { name: String },
    /// A process that runs inside a Claude Code session (found by its ancestry), or a session's
    /// own socket. `thread` is set only when vyred bound it.
    Session {
        thread: Option<String>,
        /// The calling process, when the socket said (for what depends on where it runs).
        #[serde(skip)]
        pid: Option<i32>,
    },
}

impl Caller {
    /// True when a person is behind the call, so PERSON_ONLY tools may run.
    pub fn is_person(&self) -> bool {
        matches!(
            self,
            Caller::Socket { .. }
                | Caller::Device { .. }
                | Caller::Linked {
                    present: Some(_),
                    ..
                }
        )
    }

    /// A short label for logs and events: `socket:1000`, `device:<id>`, `module:system`,
    /// `link:<id>` (a paired Vyre), `link:<id>/socket:501` (a person present on it).
    pub fn label(&self) -> String {
        match self {
            Caller::Socket { uid, .. } => format!("socket:{uid}"),
            Caller::Device { id, .. } => format!("device:{id}"),
            Caller::Linked {
                id, present: None, ..
            } => format!("link:{id}"),
            Caller::Linked {
                id,
                present: Some(by),
                ..
            } => format!("link:{id}/{by}"),
            Caller::Module { name } => format!("module:{name}"),
            Caller::Session {
                thread: Some(t), ..
            } => format!("session:{t}"),
            Caller::Session { thread: None, .. } => "session".to_string(),
        }
    }
}
