//! What a session may call, and on what (issue 17: a session acts on its own thread only).
//!
//! Every tool says whether sessions may call it ([`ForSessions`], declared on its `ToolDef`);
//! one that says nothing is refused to every session. A tool that acts on one thing names the
//! input field that holds it, and [`Registry::call`](super::Registry::call) asks the [`Fence`]
//! before the handler runs; a tool that lists or searches fences what it returns by itself,
//! through the caller's [`Scope`]. The Fence is the sessions layer's (the Switchboard knows who
//! started which thread and for which agent); until it is provided, every session is refused.

use std::collections::BTreeSet;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::{Caller, ToolError};

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the id in a tool's input names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// A thread (a session id).
    Thread,
    /// A queued message (`threads_inbox`), which belongs to its thread.
    Queued,
    /// An agent: acting on it is acting on its threads.
    Agent,
    /// A project: seeing it is seeing its threads and history.
    Project,
}

/// What a session must have of the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Need {
    /// Act on it: its own thread, a thread it started, its agent's threads (or a grant).
    Own,
    /// Read it: a thread it owns, or one of the projects it may see.
    See,
}

/// Whether, and how, sessions may call a tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ForSessions {
    /// Refused to every session: what a tool that says nothing gets.
    #[default]
    No,
    /// Carries nothing of any thread, project or person (versions, counts): any session.
    Open,
    /// The input field `field` names a target the session must own or see.
    Check {
        field: &'static str,
        target: Target,
        need: Need,
    },
    /// The handler fences by itself: it filters what it returns through the caller's scope.
    Fenced,
}

impl ForSessions {
    /// Whether a session may call the tool at all (and so see it listed).
    pub fn allows_sessions(&self) -> bool {
        !matches!(self, ForSessions::No)
    }
}

/// How much of a session's scope a caller needs; each reach includes the ones before. A scope
/// computed to a shorter reach answers "no" beyond it (fail closed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reach {
    /// What it acts on: its thread, its agent and grants, the threads it owns.
    Own,
    /// And its folder and the projects it may see.
    Projects,
    /// And the threads of those projects: what lists and searches are narrowed to.
    Threads,
}

/// A cheap test of one thread id, called per event on a session's stream.
pub type ThreadTest = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Which projects a caller may see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Projects {
    All,
    Only(BTreeSet<String>),
}

/// What a caller may act on and read, from what vyred recorded (never from a tool's input).
/// A person's and a module's scope is everything.
#[derive(Clone)]
pub struct Scope {
    everything: bool,
    reach: Reach,
    /// The session's own thread, when vyred knows it.
    thread: Option<String>,
    /// The agent it runs for, when it does.
    agent: Option<String>,
    /// Acts on every thread (an agent's `threads` grant).
    all_threads: bool,
    owns: ThreadTest,
    /// Reads every thread's history (an agent's `recall` or `threads` grant).
    sees_all: bool,
    projects: Projects,
    /// The threads it may read that vyred can name: those it owns and its projects' (computed
    /// by [`Fence::scope`], not by [`Fence::ownership`]).
    seen: Arc<BTreeSet<String>>,
    /// The folder it works in, as vyred knows it.
    folder: Option<PathBuf>,
    /// The Claude Code process it runs under, as vyred found it from the caller's pid.
    claude: Option<i32>,
}

impl std::fmt::Debug for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("everything", &self.everything)
            .field("thread", &self.thread)
            .field("agent", &self.agent)
            .field("all_threads", &self.all_threads)
            .field("sees_all", &self.sees_all)
            .field("projects", &self.projects)
            .field("seen", &self.seen.len())
            .finish()
    }
}

/// A session's scope, as the Fence computes it.
pub struct SessionScope {
    /// How far it was computed: `projects` is left empty below [`Reach::Projects`], `seen`
    /// below [`Reach::Threads`].
    pub reach: Reach,
    pub thread: Option<String>,
    pub agent: Option<String>,
    pub all_threads: bool,
    pub owns: ThreadTest,
    pub sees_all: bool,
    pub projects: Projects,
    /// The threads it owns and its projects' threads.
    pub seen: BTreeSet<String>,
    pub folder: Option<PathBuf>,
    pub claude: Option<i32>,
}

impl Scope {
    /// A person's or a module's: everything.
    pub fn everything() -> Scope {
        Scope {
            everything: true,
            reach: Reach::Threads,
            thread: None,
            agent: None,
            all_threads: true,
            owns: Arc::new(|_| true),
            sees_all: true,
            projects: Projects::All,
            seen: Arc::default(),
            folder: None,
            claude: None,
        }
    }

