//! `cargo run --release -p vyre-bench [-- --quick] [--only idle|events|start|sessions|acp|codex|first-words|resume|recall|embed|hook|changes|peer|link|network]`
//!
//! Runs vyred's benchmarks (idle cost, event throughput and delivery, cold start, sessions,
//! resumes, recall's index and search, the link's idle cost, the network's idle cost),
//! prints each figure beside its reference and its target, and appends the figures with the
//! machine and the commit as one JSON line to `bench/results/kernel.jsonl`. Figures are
//! reported, never judged: the exit code is non-zero only when a benchmark could not run (vyred
//! failed to start).

mod acp;
mod changes;
mod codex;
mod embed;
mod embed_idle;
mod embed_large;
mod embed_quality;
mod events;
mod events_subscribers;
mod first_words;
mod hook;
mod idle;
mod inproc;
mod link;
mod network;
mod peer;
mod procfs;
mod recall;
mod recall_corpus;
mod recall_fence;
mod report;
mod resume;
mod resume_history;
mod resume_latency;
mod sessions;
mod sessions_idle;
mod sessions_latency;
mod sessions_many;
mod spawn;
mod start;
mod startup_order;

// The integration tests' fakes, shared as they are: the Messages API and a provider.
use vyre_fake_api as fake_api;
#[path = "../../tests/it/fake_provider.rs"]
mod fake_provider;

use std::process::ExitCode;

use report::Report;

const USAGE: &str =
    "usage: vyre-bench [--quick] [--only idle|events|start|sessions|acp|codex|first-words|resume|recall|embed|hook|changes|peer|link|network]

  --quick   shorter runs for a smoke test (idle 10 s instead of 60 s, fewer events and turns,
            a tenth of the recall corpus)
  --only    run one benchmark

vyre-bench --startup-order [PATH] writes daemon/startup.ld (or PATH) from a run under valgrind
Needs the release daemon: cargo build --release -p vyre";

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Bench {
    Idle,
    Events,
    Start,
    Sessions,
    Acp,
    Codex,
    FirstWords,
    Resume,
    Recall,
    Embed,
    Hook,
    Changes,
    Peer,
    Link,
    Network,
}

impl Bench {
    fn name(self) -> &'static str {
        match self {
            Bench::Idle => "idle",
            Bench::Events => "events",
            Bench::Start => "start",
            Bench::Sessions => "sessions",
            Bench::Acp => "acp",
            Bench::Codex => "codex",
            Bench::FirstWords => "first-words",
            Bench::Resume => "resume",
            Bench::Recall => "recall",
            Bench::Embed => "embed",
            Bench::Hook => "hook",
            Bench::Changes => "changes",
            Bench::Peer => "peer",
            Bench::Link => "link",
            Bench::Network => "network",
        }
    }
}

pub struct Opts {
    pub quick: bool,
    pub only: Option<Bench>,
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Opts, String> {
    let mut opts = Opts {
        quick: false,
        only: None,
    };
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let only = match arg.as_str() {
            "--quick" => {
                opts.quick = true;
                continue;
            }
            "--only" => args.next().ok_or(
                "--only needs idle, events, start, sessions, acp, codex, first-words, resume, recall, embed, hook, changes, peer, link or network",
            )?,
            other => match other.strip_prefix("--only=") {
                Some(v) => v.to_string(),
                None if other == "-h" || other == "--help" => return Err(String::new()),
                None => return Err(format!("unknown argument {other:?}")),
            },
        };
        opts.only = Some(match only.as_str() {
            "idle" => Bench::Idle,
            "events" => Bench::Events,
            "start" => Bench::Start,
            "sessions" => Bench::Sessions,
            "acp" => Bench::Acp,
            "codex" => Bench::Codex,
            "first-words" => Bench::FirstWords,
            "resume" => Bench::Resume,
            "recall" => Bench::Recall,
            "embed" => Bench::Embed,
            "hook" => Bench::Hook,
            "changes" => Bench::Changes,
            "peer" => Bench::Peer,
            "link" => Bench::Link,
            "network" => Bench::Network,
            v => {
                return Err(format!(
                    "--only takes idle, events, start, sessions, acp, codex, first-words, resume, recall, embed, hook, changes, peer, link or network, not {v:?}"
                ));
            }
        });
    }
    Ok(opts)
}

