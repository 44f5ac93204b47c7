//! The peer check (ADR 0014): what judging a socket caller costs. vyred reads the peer once per
//! connection when it accepts it (a pidfd, its pid and user namespaces, its ancestry), then
//! judges each request against the live sessions. Two figures:
//!
//! - the read alone, on connections this process makes to a listener of its own, beside the
//!   `SO_PEERCRED` read that was all vyred did before (the reference);
//! - a whole request over the socket to an in-process vyred, a new connection each:
//!   `system.modules` (the caller resolved and judged) beside `/v1/health` (no caller), both of
//!   which pay the read at accept.

use std::time::Instant;

use vyre::kernel::peer::{Judge, PeerFacts, SessionProcesses, judge};

use crate::Opts;
use crate::inproc::InProcess;
use crate::report::{Against, Report, Val};

pub async fn run(opts: &Opts, report: &mut Report) -> Result<(), String> {
    let runs = if opts.quick { 500 } else { 5000 };
    let dir = crate::spawn::TempDir::new("peer")?;
    let path = dir.path().join("peer.sock");
    let listener = tokio::net::UnixListener::bind(&path).map_err(|e| e.to_string())?;
    // A few live sessions, so that the judgment looks up tables that are not empty.
    let sessions = SessionProcesses::default();
    for n in 0..8 {
        sessions.register(&format!("thread-{n}"), 900_000 + n, 900_000 + n);
        sessions.register_namespace(&format!("thread-{n}"), 4_000_000_000 + n as u64);
    }
    let own_uid = nix::unistd::geteuid().as_raw();
    let (mut facts_us, mut cred_us) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    eprintln!("peer: {runs} connections, the peer read beside SO_PEERCRED alone...");
    for _ in 0..runs {
        let client = tokio::net::UnixStream::connect(&path)
            .await
            .map_err(|e| e.to_string())?;
        let (accepted, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let start = Instant::now();
        let cred = accepted.peer_cred().map_err(|e| e.to_string())?;
        cred_us.push(start.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(cred);
        let start = Instant::now();
        let facts = PeerFacts::of(&accepted);
        let verdict = judge(
            &facts,
            Judge {
                sessions: &sessions,
                own_uid,
                sessions_uid: None,
            },
        );
        facts_us.push(start.elapsed().as_secs_f64() * 1e6);
        if !matches!(verdict, vyre::kernel::peer::Verdict::Person { .. }) {
            return Err(format!("this process should be a person: {verdict:?}"));
        }
        drop(client);
    }
    for (stat, p) in [("p50", 0.50), ("p99", 0.99)] {
        report.row_against(
            Against::PeerCred,
            &format!("peer.check_{stat}_us"),
            &format!("peer read and judgment per connection, {stat} (µs)"),
            Val::Num(pct(&mut facts_us, p), 1),
            Val::Num(pct(&mut cred_us, p), 1),
            "",
        );
    }

    let home = vyre::kernel::paths::VyreHome::at(dir.path().join("vyre"));
    let vyred = InProcess::start(home, vec![]).await?;
    let client = vyred.client();
    let requests = if opts.quick { 200 } else { 2000 };
    eprintln!("peer: {requests} requests, system.modules beside /v1/health...");
    let (mut judged, mut health) = (Vec::new(), Vec::new());
    for _ in 0..requests {
        let start = Instant::now();
        client
            .call("system.modules", &serde_json::json!({}))
            .await
            .map_err(|e| e.to_string())?;
        judged.push(start.elapsed().as_secs_f64() * 1000.0);
        let start = Instant::now();
        client.get("/v1/health").await.map_err(|e| e.to_string())?;
        health.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    vyred.stop().await?;
    for (stat, p) in [("p50", 0.50), ("p99", 0.99)] {
        report.row_against(
            Against::PeerCred,
            &format!("peer.request_{stat}_ms"),
            &format!("a judged tool call over the socket, {stat} (ms; reference: /v1/health)"),
            Val::Num(pct(&mut judged, p), 3),
            Val::Num(pct(&mut health, p), 3),
            "",
        );
    }
    report.note(format!(
        "peer: {runs} connections to a listener in the bench process, each read with vyred's peer check (a pidfd from SO_PEERPIDFD, the pid and user namespaces from nsfs, the ancestry from /proc, then the judgment against 8 registered sessions) beside SO_PEERCRED alone; then {requests} system.modules calls and as many /v1/health calls to an in-process vyred over its socket, a new connection each (both pay the read at accept; only the tool call resolves and judges a caller)"
    ));
    Ok(())
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i.min(v.len() - 1)]
}
