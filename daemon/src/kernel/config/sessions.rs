//! The `sessions` section of config.json: where Claude Code comes from and how sessions run,
//! their limits, and the ACP agents offered as providers.

use serde::{Deserialize, Serialize};

use super::{at_least_one, minutes};

/// The `sessions` section. Every key is optional; the numbers are checked as the file loads, so
/// a bad limit stops vyred with the file, line and reason instead of misbehaving later.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct SessionsConfig {
    /// `installed`, `bundled` or a path to the CLI.
    pub claude: Option<String>,
    pub base_url: Option<String>,
    /// Codex (provider `codex`, ADR 0038): `installed` (the `codex` on PATH), `bundled` or a
    /// path. Unset, the provider is offered when a `codex` is on PATH.
    pub codex: Option<String>,
    /// The Responses API address Codex's sessions use (a gateway); unset, OpenAI's own.
    pub codex_base_url: Option<String>,
    /// What a Codex session's tokens cost, by model, as the person's plan prices them (Codex
    /// reports tokens, not prices; Vyre keeps no price list of its own). Unset for a model,
    /// its turns count tokens and no cost.
    #[serde(deserialize_with = "prices")]
    pub prices: std::collections::BTreeMap<String, Price>,
    pub home: Option<String>,
    /// `login`, `setup-token` or `api-key` (checked by the vault's auth, which names the choices).
    pub auth: Option<String>,
    /// A model per purpose.
    pub models: std::collections::BTreeMap<String, String>,
    /// Minutes before an idle session is closed; 0 keeps sessions until stopped.
    #[serde(deserialize_with = "minutes")]
    pub idle_minutes: Option<f64>,
    /// Live sessions at most.
    #[serde(deserialize_with = "at_least_one")]
    pub max_live: Option<u32>,
    /// Concurrency slots (ADR 0030 section 12).
    pub slots: SlotsConfig,
    /// Load the harness plugin (hooks, Vyre's MCP tools) into owned sessions; default true.
    pub harness: Option<bool>,
    /// Run sessions as this user id and group id (the box: a user that cannot open vyred's
    /// socket; ADR 0013). Needs the privilege to switch (CAP_SETUID, CAP_SETGID, CAP_KILL).
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    /// Where the sessions' own sockets are made: a folder the sessions' group can reach, since
    /// `VYRE_HOME` is vyred's alone. Default `VYRE_HOME/s`.
    pub socket_dir: Option<String>,
    /// How sessions are contained (ADR 0014): `auto` (the default: the sessions' own user when
    /// `uid` is set, else a bubblewrap sandbox; sessions do not start without one), `sandbox`,
    /// or `none` (sessions run as vyred's user, uncontained).
    pub containment: Option<String>,
    /// Warm spare sessions kept for the next start (ADR 0032; default 1, 0 keeps none), and
    /// what they may hold together in MiB of resident memory (default 512).
    pub spares: Option<u32>,
    pub spare_memory_mb: Option<u32>,
    /// Agents that speak the Agent Client Protocol, by name: each is provider `acp-<name>`
    /// (ADR 0037).
    #[serde(deserialize_with = "acp_agents")]
    pub acp: std::collections::BTreeMap<String, AcpAgent>,
}

/// What a model's tokens cost, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    /// Input read from the provider's cache; unset, the input's price.
    #[serde(default)]
    pub cached_input: Option<f64>,
    pub output: f64,
}

impl Price {
    /// What `input` fresh input tokens, `cached` cached ones and `output` output tokens cost.
    pub fn cost(&self, input: u64, cached: u64, output: u64) -> f64 {
        let per = |n: u64, price: f64| n as f64 * price / 1_000_000.0;
        per(input, self.input)
            + per(cached, self.cached_input.unwrap_or(self.input))
            + per(output, self.output)
    }
}

/// `sessions.prices`: every price a number of dollars, none negative.
fn prices<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<std::collections::BTreeMap<String, Price>, D::Error> {
    use serde::de::Error;
    let prices = std::collections::BTreeMap::<String, Price>::deserialize(d)?;
    for (model, p) in &prices {
        for (what, v) in [
            ("input", Some(p.input)),
            ("cached_input", p.cached_input),
            ("output", Some(p.output)),
        ] {
            if let Some(v) = v.filter(|v| !v.is_finite() || *v < 0.0) {
                return Err(D::Error::custom(format!(
                    "sessions.prices.{model}.{what}: {v} is not a price (US dollars per million tokens, 0 or more)"
                )));
            }
        }
    }
    Ok(prices)
}

/// One ACP agent: the program that speaks ACP on its stdio, its arguments, and variables for
/// its environment (given after the sessions' own; nothing else of vyred's reaches it).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AcpAgent {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
}

/// `sessions.acp`: names fit for a provider's (`acp-<name>`), a command for each.
fn acp_agents<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<std::collections::BTreeMap<String, AcpAgent>, D::Error> {
    use serde::de::Error;
    let agents = std::collections::BTreeMap::<String, AcpAgent>::deserialize(d)?;
    for (name, agent) in &agents {
        if !crate::kernel::module::valid_module_name(&format!("acp-{name}")) {
            return Err(D::Error::custom(format!(
                "sessions.acp: {name:?} is not a name for an agent (lowercase letters, digits and dashes)"
            )));
        }
        if agent.command.trim().is_empty() {
            return Err(D::Error::custom(format!(
                "sessions.acp.{name}.command: the program to run is missing"
            )));
        }
    }
    Ok(agents)
}

/// How many teammates and subagents may run at once, for the whole machine and per project.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct SlotsConfig {
    #[serde(deserialize_with = "at_least_one")]
    pub subagent: Option<u32>,
    #[serde(deserialize_with = "at_least_one")]
    pub teammate: Option<u32>,
    pub per_project: ProjectSlots,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct ProjectSlots {
    #[serde(deserialize_with = "at_least_one")]
    pub subagent: Option<u32>,
    #[serde(deserialize_with = "at_least_one")]
    pub teammate: Option<u32>,
}

impl SessionsConfig {
    /// `sessions.idle_minutes`, default 10; `None` when idle closing is off.
    pub fn idle_after(&self) -> Option<std::time::Duration> {
        match self.idle_minutes.unwrap_or(10.0) {
            0.0 => None,
            m => Some(std::time::Duration::from_secs_f64(m * 60.0)),
        }
    }
    /// `sessions.max_live`, default 6.
    pub fn max_live(&self) -> usize {
        self.max_live.unwrap_or(6) as usize
    }
    /// `sessions.spares`, default 1; `spare_memory`: `sessions.spare_memory_mb` in bytes.
    pub fn spares(&self) -> usize {
        self.spares.unwrap_or(1) as usize
    }
    pub fn spare_memory(&self) -> u64 {
        u64::from(self.spare_memory_mb.unwrap_or(512)) * 1024 * 1024
    }
}
