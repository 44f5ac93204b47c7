//! One socket per owned session (`VYRE_HOME/s/<thread>.sock`), handed to its Claude Code
//! process as `VYRE_SOCKET`. Every request on it is that session: vyred binds the caller to the
//! socket, so nothing a session sends (its MCP server's calls, its hooks) can claim to be a
//! person or another session. The socket lives as long as the session's process.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::serve::Listener;
use tokio::net::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;

use super::Peer;
use crate::kernel::{Kernel, WeakKernel};

/// A unix socket path must fit in `sun_path` (108 bytes on Linux, 104 on macOS).
const MAX_PATH: usize = 100;

/// A listener whose every connection belongs to one session.
struct SessionListener {
    inner: UnixListener,
    thread: Arc<str>,
}

impl Listener for SessionListener {
    type Io = UnixStream;
    type Addr = Arc<str>;

    async fn accept(&mut self) -> (UnixStream, Arc<str>) {
        loop {
            match self.inner.accept().await {
                Ok((io, _)) => return (io, self.thread.clone()),
                Err(e) => {
                    tracing::warn!(thread = %self.thread, "session socket accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Arc<str>> {
        Ok(self.thread.clone())
    }
}

/// Whoever connects to a session's socket is judged as that session's (ADR 0014): read and
/// pinned now, checked per request against the thread the socket belongs to.
impl super::serve::Serves for SessionListener {
    fn peer(io: &UnixStream, thread: &Arc<str>) -> Peer {
        Peer::Session {
            thread: thread.to_string(),
            facts: Arc::new(crate::kernel::peer::PeerFacts::of(io)),
        }
    }
}

/// Who may connect: vyred's own user only, or, when sessions run as their own group
/// (`sessions.gid`, ADR 0013), that group too: the folder is `rwxr-x---` and the socket
/// `rw-rw----`, both of the sessions' group, of which vyred's user is a member.
fn share_with_sessions(
    dir: &std::path::Path,
    path: &std::path::Path,
    gid: Option<u32>,
) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let Some(gid) = gid else {
        return std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    };
    let group = Some(nix::unistd::Gid::from_raw(gid));
    for (p, mode) in [(dir, 0o750), (path, 0o660)] {
        nix::unistd::chown(p, None, group).map_err(|e| {
            std::io::Error::other(format!(
                "cannot give {} to the sessions' group {gid} ({e}); vyred's user must be a member of it",
                p.display()
            ))
        })?;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// The open session sockets, by thread: the daemon provides them to the sessions layer as
/// [`crate::kernel::contracts::sockets::SessionSockets`].
pub struct SessionSockets {
    /// Weak: the kernel holds this (as a capability), and must not keep itself alive.
    kernel: WeakKernel,
    // std lock: held to insert or remove an entry, never across an await.
    open: Mutex<HashMap<String, (PathBuf, CancellationToken)>>,
}

impl SessionSockets {
    pub fn new(kernel: &Kernel) -> Arc<SessionSockets> {
        Arc::new(SessionSockets {
            kernel: kernel.downgrade(),
            open: Mutex::default(),
        })
    }
}

impl crate::kernel::contracts::sockets::SessionSockets for SessionSockets {
    /// Open (or keep) the thread's socket and serve the API on it.
    fn open(&self, thread: &str) -> std::io::Result<Option<PathBuf>> {
        if let Some((path, _)) = self.open.lock().expect("session sockets").get(thread) {
            return Ok(Some(path.clone()));
        }
        let Some(kernel) = self.kernel.upgrade() else {
            return Ok(None);
        };
        let kernel = &kernel;
        let sessions = &kernel.config().config.sessions;
        let dir = match &sessions.socket_dir {
            Some(dir) => PathBuf::from(dir),
            None => kernel.home().root().join("s"),
        };
        let path = dir.join(format!("{thread}.sock"));
        if path.as_os_str().len() > MAX_PATH {
            return Ok(None);
        }
        std::fs::create_dir_all(&dir)?;
        let _ = std::fs::remove_file(&path);
        let inner = UnixListener::bind(&path)?;
        share_with_sessions(&dir, &path, sessions.gid)?;
        let stop = kernel.shutdown_token().child_token();
        let listener = SessionListener {
            inner,
            thread: Arc::from(thread),
        };
        let app = super::router(kernel.clone(), None);
        // The same bounds as vyred's own listeners (`limits`), per session socket.
        let limits = super::serve::Limits::of(&kernel.config().config.limits);
        kernel
            .tasks()
            .spawn(super::serve::serve(listener, app, limits, stop.clone()));
        self.open
            .lock()
            .expect("session sockets")
            .insert(thread.to_string(), (path.clone(), stop));
        Ok(Some(path))
    }

    fn close(&self, thread: &str) {
        if let Some((path, stop)) = self.open.lock().expect("session sockets").remove(thread) {
            stop.cancel();
            let _ = std::fs::remove_file(path);
        }
    }
}