#[tokio::main]
async fn main() -> ExitCode {
    // The events benchmark runs its subscribers as this binary in a process of their own.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--subscribe") {
        return match events_subscribers::child(&args[1..]).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("vyre-bench --subscribe: {e}");
                ExitCode::FAILURE
            }
        };
    }
    // Not a benchmark: writes the linker script that orders a release build's start-up code.
    if args.first().map(String::as_str) == Some("--startup-order") {
        let out = args
            .get(1)
            .map(std::path::PathBuf::from)
            .unwrap_or_else(startup_order::default_out);
        return match startup_order::run(&out).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("vyre-bench --startup-order: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let opts = match parse_args(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("vyre-bench: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if cfg!(debug_assertions) {
        eprintln!(
            "vyre-bench: this is a debug build; the in-process figures (events) are not representative, run with --release"
        );
    }
    let machine = procfs::machine();
    eprintln!(
        "vyre-bench{}: {} ({} cores), kernel {}",
        if opts.quick { " --quick" } else { "" },
        machine.cpu,
        machine.cores,
        machine.kernel
    );

    let mut report = Report::default();
    let mut failed = None;
    for bench in [
        Bench::Idle,
        Bench::Events,
        Bench::Start,
        Bench::Sessions,
        Bench::Acp,
        Bench::Codex,
        Bench::FirstWords,
        Bench::Resume,
        Bench::Recall,
        Bench::Embed,
        Bench::Hook,
        Bench::Changes,
        Bench::Peer,
        Bench::Link,
        Bench::Network,
    ] {
        if opts.only.is_some_and(|o| o != bench) {
            continue;
        }
        let result = match bench {
            Bench::Idle => idle::run(&opts, &mut report).await,
            Bench::Events => events::run(&opts, &mut report).await,
            Bench::Start => start::run(&opts, &mut report).await,
            Bench::Sessions => sessions::run(&opts, &mut report).await,
            Bench::Acp => acp::run(&opts, &mut report).await,
            Bench::Codex => codex::run(&opts, &mut report).await,
            Bench::FirstWords => resume::first_words(&opts, &mut report).await,
            Bench::Resume => resume::run(&opts, &mut report).await,
            Bench::Recall => recall::run(&opts, &mut report).await,
            Bench::Embed => embed::run(&opts, &mut report).await,
            Bench::Hook => hook::run(&opts, &mut report).await,
            Bench::Changes => changes::run(&opts, &mut report).await,
            Bench::Peer => peer::run(&opts, &mut report).await,
            Bench::Link => link::run(&opts, &mut report).await,
            Bench::Network => network::run(&opts, &mut report).await,
        };
        if let Err(e) = result {
            failed = Some(format!("{} benchmark failed: {e}", bench.name()));
            break;
        }
    }

    report.note(format!(
        "machine: {}, {} cores, kernel {}{}",
        machine.cpu,
        machine.cores,
        machine.kernel,
        if opts.quick {
            "; --quick run (short windows)"
        } else {
            ""
        }
    ));
    if !report.is_empty() {
        report.print();
    }
    if let Some(e) = failed {
        eprintln!("\nvyre-bench: {e}");
        eprintln!("vyre-bench: nothing appended to the results");
        return ExitCode::FAILURE;
    }
    let line = report.json_line(&machine, opts.quick, opts.only.map(Bench::name));
    match report::append(&line) {
        Ok(path) => {
            println!("\nappended to {}", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("vyre-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Opts, String> {
        parse_args(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_flags() {
        let o = parse(&["--quick", "--only", "events"]).unwrap();
        assert!(o.quick);
        assert!(o.only == Some(Bench::Events));
        assert!(parse(&["--only=start"]).unwrap().only == Some(Bench::Start));
        assert!(parse(&["--only", "sessions"]).unwrap().only == Some(Bench::Sessions));
        assert!(parse(&["--only", "resume"]).unwrap().only == Some(Bench::Resume));
        assert!(parse(&["--quick", "--only=resume"]).unwrap().quick);
        assert!(parse(&["--only", "recall"]).unwrap().only == Some(Bench::Recall));
        assert!(parse(&["--only", "hook"]).unwrap().only == Some(Bench::Hook));
        assert!(parse(&["--only=recall", "--quick"]).unwrap().quick);
        assert!(parse(&["--only", "nope"]).is_err());
        assert!(parse(&["--only"]).is_err());
        assert!(parse(&["--fast"]).is_err());
    }
}
