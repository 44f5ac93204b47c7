//! `conform()`: the contract every provider must pass (ADR 0030 section 5), run by the tests on
//! the Claude driver (against the fake Messages API) and on a fake provider module.
//!
//! Answers to questions use the Agent SDK's permission-result shape
//! (`{"behavior": "allow" | "deny", ...}`), which the Switchboard sends to every provider.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::kernel::contracts::provider::{Happening, Launch, Provider, ProviderError, Session};

/// What the provider under test is asked to do.
pub struct Script {
    /// A prompt answered with plain text.
    pub hello: String,
    /// A prompt that makes the session ask to run a tool which creates `marker`.
    pub tool: fn(&Path) -> String,
}

const WAIT: Duration = Duration::from_secs(60);

/// A provider's refusal as a failed check says it.
fn said(e: ProviderError) -> String {
    format!("the provider refused: {e}")
}

async fn next(session: &mut Box<dyn Session>) -> Result<Happening, String> {
    loop {
        let h = tokio::time::timeout(WAIT, session.next())
            .await
            .map_err(|_| "the session said nothing for 60 s".to_string())?
            .ok_or_else(|| "the session's process ended".to_string())?;
        // A host that checks nothing before a tool runs lets it go on (the Gate is vyred's).
        if let Happening::Checking { request, .. } | Happening::Ending { request, .. } = &h {
            session
                .answer(request, json!({}))
                .map_err(|e| format!("cannot let a checked call or turn go on: {e}"))?;
            continue;
        }
        return Ok(h);
    }
}

/// Happenings until the turn finishes; fails on a question unless `answer` handles it.
async fn until_finished(
    session: &mut Box<dyn Session>,
    mut on_ask: impl FnMut(
        &Box<dyn Session>,
        &crate::kernel::contracts::provider::Question,
    ) -> Result<(), String>,
) -> Result<Vec<Happening>, String> {
    let mut seen = Vec::new();
    loop {
        let h = next(session).await?;
        if let Happening::Asked(q) = &h {
            on_ask(session, q)?;
        }
        let done = matches!(h, Happening::Finished { .. });
        seen.push(h);
        if done {
            return Ok(seen);
        }
    }
}

fn group_alive(pgid: i32) -> bool {
    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), None).is_ok()
}

/// Run the contract; returns the checks that passed, or the first that failed.
pub async fn conform(
    provider: &dyn Provider,
    launch: impl Fn(bool) -> Launch,
    work: &Path,
    script: &Script,
) -> Result<Vec<&'static str>, String> {
    let mut passed = Vec::new();
    let mut session = provider.start(launch(false)).await.map_err(said)?;
    let ids = session.ids();
    if ids.pid <= 0 || ids.pgid <= 0 || ids.sid <= 0 || !group_alive(ids.pgid) {
        return Err(format!(
            "spawn must report a live pid, group and session before the first message: {ids:?}"
        ));
    }
    passed.push("reports pid, process group and session at spawn");

    session
        .send(
            json!([{ "type": "text", "text": script.hello }]),
            &crate::kernel::ids::uuid_v4(),
            None,
        )
        .map_err(said)?;
    let seen = until_finished(&mut session, |_, q| {
        Err(format!("a plain prompt asked about {}", q.tool))
    })
    .await?;
    let streamed = seen
        .iter()
        .any(|h| matches!(h, Happening::Text { delta: Some(_), .. }));
    if !streamed || !matches!(seen.last(), Some(Happening::Finished { ok: true, .. })) {
        return Err(format!("a turn must stream text and finish ok: {seen:?}"));
    }
    passed.push("a turn streams and finishes");

    let marker = work.join("conform-allowed.txt");
    session
        .send(
            json!([{ "type": "text", "text": (script.tool)(&marker) }]),
            &crate::kernel::ids::uuid_v4(),
            None,
        )
        .map_err(said)?;
    let mut asked = 0;
    until_finished(&mut session, |s, q| {
        asked += 1;
        s.answer(
            &q.request,
            json!({ "behavior": "allow", "updatedInput": q.input }),
        )
        .map_err(said)
    })
    .await?;
    if asked != 1 || !marker.exists() {
        return Err(format!(
            "a question must reach the tool once allowed (asked {asked} times, ran: {})",
            marker.exists()
        ));
    }
    passed.push("a question reaches the tool once allowed");

    let second = work.join("conform-interrupted.txt");
    session
        .send(
            json!([{ "type": "text", "text": (script.tool)(&second) }]),
            &crate::kernel::ids::uuid_v4(),
            None,
        )
        .map_err(said)?;
    loop {
        if let Happening::Asked(_) = next(&mut session).await? {
            break;
        }
    }
    session.interrupt().await.map_err(said)?;
    let mut withdrawn = false;
    loop {
        match next(&mut session).await? {
            Happening::Withdrawn { .. } => withdrawn = true,
            Happening::Finished { .. } => break,
            _ => {}
        }
    }
    if !withdrawn || second.exists() {
        return Err(format!(
            "an interrupt must withdraw the open question (withdrawn: {withdrawn}, ran: {})",
            second.exists()
        ));
    }
    session
        .send(
            json!([{ "type": "text", "text": script.hello }]),
            &crate::kernel::ids::uuid_v4(),
            None,
        )
        .map_err(said)?;
    let seen = until_finished(&mut session, |_, q| Err(format!("asked about {}", q.tool))).await?;
    if !matches!(seen.last(), Some(Happening::Finished { ok: true, .. })) {
        return Err("the session must outlive an interrupt".into());
    }
    passed.push("an interrupt withdraws the question and the session outlives it");

    session.stop(Duration::from_secs(2)).await;
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        !group_alive(ids.pgid)
    });
    if !gone {
        return Err("stop must take the whole process group".into());
    }
    passed.push("stop takes the whole process group");

    let mut resumed = provider.start(launch(true)).await.map_err(said)?;
    resumed
        .send(
            json!([{ "type": "text", "text": script.hello }]),
            &crate::kernel::ids::uuid_v4(),
            None,
        )
        .map_err(said)?;
    let seen = until_finished(&mut resumed, |_, q| Err(format!("asked about {}", q.tool))).await?;
    if !matches!(seen.last(), Some(Happening::Finished { ok: true, .. })) {
        return Err("a resumed session must answer".into());
    }
    resumed.stop(Duration::from_secs(2)).await;
    passed.push("a resume keeps the id and answers");
    Ok(passed)
}
