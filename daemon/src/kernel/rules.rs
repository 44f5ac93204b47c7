//! The Rules: the checks every tool call passes before its handler runs (spec section 11).
//!
//! PERSON_ONLY, and sessions refused by default: a tool sessions may call says so
//! ([`ForSessions`]); what it acts on is then checked against the session's own threads by the
//! Fence ([`crate::kernel::tools::fence`]). The security floor's other rules join here as their modules
//! land.

use crate::kernel::tools::{Caller, ForSessions, ToolError, ToolSpec};

pub fn check_call(spec: &ToolSpec, caller: &Caller) -> Result<(), ToolError> {
    if spec.person_only && !caller.is_person() {
        return Err(ToolError::refused(
            "person_only",
            format!(
                "{} can only be called by a person (from the terminal or a paired device), not by {}",
                spec.name,
                caller.label()
            ),
        ));
    }
    if let Caller::Session { .. } = caller
        && spec.for_sessions == ForSessions::No
    {
        return Err(ToolError::refused(
            "not_for_sessions",
            format!(
                "{} is not for sessions: a person calls it (from the terminal, the app or a paired device)",
                spec.name
            ),
        ));
    }
    Ok(())
}

/// A browser still in the onboarding asks for a tool: only one marked for the onboarding. This
/// fences what it asks for itself; the tools such a tool is made of run with the browser's
/// other rights (`ctx.call_as`: the onboarding storing a credential through `vault.put`), as
/// they did when the fence stood at the HTTP door.
pub fn check_onboarding(spec: &ToolSpec, caller: &Caller) -> Result<(), ToolError> {
    if let Caller::Device { kind, .. } = caller
        && kind == crate::kernel::device_tokens::ONBOARDING
        && !spec.onboarding
    {
        return Err(ToolError::refused(
            "onboarding_only",
            "this browser can reach only the onboarding until it is finished",
        ));
    }
    Ok(())
}

/// A paired Vyre asks for a tool: only one `link.allow` names, whoever it vouches for. Like
/// the onboarding's fence, this fences what it asks for itself; the tools such a tool is made
/// of run with its other rights.
pub fn check_federated(
    spec: &ToolSpec,
    caller: &Caller,
    allow: &[String],
) -> Result<(), ToolError> {
    if let Caller::Linked { .. } = caller
        && !federated(&spec.name, allow)
    {
        return Err(ToolError::refused(
            "not_federated",
            format!(
                "{} is not a tool a paired Vyre may call here (link.allow in this machine's config)",
                spec.name
            ),
        ));
    }
    Ok(())
}

/// Whether `allow` names `tool`: exactly, or by its module (`files.*`).
pub fn federated(tool: &str, allow: &[String]) -> bool {
    allow.iter().any(|a| match a.strip_suffix(".*") {
        Some(module) => tool
            .strip_prefix(module)
            .is_some_and(|rest| rest.starts_with('.')),
        None => a == tool,
    })
}

