//! Cold start: spawn the release binary on a fresh home and time it to the first answer of
//! `GET /v1/health` over the socket, polled every millisecond. Same for the Node reference.

use std::time::Duration;

use crate::Opts;
use crate::report::{Report, Val};
use crate::spawn::{self, Kind, Server};

/// A figure taken from sorted times.
type Stat = fn(&[f64]) -> f64;

const POLL: Duration = Duration::from_millis(1);

pub async fn run(opts: &Opts, report: &mut Report) -> Result<(), String> {
    let runs = if opts.quick { 5 } else { 10 };
    let vyred = spawn::vyred()?;
    eprintln!("start: {runs} cold starts of vyred...");
    let ours = starts(&vyred, runs).await?;
    let theirs = match spawn::node() {
        Ok(node) => {
            eprintln!("start: {runs} cold starts of the node reference...");
            starts(&node, runs).await.map_err(|e| {
                report.note(format!("node reference failed: {e}"));
                "failed".to_string()
            })
        }
        Err(why) => {
            report.note(why);
            Err("no node".to_string())
        }
    };
    let stats: [(&str, Stat); 3] = [
        ("min", |t| t[0]),
        ("median", median),
        ("max", |t| t[t.len() - 1]),
    ];
    for (name, at) in stats {
        report.row(
            &format!("start.{name}_ms"),
            &format!("cold start to health, {name} (ms)"),
            Val::Num(at(&ours), 1),
            theirs
                .as_ref()
                .map_or_else(|why| Val::Missing(why.clone()), |t| Val::Num(at(t), 1)),
            "< 50",
        );
    }
    report.note(format!(
        "cold start: {runs} spawns each on a fresh temp home (new database), from spawn to the first /v1/health answer on the socket, polled every {} ms",
        POLL.as_millis()
    ));
    Ok(())
}

/// The middle of sorted times (the mean of the two middle ones for an even count).
fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Spawn-to-health times in milliseconds, sorted.
async fn starts(kind: &Kind, runs: usize) -> Result<Vec<f64>, String> {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let mut server = Server::spawn(kind)?;
        let took = server.wait_healthy(POLL).await;
        let stopped = server.stop().await;
        times.push(took?.as_secs_f64() * 1000.0);
        stopped?;
    }
    times.sort_by(f64::total_cmp);
    Ok(times)
}
