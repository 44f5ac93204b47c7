//! Tools: defined once with typed input and output, served on every surface.
//!
//! A tool is registered by its module through [`crate::kernel::module::Ctx::tool`]. Its input and output
//! are serde types whose JSON schemas come from schemars, so the schema a surface shows and the
//! validation a call gets are the same thing. [`Registry::call`] is the one path every call takes,
//! from HTTP, the socket, the CLI or another module: it finds the tool, checks the module is
//! healthy, applies the Rules (PERSON_ONLY, and what sessions may call: [`fence`]), and runs
//! the handler in its own task so that a panic disables the module instead of the daemon.
//!
//! Every call is bounded by its caller: when the caller goes away (an HTTP client disconnects,
//! an outer call is cancelled) its handler is aborted, and when vyred stops every call in
//! flight ends with `stopping`. A tool whose work must not be cut in the middle (it changes
//! state in several steps: launching a session, re-sealing the vault) is registered with
//! [`crate::kernel::module::ToolDef::finishes`] and runs to its end once started; shutdown waits for it.

mod caller;
mod error;
pub mod fence;
pub mod input;
pub mod shape;

pub use caller::Caller;
pub use error::{ErrorKind, ToolError};
pub use fence::{Fence, ForSessions, Need, Reach, Scope, Target};
pub use input::InputCheck;

/// The input of a tool that takes none: `{}`, and nothing else (an unknown field is refused).
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoInput {}

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, RwLock};

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::kernel::module::Health;

/// What a surface needs to know about a tool.
#[derive(Debug, Clone, Serialize)]
pub struct ToolSpec {
    /// `<module>.<tool>`, e.g. `system.status`.
    pub name: String,
    pub module: String,
    pub description: String,
    /// Only a verified person may call it (never a session, agent or module).
    pub person_only: bool,
    /// Whether sessions may call it, and on what (a tool that says nothing: never).
    pub for_sessions: ForSessions,
    /// Offered to a session's model as one of its tools (in-process MCP, Codex's namespace,
    /// `vyre mcp`). False for Vyre's plumbing, which a session's processes call on its socket
    /// (its hooks, the `vyre` CLI) but its model has no use for.
    pub for_models: bool,
    /// Offered as `vyre <module> <tool>`.
    pub cli: bool,
    /// A browser still in the onboarding may call it (and sees it listed); no other tool is
    /// served to one (`403 onboarding_only`).
    pub onboarding: bool,
    pub input_schema: SchemaText,
    pub output_schema: SchemaText,
}

/// A JSON Schema kept as its compact text: what the listing, the OpenAPI document and a
/// session's tool list send. A tree of `Value`s costs several times the text's size, and a
/// vyred holds ~330 tools' input and output schemas for its whole life while walking them only
/// when a document is made; the input check keeps its own tree of the rules alone.
pub type SchemaText = Box<serde_json::value::RawValue>;

/// `schema` as [`SchemaText`].
pub fn schema_text(schema: &Value) -> SchemaText {
    serde_json::value::to_raw_value(schema).expect("a Value serializes")
}

impl ToolSpec {
    /// The input schema as a tree, for what walks it (OpenAPI, a session's tool list).
    pub fn input_tree(&self) -> Value {
        tree(&self.input_schema)
    }

    /// The output schema as a tree.
    pub fn output_tree(&self) -> Value {
        tree(&self.output_schema)
    }
}

fn tree(text: &SchemaText) -> Value {
    serde_json::from_str(text.get()).expect("schema text is JSON")
}

/// What a handler knows about the call beyond its input.
#[derive(Clone)]
pub struct CallCx {
    pub caller: Caller,
    fence: Option<Arc<dyn Fence>>,
}

impl std::fmt::Debug for CallCx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallCx")
            .field("caller", &self.caller)
            .finish()
    }
}

impl CallCx {
    /// A call by `caller`, with no Fence: a session's scope is then nothing.
    pub fn new(caller: Caller) -> CallCx {
        CallCx {
            caller,
            fence: None,
        }
    }

    /// What the caller may act on and see, computed as far as `reach`: everything for a person
    /// or a module, the Fence's answer for a session (nothing when there is no Fence). A handler
    /// that lists, searches or starts something fences it by this.
    pub async fn scope(&self, reach: Reach) -> Result<Scope, ToolError> {
        match (&self.caller, &self.fence) {
            (Caller::Session { .. }, Some(fence)) => fence.scope(&self.caller, reach).await,
            (Caller::Session { .. }, None) => Ok(Scope::nothing()),
            _ => Ok(Scope::everything()),
        }
    }
}

pub type ToolFuture = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send>>;

/// A tool's implementation with its types erased.
pub trait Handler: Send + Sync + 'static {
    fn call(&self, input: Value, cx: CallCx) -> ToolFuture;
}

struct TypedHandler<F, I, O> {
    f: F,
    /// The published input schema, compiled at the first call: every call's input is checked
    /// against it first.
    check: input::LazyCheck,
    _types: std::marker::PhantomData<fn(I) -> O>,
}