/// Whether `caller` may call the tool at all: what the tool lists show it.
pub fn may_call(spec: &ToolSpec, caller: &Caller, federation: &[String]) -> bool {
    check_call(spec, caller).is_ok()
        && check_onboarding(spec, caller).is_ok()
        && check_federated(spec, caller, federation).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::tools::{Need, Target};

    fn spec(person_only: bool, for_sessions: ForSessions) -> ToolSpec {
        ToolSpec {
            name: "t.tool".into(),
            module: "t".into(),
            description: String::new(),
            person_only,
            for_sessions,
            for_models: true,
            cli: false,
            onboarding: false,
            input_schema: crate::kernel::tools::schema_text(&serde_json::json!({})),
            output_schema: crate::kernel::tools::schema_text(&serde_json::json!({})),
        }
    }

    fn session() -> Caller {
        Caller::Session {
            thread: Some("t1".into()),
            pid: None,
        }
    }

    #[test]
    fn a_browser_in_the_onboarding_reaches_only_the_tools_marked_for_it() {
        let browser = Caller::Device {
            id: "d1".into(),
            name: "a browser".into(),
            kind: crate::kernel::device_tokens::ONBOARDING.into(),
        };
        let plain = spec(false, ForSessions::No);
        let err = check_onboarding(&plain, &browser).unwrap_err();
        assert_eq!(err.code, "onboarding_only");
        assert!(!may_call(&plain, &browser, &[]), "not listed either");
        let marked = ToolSpec {
            onboarding: true,
            ..spec(true, ForSessions::No)
        };
        assert!(check_onboarding(&marked, &browser).is_ok());
        assert!(
            may_call(&marked, &browser, &[]),
            "a person, in the onboarding"
        );
        // The same browser once it is a device of the owner: every tool, as any device.
        let device = Caller::Device {
            id: "d1".into(),
            name: "a browser".into(),
            kind: crate::kernel::device_tokens::BROWSER.into(),
        };
        assert!(may_call(&plain, &device, &[]));
    }

    #[test]
    fn a_tool_that_says_nothing_is_refused_to_sessions_only() {
        let silent = spec(false, ForSessions::default());
        let err = check_call(&silent, &session()).unwrap_err();
        assert_eq!(err.code, "not_for_sessions");
        assert_eq!(err.kind, crate::kernel::tools::ErrorKind::Refused);
        let unknown = Caller::Session {
            thread: None,
            pid: Some(42),
        };
        assert!(check_call(&silent, &unknown).is_err());
        for caller in [
            Caller::Socket {
                uid: 1000,
                pid: None,
            },
            Caller::Device {
                id: "d".into(),
                name: "phone".into(),
                kind: "token".into(),
            },
            Caller::Module { name: "m".into() },
        ] {
            assert!(check_call(&silent, &caller).is_ok(), "{caller:?}");
            assert!(may_call(&silent, &caller, &[]));
        }
        assert!(!may_call(&silent, &session(), &[]));
    }

    #[test]
    fn a_tool_that_says_so_is_for_sessions_and_person_only_wins() {
        for declared in [
            ForSessions::Open,
            ForSessions::Fenced,
            ForSessions::Check {
                field: "thread",
                target: Target::Thread,
                need: Need::Own,
            },
        ] {
            assert!(check_call(&spec(false, declared.clone()), &session()).is_ok());
            let err = check_call(&spec(true, declared), &session()).unwrap_err();
            assert_eq!(err.code, "person_only");
        }
        let module = Caller::Module { name: "m".into() };
        assert_eq!(
            check_call(&spec(true, ForSessions::No), &module)
                .unwrap_err()
                .code,
            "person_only"
        );
    }

    #[test]
    fn a_paired_vyre_calls_only_what_link_allow_names_and_is_a_person_only_when_vouched_for() {
        let allow = vec!["threads.answer".to_string(), "files.*".to_string()];
        let linked = |present: Option<&str>| Caller::Linked {
            id: "d1".into(),
            name: "mac".into(),
            present: present.map(str::to_string),
        };
        let mut answer = spec(true, ForSessions::No);
        answer.name = "threads.answer".into();
        let mut files = spec(false, ForSessions::No);
        files.name = "files.search".into();
        let mut lookalike = spec(false, ForSessions::No);
        lookalike.name = "filesystem.read".into();
        let mut reveal = spec(true, ForSessions::No);
        reveal.name = "vault.put".into();

        assert!(may_call(&files, &linked(None), &allow));
        assert!(!may_call(&lookalike, &linked(None), &allow));
        assert_eq!(
            check_call(&answer, &linked(None)).unwrap_err().code,
            "person_only",
            "the credential alone is no person"
        );
        assert!(may_call(&answer, &linked(Some("socket:501")), &allow));
        let refused = check_federated(&reveal, &linked(Some("socket:501")), &allow).unwrap_err();
        assert_eq!(
            refused.code, "not_federated",
            "a person there is still fenced here"
        );
        assert!(!may_call(&reveal, &linked(Some("socket:501")), &allow));
        // Nobody else is fenced by the list.
        let device = Caller::Device {
            id: "d2".into(),
            name: "phone".into(),
            kind: "token".into(),
        };
        assert!(may_call(&reveal, &device, &[]));
        assert_eq!(linked(Some("socket:501")).label(), "link:d1/socket:501");
    }
}
