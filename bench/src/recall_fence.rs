//! A project's threads over a long history (issue 26): what a session's fence reads at every
//! call that needs its projects' threads (`recall.search` in every prompt's hook,
//! `threads.list` ...), asked of the recall benchmark's vyred with its whole corpus read, beside
//! what the same answer cost when it was made from every session (`recall.sessions {}`).

use std::path::Path;
use std::time::Instant;

use serde_json::json;
use vyre::surfaces::client::Client;

use crate::recall_corpus::Corpus;
use crate::report::{Report, Val};
use crate::sessions::percentile;

/// Calls timed each way.
const CALLS: usize = 30;

pub struct Fence {
    /// `projects.threads` of a project holding one of the corpus's folders, ms, sorted.
    project: Vec<f64>,
    /// `recall.sessions {}`: every session, ms, sorted.
    every: Vec<f64>,
    /// The project's threads, and the sessions in all.
    members: usize,
    sessions: usize,
}

/// Make a project of the first transcript's folder (its home a new folder in `dir`, the
/// corpus's folder a workspace: it need not exist here) and time both reads, alternating.
pub async fn measure(client: &Client, corpus: &Corpus, dir: &Path) -> Result<Fence, String> {
    let folder = &corpus.transcripts.first().ok_or("the corpus is empty")?.cwd;
    let home = dir.join("fence-project");
    std::fs::create_dir_all(&home).map_err(|e| format!("cannot create {}: {e}", home.display()))?;
    client
        .call(
            "projects.create",
            &json!({ "name": "bench-fence", "home": home, "workspaces": [folder] }),
        )
        .await
        .map_err(|e| format!("projects.create failed: {e}"))?;
    let (mut project, mut every) = (Vec::new(), Vec::new());
    let (mut members, mut sessions) = (0, 0);
    for _ in 0..CALLS {
        let start = Instant::now();
        let got = client
            .call("projects.threads", &json!({ "project": "bench-fence" }))
            .await
            .map_err(|e| format!("projects.threads failed: {e}"))?;
        project.push(start.elapsed().as_secs_f64() * 1000.0);
        members = got.as_array().map_or(0, Vec::len);
        let start = Instant::now();
        let got = client
            .call("recall.sessions", &json!({}))
            .await
            .map_err(|e| format!("recall.sessions failed: {e}"))?;
        every.push(start.elapsed().as_secs_f64() * 1000.0);
        sessions = got.as_array().map_or(0, Vec::len);
    }
    let expected = corpus
        .transcripts
        .iter()
        .filter(|t| &t.cwd == folder)
        .count();
    if members != expected {
        return Err(format!(
            "projects.threads found {members} threads where the corpus has {expected} in {folder}"
        ));
    }
    project.sort_by(f64::total_cmp);
    every.sort_by(f64::total_cmp);
    Ok(Fence {
        project,
        every,
        members,
        sessions,
    })
}

pub fn rows(report: &mut Report, f: &Fence) {
    report.row(
        "recall.project_threads_p50_ms",
        &format!(
            "a project's threads ({} of {} sessions), as a session's fence reads them, p50 (ms)",
            f.members, f.sessions
        ),
        Val::Num(percentile(&f.project, 0.5), 2),
        Val::Missing("-".into()),
        "< 5, whatever the history",
    );
    report.row(
        "recall.every_session_p50_ms",
        "  every session (recall.sessions {}), what that read before, p50 (ms)",
        Val::Num(percentile(&f.every, 0.5), 2),
        Val::Missing("-".into()),
        "",
    );
    report.note(format!(
        "recall fence: a project whose workspace is one of the corpus's folders; {CALLS} calls each of projects.threads (what a session's fence asks per project at every call that needs its threads) and recall.sessions {{}} (every session: what each of those calls read before issue 26's fix), alternating, over the socket, timed from the call to the parsed answer"
    ));
}