impl<F, Fut, I, O> Handler for TypedHandler<F, I, O>
where
    F: Fn(I, CallCx) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    I: DeserializeOwned + 'static,
    O: Serialize + 'static,
{
    fn call(&self, mut input: Value, cx: CallCx) -> ToolFuture {
        let refuse = |why: String| Box::pin(std::future::ready(Err(ToolError::invalid(why))));
        // The schema first (it names the field and the rule), then serde, which reads what the
        // schema let through (and refuses what no schema keyword says, such as a float where a
        // whole number goes).
        if let Err(why) = self.check.check(&mut input) {
            return refuse(why);
        }
        let input: I = match serde_json::from_value(input) {
            Ok(input) => input,
            Err(e) => return refuse(format!("the input does not fit this tool's schema: {e}")),
        };
        let fut = (self.f)(input, cx);
        Box::pin(async move {
            let out = fut.await?;
            serde_json::to_value(out).map_err(ToolError::internal)
        })
    }
}

/// The schemas of `I` and `O`, and a handler that checks input against the published schema of
/// `I` ([`InputCheck`]) and then deserializes it into `I`.
///
/// Panics when the schema of `I` holds a rule the input layer cannot check (a keyword it does
/// not know, a pattern that does not parse): a defect of the type, found when it registers.
pub fn typed<I, O, F, Fut>(f: F) -> (Value, Value, Arc<dyn Handler>)
where
    F: Fn(I, CallCx) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    I: DeserializeOwned + JsonSchema + 'static,
    O: Serialize + JsonSchema + 'static,
{
    let input = input::schema_of::<I>();
    // An output is read as it is written: a field that is always sent (an `Option` as `null`
    // included) is required, which the default, a reader's contract, would leave optional.
    let output = serde_json::to_value(
        schemars::generate::SchemaSettings::default()
            .for_serialize()
            .into_generator()
            .into_root_schema_for::<O>(),
    )
    .expect("schema serializes");
    InputCheck::validate(&input).unwrap_or_else(|e| {
        panic!(
            "the input schema of {} cannot be checked: {e}",
            std::any::type_name::<I>()
        )
    });
    let handler = Arc::new(TypedHandler {
        f,
        check: input::LazyCheck::new(input::schema_of::<I>),
        _types: std::marker::PhantomData,
    });
    (input, output, handler)
}

/// `module.tool` with lowercase words; the tool part may hold `.`, `-` and `_`.
pub fn valid_name(name: &str) -> bool {
    let Some((module, tool)) = name.split_once('.') else {
        return false;
    };
    crate::kernel::module::valid_module_name(module)
        && !tool.is_empty()
        && name.len() <= 96
        && tool.starts_with(|c: char| c.is_ascii_lowercase())
        && tool
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '-' | '_'))
        && !tool.ends_with(['.', '-'])
}

struct Entry {
    spec: Arc<ToolSpec>,
    handler: Arc<dyn Handler>,
    health: Health,
    /// Runs to its end once started: neither its caller going away nor a stop cuts it.
    finishes: bool,
}

