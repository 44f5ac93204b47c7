//! Tools: defined once with typed input and output, served on every surface.
//!
//! A tool is registered by its module through [`crate::modules::Ctx::tool`]. Its input and output
//! are serde types whose JSON schemas come from schemars, so the schema a surface shows and the
//! validation a call gets are the same thing. [`Registry::call`] is the one path every call takes,
//! from HTTP, the socket, the CLI or another module: it finds the tool, checks the module is
//! healthy, applies the Rules (PERSON_ONLY, and what sessions may call: [`fence`]), and runs
//! the handler in its own task so that a panic disables the module instead of the daemon.

mod caller;
mod error;
pub mod fence;

pub use caller::Caller;
pub use error::{ErrorKind, ToolError};
pub use fence::{Fence, ForSessions, Need, Reach, Scope, Target};

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, RwLock};

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::task::TaskTracker;

use crate::modules::Health;

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
    /// Offered as `vyre <module> <tool>`.
    pub cli: bool,
    pub input_schema: Value,
    pub output_schema: Value,
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
    /// The input schema says `"type": "object"`, so an array is refused too (serde would read a
    /// struct from one, field by field in order).
    object: bool,
    _types: std::marker::PhantomData<fn(I) -> O>,
}

impl<F, Fut, I, O> Handler for TypedHandler<F, I, O>
where
    F: Fn(I, CallCx) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    I: DeserializeOwned + 'static,
    O: Serialize + 'static,
{
    fn call(&self, input: Value, cx: CallCx) -> ToolFuture {
        if self.object && !input.is_object() {
            return Box::pin(std::future::ready(Err(ToolError::invalid(
                "the input does not fit this tool's schema: it must be a JSON object",
            ))));
        }
        let input: I = match serde_json::from_value(input) {
            Ok(input) => input,
            Err(e) => {
                return Box::pin(std::future::ready(Err(ToolError::invalid(format!(
                    "the input does not fit this tool's schema: {e}"
                )))));
            }
        };
        let fut = (self.f)(input, cx);
        Box::pin(async move {
            let out = fut.await?;
            serde_json::to_value(out).map_err(ToolError::internal)
        })
    }
}

/// The schemas of `I` and `O`, and a handler that validates input by deserializing it into `I`.
pub fn typed<I, O, F, Fut>(f: F) -> (Value, Value, Arc<dyn Handler>)
where
    F: Fn(I, CallCx) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    I: DeserializeOwned + JsonSchema + 'static,
    O: Serialize + JsonSchema + 'static,
{
    let input = serde_json::to_value(schemars::schema_for!(I)).expect("schema serializes");
    let output = serde_json::to_value(schemars::schema_for!(O)).expect("schema serializes");
    let handler = Arc::new(TypedHandler {
        f,
        object: input["type"] == "object",
        _types: std::marker::PhantomData,
    });
    (input, output, handler)
}

/// `module.tool` with lowercase words; the tool part may hold `.`, `-` and `_`.
pub fn valid_name(name: &str) -> bool {
    let Some((module, tool)) = name.split_once('.') else {
        return false;
    };
    crate::modules::valid_module_name(module)
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
}

/// Every registered tool. Cloneable; all clones share the same table.
#[derive(Clone, Default)]
pub struct Registry {
    // std RwLock: lookups are short and never held across an await.
    tools: Arc<RwLock<BTreeMap<String, Entry>>>,
    // std RwLock: set once by the sessions layer at its start, read on each session's call.
    fence: Arc<RwLock<Option<Arc<dyn Fence>>>>,
    tasks: TaskTracker,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn insert(&self, spec: ToolSpec, handler: Arc<dyn Handler>, health: Health) {
        let name = spec.name.clone();
        let entry = Entry {
            spec: Arc::new(spec),
            handler,
            health,
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
            .filter(|spec| crate::rules::may_call(spec, caller))
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
        let (spec, handler, health) = {
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
            )
        };
        if let Some(reason) = health.disabled_reason() {
            return Err(ToolError::new(
                ErrorKind::Unavailable,
                "module_disabled",
                format!("module {} is disabled: {reason}", spec.module),
            ));
        }
        crate::rules::check_call(&spec, &caller)?;
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
        // Its own task: the call finishes even if the client goes away, and a panic is caught.
        let task = self
            .tasks
            .spawn(handler.call(input, CallCx { caller, fence }));
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

    /// Refuse new calls and wait for those in flight to finish.
    pub async fn drain(&self) {
        self.tasks.close();
        self.tasks.wait().await;
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
mod tests {
    use super::*;

    /// Found by the `tool_input` fuzz target: `["t1"]` passed as `{"thread": "t1"}`, input that
    /// breaks the published schema (an object).
    #[tokio::test]
    async fn input_is_an_object_as_the_schema_says() {
        #[derive(serde::Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        struct In {
            thread: String,
        }
        let (schema, _, handler) = typed(|i: In, _| async move { Ok::<_, ToolError>(i.thread) });
        assert_eq!(schema["type"], "object");
        let cx = CallCx::new(Caller::Module { name: "t".into() });
        let ok = handler.call(serde_json::json!({ "thread": "t1" }), cx.clone());
        assert_eq!(ok.await.unwrap(), "t1");
        for bad in [serde_json::json!(["t1"]), serde_json::json!(null)] {
            let err = handler.call(bad.clone(), cx.clone()).await.unwrap_err();
            assert_eq!(err.kind, ErrorKind::InvalidInput, "{bad}");
        }
    }

    #[test]
    fn tool_names() {
        for ok in [
            "system.status",
            "projects.add-threads",
            "vault.pass.create",
            "a1.b_c",
        ] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in [
            "",
            "system",
            ".status",
            "system.",
            "System.status",
            "system.Status",
            "../etc.passwd",
            "system./x",
            "sys tem.status",
            "system.status-",
        ] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
