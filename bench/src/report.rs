//! The figures: printed as a table (figure, reference, target side by side) and appended as one
//! JSON line to `bench/results/kernel.jsonl`.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::procfs::Machine;

/// One cell: a number shown with a fixed count of decimals, a text, or why it is missing.
#[derive(Clone, Debug)]
pub enum Val {
    Num(f64, usize),
    Text(String),
    Missing(String),
}

impl Val {
    fn show(&self) -> String {
        match self {
            Val::Num(v, decimals) => group_thousands(&format!("{v:.decimals$}")),
            Val::Text(t) => t.clone(),
            Val::Missing(why) => why.clone(),
        }
    }

    fn json(&self) -> Option<Value> {
        match self {
            // Whole numbers stay whole; others keep two digits more than shown.
            Val::Num(v, 0) if v.fract() == 0.0 && v.abs() < 1e15 => Some(json!(*v as i64)),
            Val::Num(v, decimals) => {
                let scale = 10f64.powi(*decimals as i32 + 2);
                Some(json!((v * scale).round() / scale))
            }
            Val::Text(t) => Some(json!(t)),
            Val::Missing(_) => None,
        }
    }
}

/// `123456.7` -> `123,456.7`, so big rates read at a glance.
pub fn group_thousands(s: &str) -> String {
    let (int, frac) = s.split_once('.').map_or((s, None), |(i, f)| (i, Some(f)));
    let (sign, digits) = int.strip_prefix('-').map_or(("", int), |d| ("-", d));
    if digits.len() <= 4 {
        return s.to_string();
    }
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    match frac {
        Some(f) => format!("{sign}{out}.{f}"),
        None => format!("{sign}{out}"),
    }
}

/// What a row's reference column measured.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Against {
    /// The Node.js reference server (`reference/idle-server.js`).
    Node,
    /// The Claude Code CLI driven directly, without vyred.
    ClaudeCli,
    /// A fresh session started through the same vyred (the reference of a resume).
    FreshStart,
    /// The same spawn of `/bin/true` (the reference of a hook round trip).
    BareProcess,
    /// `SO_PEERCRED` alone, or a request that judges no caller (the reference of the peer check).
    PeerCred,
    /// The same two vyreds unpaired (the reference of the link's idle cost).
    Unpaired,
    /// The same vyred with its network off (the reference of the network's idle cost).
    NetworkOff,
    /// Nothing here runs the same work (the embedding model: its reference needs torch).
    Nothing,
    /// A hook of a call the Gate does not look at (a Read), or the floor's own check of the same
    /// command: the reference of the Gate's cost.
    Ungated,
    /// Recall by words alone (FTS5), the reference of a search by meaning.
    FullText,
    /// Every vector compared in full, the reference of the two-step search by meaning.
    EveryVector,
    /// The same vyred with nothing planned (the reference of the idle cost of reminders).
    NothingPlanned,
    /// `git status --porcelain` on the same repository (the reference of a turn's snapshot).
    GitStatus,
    /// The same ACP agent driven directly by vyre's ACP provider.
    AcpDirect,
    /// The same Codex driven directly by vyre's Codex provider.
    CodexDirect,
}

impl Against {
    /// The header of the reference column when every row is against this.
    fn header(self) -> &'static str {
        match self {
            Against::Node => "reference (node)",
            Against::ClaudeCli => "reference (CLI direct)",
            Against::FreshStart => "reference (fresh start)",
            Against::BareProcess => "reference (/bin/true)",
            Against::Ungated => "reference (no Gate check)",
            Against::PeerCred => "reference (peer cred / health)",
            Against::Unpaired => "reference (unpaired)",
            Against::NetworkOff => "reference (network off)",
            Against::Nothing => "reference (none here)",
            Against::FullText => "reference (full text)",
            Against::EveryVector => "reference (every vector)",
            Against::NothingPlanned => "reference (nothing planned)",
            Against::GitStatus => "reference (git status)",
            Against::AcpDirect => "reference (ACP agent direct)",
            Against::CodexDirect => "reference (Codex direct)",
        }
    }

    /// The map of the JSON line that holds these references.
    fn json_key(self) -> &'static str {
        match self {
            Against::Node => "reference_node",
            Against::ClaudeCli => "reference_claude_cli",
            Against::FreshStart => "reference_fresh_start",
            Against::BareProcess => "reference_bare_process",
            Against::Ungated => "reference_ungated",
            Against::PeerCred => "reference_peer_cred",
            Against::Unpaired => "reference_unpaired",
            Against::NetworkOff => "reference_network_off",
            Against::Nothing => "reference_none",
            Against::FullText => "reference_full_text",
            Against::EveryVector => "reference_every_vector",
            Against::NothingPlanned => "reference_nothing_planned",
            Against::GitStatus => "reference_git_status",
            Against::AcpDirect => "reference_acp_direct",
            Against::CodexDirect => "reference_codex_direct",
        }
    }
}

