//! A turn boundary's snapshot (issue 25, ADR 0029): what it costs vyred to know a turn's changes
//! in a 10,000-file repository, the first time (the folder read whole into its shadow store) and
//! at each later turn boundary (nothing changed, or 10 files changed, each with the list of what
//! changed). The reference is `git status --porcelain` on the same repository: what a person,
//! or a tool that shows changes, runs to see them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use vyre::modules::sessions::changes::shadow::Shadow;

use crate::Opts;
use crate::report::{Against, Report, Val};

const DIRS: usize = 100;
const PER_DIR: usize = 100;

fn git(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn repository(root: &Path) -> Result<PathBuf, String> {
    let repo = root.join("repo");
    for d in 0..DIRS {
        let dir = repo.join(format!("src/m{d:03}"));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        for f in 0..PER_DIR {
            let body = format!("// file {d}/{f}\n{}\n", "let x = 1;\n".repeat(80));
            std::fs::write(dir.join(format!("f{f:03}.rs")), body).map_err(|e| e.to_string())?;
        }
    }
    git(&repo, &["init", "-q", "-b", "main"])?;
    git(&repo, &["add", "-A"])?;
    git(&repo, &["commit", "-q", "-m", "bench"])?;
    Ok(repo)
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

fn p50(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub async fn run(opts: &Opts, report: &mut Report) -> Result<(), String> {
    let rounds = if opts.quick { 10 } else { 40 };
    let root = std::env::temp_dir().join(format!("vyre-bench-changes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    eprintln!("changes: a repository of {} files...", DIRS * PER_DIR);
    let repo = repository(&root)?;
    let store = root.join("store");
    let status = |repo: &Path| -> Result<f64, String> {
        let start = Instant::now();
        git(repo, &["status", "--porcelain"])?;
        Ok(ms(start))
    };

    let start = Instant::now();
    let shadow = Shadow::open(&store, &repo).await?;
    let mut before = shadow.snapshot().await?.tree;
    let first = ms(start);
    let first_status = status(&repo)?;

    eprintln!(
        "changes: {rounds} turn boundaries with nothing changed, and with 10 files changed..."
    );
    let (mut same, mut same_ref, mut ten, mut ten_ref) = (vec![], vec![], vec![], vec![]);
    for round in 0..rounds {
        let start = Instant::now();
        let after = shadow.snapshot().await?.tree;
        shadow.changed(&before, &after).await?;
        same.push(ms(start));
        same_ref.push(status(&repo)?);
        for f in 0..10 {
            let path = repo.join(format!("src/m{:03}/f{f:03}.rs", round % DIRS));
            std::fs::write(&path, format!("// changed in round {round}\n"))
                .map_err(|e| e.to_string())?;
        }
        let start = Instant::now();
        let after = shadow.snapshot().await?.tree;
        let changed = shadow.changed(&before, &after).await?;
        ten.push(ms(start));
        ten_ref.push(status(&repo)?);
        if changed.is_empty() {
            return Err("the snapshot saw no change".into());
        }
        before = after;
    }
    let _ = std::fs::remove_dir_all(&root);
    report.row_against(
        Against::GitStatus,
        "changes.first_snapshot_ms",
        "a folder's first snapshot, 10,000 files (ms)",
        Val::Num(first, 1),
        Val::Num(first_status, 1),
        "",
    );
    report.row_against(
        Against::GitStatus,
        "changes.boundary_same_p50_ms",
        "a turn boundary, nothing changed, p50 (ms)",
        Val::Num(p50(&mut same), 1),
        Val::Num(p50(&mut same_ref), 1),
        "< 50",
    );
    report.row_against(
        Against::GitStatus,
        "changes.boundary_ten_p50_ms",
        "a turn boundary, 10 files changed, p50 (ms)",
        Val::Num(p50(&mut ten), 1),
        Val::Num(p50(&mut ten_ref), 1),
        "< 50",
    );
    report.note(format!(
        "changes: a git repository of {} files (100 folders of 100, ~1 KB each); a boundary is a snapshot (the changed files' sizes checked with `git ls-files -o -m`, `git add -A` into the shadow store's own index, `git write-tree`) and the list of what changed since the last (`git diff-tree --name-status`), {rounds} rounds; the reference runs `git status --porcelain` on the same repository after each",
        DIRS * PER_DIR
    ));
    Ok(())
}