    /// Nothing at all: a session when no Fence is there to say more.
    pub fn nothing() -> Scope {
        Scope {
            everything: false,
            reach: Reach::Threads,
            thread: None,
            agent: None,
            all_threads: false,
            owns: Arc::new(|_| false),
            sees_all: false,
            projects: Projects::Only(BTreeSet::new()),
            seen: Arc::default(),
            folder: None,
            claude: None,
        }
    }

    pub fn of_session(s: SessionScope) -> Scope {
        Scope {
            everything: false,
            reach: s.reach,
            thread: s.thread,
            agent: s.agent,
            all_threads: s.all_threads,
            owns: s.owns,
            sees_all: s.sees_all || s.all_threads,
            projects: if s.sees_all || s.all_threads {
                Projects::All
            } else {
                s.projects
            },
            seen: Arc::new(s.seen),
            folder: s.folder,
            claude: s.claude,
        }
    }

    /// Not fenced at all (a person, a module).
    pub fn is_everything(&self) -> bool {
        self.everything
    }

    /// The session's own thread, when vyred knows it.
    pub fn thread(&self) -> Option<&str> {
        self.thread.as_deref()
    }

    /// The folder the session works in: its thread's, or its Claude Code process's (from
    /// [`Reach::Projects`] on).
    pub fn folder(&self) -> Option<&Path> {
        self.folder.as_deref()
    }

    /// The Claude Code process the session runs under, found by vyred (not claimed).
    pub fn claude(&self) -> Option<i32> {
        self.claude
    }

    /// It may act on `thread`.
    pub fn owns(&self, thread: &str) -> bool {
        self.everything || self.all_threads || (self.owns)(thread)
    }

    /// It may read `thread`: one it owns, or one of its projects'.
    pub fn sees(&self, thread: &str) -> bool {
        debug_assert!(
            self.reach >= Reach::Threads,
            "scope computed to {:?}",
            self.reach
        );
        self.sees_all || self.owns(thread) || self.seen.contains(thread)
    }

    /// Every thread it may read, when that is not every thread: what a search is narrowed to.
    pub fn visible(&self) -> Option<&BTreeSet<String>> {
        debug_assert!(
            self.reach >= Reach::Threads,
            "scope computed to {:?}",
            self.reach
        );
        (!self.sees_all).then_some(&*self.seen)
    }

    /// It may see project `name` (its threads and history).
    pub fn sees_project(&self, name: &str) -> bool {
        debug_assert!(
            self.reach >= Reach::Projects,
            "scope computed to {:?}",
            self.reach
        );
        match &self.projects {
            Projects::All => true,
            Projects::Only(names) => names.contains(name),
        }
    }

    /// The projects it may see, by name; `None` when it sees every one.
    pub fn project_names(&self) -> Option<Vec<String>> {
        match &self.projects {
            Projects::All => None,
            Projects::Only(names) => Some(names.iter().cloned().collect()),
        }
    }

    /// It may see every project (a person, the assistant, an agent granted every thread).
    pub fn sees_every_project(&self) -> bool {
        debug_assert!(
            self.reach >= Reach::Projects,
            "scope computed to {:?}",
            self.reach
        );
        self.projects == Projects::All
    }

    /// It may act for agent `name` (on its threads): it is that agent, or holds the grant.
    pub fn acts_for(&self, agent: &str) -> bool {
        self.everything || self.all_threads || self.agent.as_deref() == Some(agent)
    }

    /// The test its event stream applies to each event's thread.
    pub fn owner_test(&self) -> ThreadTest {
        if self.everything || self.all_threads {
            Arc::new(|_| true)
        } else {
            self.owns.clone()
        }
    }
}

/// The sessions layer's answer to "may this session ...". Provided once, by the module that
/// knows who started which thread (`threads`, through `Ctx::provide_fence`).
pub trait Fence: Send + Sync {
    /// What `caller` (a session) may act on and see now, computed as far as `reach`.
    fn scope<'a>(
        &'a self,
        caller: &'a Caller,
        reach: Reach,
    ) -> BoxFuture<'a, Result<Scope, ToolError>>;

    /// The thread a queued message belongs to, if there is such a message.
    fn thread_of_queued(&self, queued: i64) -> BoxFuture<'_, Result<Option<String>, ToolError>>;
}