pub struct Row {
    /// Stable name in the JSON line, e.g. `idle.cpu_mean_pct`.
    pub key: String,
    pub label: String,
    pub vyred: Val,
    pub reference: Val,
    pub against: Against,
    pub target: String,
}

#[derive(Default)]
pub struct Report {
    rows: Vec<Row>,
    notes: Vec<String>,
}

impl Report {
    /// A row whose reference is the Node.js server.
    pub fn row(&mut self, key: &str, label: &str, vyred: Val, reference: Val, target: &str) {
        self.row_against(Against::Node, key, label, vyred, reference, target);
    }

    pub fn row_against(
        &mut self,
        against: Against,
        key: &str,
        label: &str,
        vyred: Val,
        reference: Val,
        target: &str,
    ) {
        self.rows.push(Row {
            key: key.into(),
            label: label.into(),
            vyred,
            reference,
            against,
            target: target.into(),
        });
    }

    pub fn note(&mut self, note: impl Into<String>) {
        let note = note.into();
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table, then the notes.
    pub fn print(&self) {
        let against = self.rows.first().map_or(Against::Node, |r| r.against);
        let reference = if self.rows.iter().all(|r| r.against == against) {
            against.header()
        } else {
            "reference"
        };
        let head = ["benchmark", "vyred", reference, "target"];
        let cells: Vec<[String; 4]> = self
            .rows
            .iter()
            .map(|r| {
                [
                    r.label.clone(),
                    r.vyred.show(),
                    r.reference.show(),
                    r.target.clone(),
                ]
            })
            .collect();
        let mut width = head.map(str::len);
        for row in &cells {
            for (w, c) in width.iter_mut().zip(row) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |c: [&str; 4]| {
            format!(
                "{:<w0$}  {:>w1$}  {:>w2$}  {}",
                c[0],
                c[1],
                c[2],
                c[3],
                w0 = width[0],
                w1 = width[1],
                w2 = width[2],
            )
        };
        println!();
        println!("{}", line(head));
        println!("{}", "-".repeat(width.iter().sum::<usize>() + 6));
        for row in &cells {
            println!("{}", line([&row[0], &row[1], &row[2], &row[3]]).trim_end());
        }
        if !self.notes.is_empty() {
            println!();
            for note in &self.notes {
                println!("* {note}");
            }
        }
    }

    /// The JSON line: when, where (machine, commit), and each figure by key.
    pub fn json_line(&self, machine: &Machine, quick: bool, only: Option<&str>) -> Value {
        let mut vyred = Map::new();
        // Each reference's figures, by the key of their map in the line.
        let mut refs: std::collections::BTreeMap<&'static str, Map<String, Value>> =
            Default::default();
        for r in &self.rows {
            if let Some(v) = r.vyred.json() {
                vyred.insert(r.key.clone(), v);
            }
            // `Nothing`'s reference is only ever why there is none.
            if let (Some(v), false) = (r.reference.json(), r.against == Against::Nothing) {
                refs.entry(r.against.json_key())
                    .or_default()
                    .insert(r.key.clone(), v);
            }
        }
        let (commit, dirty) = git_commit();
        let mut line = json!({
            "unix_ms": vyre::now_ms(),
            "commit": commit,
            "dirty": dirty,
            "machine": {
                "cpu": machine.cpu,
                "cores": machine.cores,
                "kernel": machine.kernel,
            },
            "quick": quick,
            "only": only,
            "vyred": vyred,
            "notes": self.notes,
        });
        // The node reference is always there (empty when it did not run); the others appear
        // only when their benchmarks ran.
        line[Against::Node.json_key()] =
            Value::Object(refs.remove(Against::Node.json_key()).unwrap_or_default());
        for (key, map) in refs {
            line[key] = Value::Object(map);
        }
        line
    }
}

/// The short commit the workspace is at (`unknown` without git), and whether the tree has
/// uncommitted changes (`null` when unknown).
fn git_commit() -> (String, Option<bool>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty());
    (commit, dirty)
}

/// `bench/results/kernel.jsonl`.
pub fn results_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("results/kernel.jsonl")
}

/// Append one line to the results file, creating its folder.
pub fn append(line: &Value) -> Result<PathBuf, String> {
    let path = results_file();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    writeln!(f, "{line}").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_thousands() {
        assert_eq!(group_thousands("123456.7"), "123,456.7");
        assert_eq!(group_thousands("1234"), "1234");
        assert_eq!(group_thousands("-12345"), "-12,345");
        assert_eq!(group_thousands("0.017"), "0.017");
    }
}