/// Every registered tool. Cloneable; all clones share the same table.
#[derive(Clone, Default)]
pub struct Registry {
    // std RwLock: lookups are short and never held across an await.
    tools: Arc<RwLock<BTreeMap<String, Entry>>>,
    // std RwLock: set once by the sessions layer at its start, read on each session's call.
    fence: Arc<RwLock<Option<Arc<dyn Fence>>>>,
    tasks: TaskTracker,
    /// Cancelled when vyred stops: calls in flight end with `stopping`.
    stop: CancellationToken,
    /// The tools a paired Vyre may call here (`link.allow`).
    federated: Arc<[String]>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry whose calls in flight end when `stop` is cancelled (vyred's shutdown).
    pub fn stopped_by(stop: CancellationToken) -> Self {
        Registry {
            stop,
            ..Self::default()
        }
    }

    /// This registry, serving a paired Vyre only the tools `allow` names (`link.allow`).
    pub fn federating(mut self, allow: Vec<String>) -> Self {
        self.federated = allow.into();
        self
    }

    pub(crate) fn insert(
        &self,
        spec: ToolSpec,
        handler: Arc<dyn Handler>,
        health: Health,
        finishes: bool,
    ) {
        let name = spec.name.clone();
        let entry = Entry {
            spec: Arc::new(spec),
            handler,
            health,
            finishes,
        };
        self.tools.write().expect("registry").insert(name, entry);
    }

    /// The sessions layer's Fence (once; a second is ignored).
    pub(crate) fn set_fence(&self, fence: Arc<dyn Fence>) {
        let mut slot = self.fence.write().expect("fence");
        if slot.is_none() {
            *slot = Some(fence);
        }
    }

    /// The Fence, once the sessions layer provided it.
    pub fn fence(&self) -> Option<Arc<dyn Fence>> {
        self.fence.read().expect("fence").clone()
    }

    /// The scope of `caller`, as [`CallCx::scope`] gives it to handlers (what a session's
    /// event stream is fenced by).
    pub async fn scope(&self, caller: &Caller, reach: Reach) -> Result<Scope, ToolError> {
        CallCx {
            caller: caller.clone(),
            fence: self.fence(),
        }
        .scope(reach)
        .await
    }

    /// The specs of the tools `caller` may call (what `/v1/tools` and OpenAPI list).
    pub fn specs_for(&self, caller: &Caller) -> Vec<Arc<ToolSpec>> {
        self.specs()
            .into_iter()
            .filter(|spec| crate::kernel::rules::may_call(spec, caller, &self.federated))
            .collect()
    }

    pub fn specs(&self) -> Vec<Arc<ToolSpec>> {
        self.tools
            .read()
            .expect("registry")
            .values()
            .map(|e| e.spec.clone())
            .collect()
    }

    pub fn spec(&self, name: &str) -> Option<Arc<ToolSpec>> {
        self.tools
            .read()
            .expect("registry")
            .get(name)
            .map(|e| e.spec.clone())
    }

    /// Call a tool: the one path every surface and module takes.
    pub async fn call(&self, name: &str, input: Value, caller: Caller) -> Result<Value, ToolError> {
        let (spec, handler, health, finishes) = {
            let tools = self.tools.read().expect("registry");
            let Some(entry) = tools.get(name) else {
                return Err(ToolError::not_found(
                    "unknown_tool",
                    format!(
                        "there is no tool named {:?}; GET /v1/tools lists them",
                        truncate(name, 96)
                    ),
                ));
            };
            (
                entry.spec.clone(),
                entry.handler.clone(),
                entry.health.clone(),
                entry.finishes,
            )
        };
        if let Some(reason) = health.disabled_reason() {
            return Err(ToolError::new(
                ErrorKind::Unavailable,
                "module_disabled",
                format!("module {} is disabled: {reason}", spec.module),
            ));
        }
        // What a surface asked for, not the tools a tool is made of (those run inside one).
        let asked = FINISHING.try_with(|_| ()).is_err();
        if asked {
            // First: a tool a paired Vyre may not call here is not there for it at all.
            crate::kernel::rules::check_federated(&spec, &caller, &self.federated)?;
        }
        crate::kernel::rules::check_call(&spec, &caller)?;
        if asked {
            crate::kernel::rules::check_onboarding(&spec, &caller)?;
        }
        let fence = self.fence();
        if let Caller::Session { .. } = caller {
            fence::check(fence.as_deref(), &caller, &spec.for_sessions, &input).await?;
        }
        if self.tasks.is_closed() {
            return Err(ToolError::new(
                ErrorKind::Unavailable,
                "stopping",
                "vyred is shutting down",
            ));
        }
        // Its own task, so a panic is caught and disables the module, not vyred. The task is
        // aborted when this future is dropped (the caller went away) and ends with `stopping`
        // when vyred stops, unless the tool finishes once started; so do the calls such a tool
        // makes, or a stop could cut it in the middle through one of them.
        let finishes = finishes || FINISHING.try_with(|f| *f).unwrap_or(false);
        let work = FINISHING.scope(finishes, handler.call(input, CallCx { caller, fence }));
        let task = if finishes {
            self.tasks.spawn(work)
        } else {
            let stop = self.stop.clone();
            self.tasks.spawn(async move {
                tokio::select! {
                    // The work first: a call that is done as vyred stops keeps its answer.
                    biased;
                    done = work => done,
                    () = stop.cancelled() => Err(ToolError::new(
                        ErrorKind::Unavailable,
                        "stopping",
                        "vyred is shutting down; this call was cancelled",
                    )),
                }
            })
        };
        let _abort = (!finishes).then(|| AbortOnDrop(task.abort_handle()));
        match task.await {
            Ok(result) => result,
            Err(e) if e.is_panic() => {
                let why = panic_message(e.into_panic());
                health.disable(format!("tool {} panicked: {why}", spec.name));
                tracing::error!(tool = %spec.name, panic = %why, "a tool panicked; its module is disabled");
                Err(ToolError::internal(format!(
                    "tool {} panicked: {why}",
                    spec.name
                )))
            }
            Err(e) => Err(ToolError::internal(e)),
        }
    }

    /// Refuse new calls, end those in flight (but the ones that finish once started), and wait
    /// for them.
    pub async fn drain(&self) {
        self.tasks.close();
        self.stop.cancel();
        self.tasks.wait().await;
    }
}

tokio::task_local! {
    /// Set while a tool runs, so the calls it makes know they are inside one: true when it
    /// finishes once started (then the calls it makes finish too).
    static FINISHING: bool;
}

/// Aborts a call's task when the call's future is dropped before it ended.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The text a panic carried, when it was a string.
pub fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests;