/// The refusal for a thread, a queued message or an agent that is not the session's.
pub fn not_your_thread(what: &str) -> ToolError {
    ToolError::refused(
        "not_your_thread",
        format!(
            "{what} is not this session's: a session acts only on its own thread, the threads it started, and its agent's threads"
        ),
    )
}

/// The refusal for a project the session may not see.
pub fn not_your_project(name: &str) -> ToolError {
    ToolError::refused(
        "not_your_project",
        format!(
            "project {name:?} is not this session's: a session sees only the projects it runs in (an agent: those in its list)"
        ),
    )
}

/// The check a [`ForSessions::Check`] tool's input passes before its handler runs, for a
/// session caller. A missing (or null) field passes: the tool then acts on nothing of anyone's
/// (an optional field), and a required one is refused by the tool's schema.
pub async fn check(
    fence: Option<&dyn Fence>,
    caller: &Caller,
    rule: &ForSessions,
    input: &Value,
) -> Result<(), ToolError> {
    let ForSessions::Check {
        field,
        target,
        need,
    } = rule
    else {
        return Ok(());
    };
    let value = match input.get(field) {
        None | Some(Value::Null) => return Ok(()),
        Some(v) => v,
    };
    let described = || format!("{field} {value}");
    let Some(fence) = fence else {
        return Err(match target {
            Target::Project => not_your_project(&value.to_string()),
            _ => not_your_thread(&described()),
        });
    };
    let text = |v: &Value| {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| ToolError::invalid(format!("{field} must be a string")))
    };
    let reach = match (need, target) {
        (Need::Own, Target::Thread | Target::Queued | Target::Agent) => Reach::Own,
        (_, Target::Project) => Reach::Projects,
        _ => Reach::Threads,
    };
    let scope = fence.scope(caller, reach).await?;
    let allowed = match target {
        Target::Thread => {
            let thread = text(value)?;
            match need {
                Need::Own => scope.owns(&thread),
                Need::See => scope.sees(&thread),
            }
        }
        Target::Queued => {
            let queued = value
                .as_i64()
                .ok_or_else(|| ToolError::invalid(format!("{field} must be a whole number")))?;
            match fence.thread_of_queued(queued).await? {
                Some(thread) => match need {
                    Need::Own => scope.owns(&thread),
                    Need::See => scope.sees(&thread),
                },
                None => false,
            }
        }
        Target::Agent => scope.acts_for(&text(value)?),
        Target::Project => {
            let name = text(value)?;
            if !scope.sees_project(&name) {
                return Err(not_your_project(&name));
            }
            true
        }
    };
    if allowed {
        Ok(())
    } else {
        Err(not_your_thread(&described()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A fence that says: the session of thread `mine` owns `mine` and `child`, runs for agent
    /// `scout`, sees project `acme` (whose threads are `sibling`), and queued message 7 is
    /// `child`'s, 8 is `other`'s.
    struct Fixed;

    impl Fence for Fixed {
        fn scope<'a>(
            &'a self,
            caller: &'a Caller,
            _: Reach,
        ) -> BoxFuture<'a, Result<Scope, ToolError>> {
            Box::pin(async move {
                Ok(match caller {
                    Caller::Session {
                        thread: Some(t), ..
                    } if t == "mine" => Scope::of_session(SessionScope {
                        reach: Reach::Threads,
                        thread: Some("mine".into()),
                        agent: Some("scout".into()),
                        all_threads: false,
                        owns: Arc::new(|t| t == "mine" || t == "child"),
                        sees_all: false,
                        projects: Projects::Only(["acme".to_string()].into()),
                        seen: ["sibling".to_string()].into(),
                        folder: None,
                        claude: None,
                    }),
                    _ => Scope::nothing(),
                })
            })
        }
        fn thread_of_queued(
            &self,
            queued: i64,
        ) -> BoxFuture<'_, Result<Option<String>, ToolError>> {
            Box::pin(async move {
                Ok(match queued {
                    7 => Some("child".into()),
                    8 => Some("other".into()),
                    _ => None,
                })
            })
        }
    }

    fn session(thread: Option<&str>) -> Caller {
        Caller::Session {
            thread: thread.map(String::from),
            pid: None,
        }
    }

    fn rule(field: &'static str, target: Target, need: Need) -> ForSessions {
        ForSessions::Check {
            field,
            target,
            need,
        }
    }

    async fn code(caller: &Caller, rule: &ForSessions, input: Value) -> Option<String> {
        check(Some(&Fixed), caller, rule, &input)
            .await
            .err()
            .map(|e| e.code.to_string())
    }

    #[test]
    fn a_tool_that_says_nothing_is_not_for_sessions() {
        assert_eq!(ForSessions::default(), ForSessions::No);
        assert!(!ForSessions::No.allows_sessions());
        assert!(ForSessions::Open.allows_sessions());
        assert!(ForSessions::Fenced.allows_sessions());
        assert!(rule("thread", Target::Thread, Need::Own).allows_sessions());
    }

    #[tokio::test]
    async fn a_session_acts_on_its_own_threads_only() {
        let me = session(Some("mine"));
        let own = rule("thread", Target::Thread, Need::Own);
        assert_eq!(code(&me, &own, json!({ "thread": "mine" })).await, None);
        assert_eq!(code(&me, &own, json!({ "thread": "child" })).await, None);
        for other in ["other", "sibling", ""] {
            assert_eq!(
                code(&me, &own, json!({ "thread": other })).await.as_deref(),
                Some("not_your_thread"),
                "{other}"
            );
        }
        // Seeing is wider: its project's threads too, never another's.
        let see = rule("thread", Target::Thread, Need::See);
        assert_eq!(code(&me, &see, json!({ "thread": "sibling" })).await, None);
        assert_eq!(
            code(&me, &see, json!({ "thread": "other" }))
                .await
                .as_deref(),
            Some("not_your_thread")
        );
        // A thread it does not know, or a session whose thread vyred does not know: refused.
        let unknown = session(None);
        assert_eq!(
            code(&unknown, &own, json!({ "thread": "mine" }))
                .await
                .as_deref(),
            Some("not_your_thread")
        );
        // A wrong type is bad input, not a way around the check.
        assert_eq!(
            code(&me, &own, json!({ "thread": ["other"] }))
                .await
                .as_deref(),
            Some("invalid_input")
        );
    }

    #[tokio::test]
    async fn ids_that_are_not_threads_are_resolved_to_theirs() {
        let me = session(Some("mine"));
        let queued = rule("queued", Target::Queued, Need::Own);
        assert_eq!(code(&me, &queued, json!({ "queued": 7 })).await, None);
        for other in [8, 9] {
            assert_eq!(
                code(&me, &queued, json!({ "queued": other }))
                    .await
                    .as_deref(),
                Some("not_your_thread"),
                "{other}"
            );
        }
        let agent = rule("agent", Target::Agent, Need::Own);
        assert_eq!(code(&me, &agent, json!({ "agent": "scout" })).await, None);
        assert_eq!(
            code(&me, &agent, json!({ "agent": "juno" }))
                .await
                .as_deref(),
            Some("not_your_thread")
        );
        let project = rule("project", Target::Project, Need::See);
        assert_eq!(
            code(&me, &project, json!({ "project": "acme" })).await,
            None
        );
        assert_eq!(
            code(&me, &project, json!({ "project": "other" }))
                .await
                .as_deref(),
            Some("not_your_project")
        );
    }

    #[tokio::test]
    async fn without_a_fence_every_session_is_refused() {
        let me = session(Some("mine"));
        let own = rule("thread", Target::Thread, Need::Own);
        let err = check(None, &me, &own, &json!({ "thread": "mine" }))
            .await
            .unwrap_err();
        assert_eq!(err.code, "not_your_thread");
        // An optional field left out acts on nothing of anyone's.
        assert!(check(None, &me, &own, &json!({})).await.is_ok());
    }

    #[test]
    fn scopes() {
        let all = Scope::everything();
        assert!(all.owns("x") && all.sees("x") && all.sees_project("p") && all.acts_for("a"));
        let none = Scope::nothing();
        assert!(!none.owns("x") && !none.sees("x") && !none.sees_project("p"));
        assert!(!none.acts_for("a") && !(none.owner_test())("x"));
        let granted = Scope::of_session(SessionScope {
            reach: Reach::Threads,
            thread: Some("t".into()),
            agent: Some("juno".into()),
            all_threads: true,
            owns: Arc::new(|t| t == "t"),
            sees_all: false,
            projects: Projects::Only(BTreeSet::new()),
            seen: BTreeSet::new(),
            folder: None,
            claude: None,
        });
        assert!(granted.owns("any") && granted.sees("any") && granted.sees_project("p"));
        assert!(granted.acts_for("scout") && (granted.owner_test())("any"));
        assert!(!granted.is_everything());
    }
}
