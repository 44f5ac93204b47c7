//! `vyre-bench --startup-order`: writes `daemon/startup.ld`, the linker script that lays out
//! together the functions vyred runs to start and sit idle, and those the `vyre` command runs
//! for one call.
//!
//! Why: the kernel maps a binary's code into a process 64 KiB around each page it first runs
//! (fault-around), so a start that runs a few functions in every part of a 24 MB binary keeps
//! most of it resident. Laid out together, the code a start runs fills a few MB, and an idle
//! vyred holds those (issue 26, goal 5; ADR 0039).
//!
//! How: the release `vyre` beside this binary runs under valgrind's callgrind (which counts every
//! function run): `vyre daemon` on a fresh home until it answers `/v1/health`, then idle a few
//! seconds, then stopped; and `vyre projects list` against it. The names callgrind saw in the
//! `vyre` binary become section patterns (`.text.<symbol>`) in the order first seen, with every
//! crate's hash (`Cs<hash>_` in a v0 name, `17h<hash>E` in a legacy one) and a C compiler's
//! clone numbers (`.isra.0`) left to a `*`, so that the script still matches after the
//! toolchain or a dependency changes. Symbols must be v0-mangled for a generic function's
//! instances to be told apart without their hash (`.cargo/config.toml`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use vyre::surfaces::client::Client;

use crate::spawn::{self, Kind, Server, TempDir};

/// How long vyred is left idle under callgrind after its first health answer: long enough for
/// its start-up tasks to finish and its first timers to fire.
const IDLE: Duration = Duration::from_secs(8);

pub async fn run(out: &Path) -> Result<(), String> {
    let Kind::Vyred(vyre) = spawn::vyred()? else {
        unreachable!("spawn::vyred gives a vyred");
    };
    let traces = TempDir::new("callgrind")?;
    let daemon_out = traces.path().join("daemon.out");
    let cli_out = traces.path().join("cli.out");

    eprintln!("startup-order: vyred under callgrind (a start takes some seconds)...");
    let mut server = Server::spawn(&Kind::Callgrind {
        vyre: vyre.clone(),
        out: daemon_out.clone(),
    })?;
    server.wait_healthy(Duration::from_millis(200)).await?;
    let client = Client::socket(server.socket());
    client
        .get("/v1/health")
        .await
        .map_err(|e| format!("health: {e}"))?;
    eprintln!("startup-order: `vyre projects list` under callgrind...");
    let status = spawn::callgrind(&cli_out)
        .arg(&vyre)
        .args(["projects", "list"])
        .env("VYRE_HOME", server.dir().join("vyre"))
        .env("HOME", server.dir().join("home"))
        .stdout(std::process::Stdio::null())
        .status()
        .await
        .map_err(|e| format!("cannot run valgrind: {e}"))?;
    if !status.success() {
        return Err(format!("`vyre projects list` under callgrind: {status}"));
    }
    tokio::time::sleep(IDLE).await;
    server.stop().await?;

    let mut seen = HashSet::new();
    let mut patterns = Vec::new();
    for trace in [&daemon_out, &cli_out] {
        let text = std::fs::read_to_string(trace)
            .map_err(|e| format!("cannot read {}: {e}", trace.display()))?;
        for symbol in functions_in(&text, &vyre) {
            let pattern = pattern(symbol);
            if seen.insert(pattern.clone()) {
                patterns.push(pattern);
            }
        }
    }
    if patterns.len() < 100 {
        return Err(format!(
            "callgrind saw only {} functions in {}; is it built with symbols?",
            patterns.len(),
            vyre.display()
        ));
    }
    std::fs::write(out, script(&patterns))
        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    eprintln!(
        "startup-order: {} patterns written to {}",
        patterns.len(),
        out.display()
    );
    Ok(())
}

/// Where the script goes: `daemon/startup.ld` in this checkout.
pub fn default_out() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../daemon/startup.ld")
}

/// The functions of `binary` named in a callgrind output (`ob=` names the object of the
/// `fn=` lines after it), in the order first seen. Callgrind marks a recursive call's cycle
/// with `'N`, which is not part of the name.
///
/// Valgrind knows an object's code by its `.text` section, so the functions a binary already
/// laid out by this script holds in `.text.vyre_startup` come under `ob=???`: they are taken
/// too (a name that is not the binary's matches nothing when it links), or regenerating the
/// script from a release build would leave out everything it had placed.
fn functions_in<'a>(callgrind: &'a str, binary: &Path) -> Vec<&'a str> {
    let binary = binary.to_string_lossy();
    let mut ours = false;
    let mut out = Vec::new();
    for line in callgrind.lines() {
        if let Some(object) = line.strip_prefix("ob=") {
            ours = object == binary || object == "???";
        } else if let Some(name) = line.strip_prefix("fn=")
            && ours
            && !name.starts_with('(')
        {
            out.push(name.split('\'').next().unwrap_or(name));
        }
    }
    out
}

/// A section pattern for `symbol` that outlives its hashes (module doc).
fn pattern(symbol: &str) -> String {
    let mut p = if symbol.starts_with("_R") {
        wild_crate_hashes(symbol)
    } else if let Some(stem) = legacy_stem(symbol) {
        format!("{stem}17h*")
    } else {
        symbol.to_string()
    };
    // A clone's number (`.isra.0`, `.constprop.3`, `.llvm.123`, `.2366`) changes with the code
    // around it.
    if let Some(dot) = p.rfind('.')
        && dot > 0
        && p[dot + 1..].bytes().all(|b| b.is_ascii_digit())
        && dot + 1 < p.len()
    {
        p.truncate(dot + 1);
        p.push('*');
    }
    // Nothing a glob reads specially is left as itself.
    p.replace(['[', ']', '?'], "?")
}

/// A v0 name with what changes with a build's crate hashes left to `*`: each crate's
/// disambiguator (`Cs<base62>_`) and each back-reference (`B<base62>_`), which is a byte offset
/// into the name and so moves when a hash before it is longer or shorter (seen: a new machine's
/// hashes were a character shorter, and 80 of the start's functions no longer matched).
///
/// It reads the name as v0's grammar has it, enough to tell a tag from the inside of an
/// identifier (`<decimal length>[_]<bytes>`, copied whole) and of the base-62 numbers after `s`,
/// `L` and `G` and a constant's hex digits (copied as they are: they count, they do not move).
fn wild_crate_hashes(symbol: &str) -> String {
    let bytes = symbol.as_bytes();
    let mut out = String::with_capacity(symbol.len());
    // `[0-9a-zA-Z]*_` at `at`: its length with the `_`, if there is one.
    let number = |at: usize| {
        let digits = bytes
            .get(at..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        (bytes.get(at + digits) == Some(&b'_')).then_some(digits + 1)
    };
    let Some(body) = symbol.strip_prefix("_R") else {
        return symbol.to_string();
    };
    out.push_str("_R");
    let mut i = symbol.len() - body.len();
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'0'..=b'9' => {
                let digits = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
                let len: usize = symbol[i..i + digits].parse().unwrap_or(0);
                let mut end = i + digits;
                if bytes.get(end) == Some(&b'_') {
                    end += 1;
                }
                end = (end + len).min(bytes.len());
                out.push_str(&symbol[i..end]);
                i = end;
            }
            b'C' if bytes.get(i + 1) == Some(&b's') && number(i + 2).is_some_and(|n| n > 1) => {
                out.push_str("Cs*_");
                i += 2 + number(i + 2).unwrap_or(0);
            }
            b'B' if number(i + 1).is_some() => {
                out.push_str("B*_");
                i += 1 + number(i + 1).unwrap_or(0);
            }
            b's' | b'L' | b'G' if number(i + 1).is_some() => {
                let end = i + 1 + number(i + 1).unwrap_or(0);
                out.push_str(&symbol[i..end]);
                i = end;
            }
            b'K' => {
                // A constant: its type's letter, then its value in hex (`n` if negative).
                let mut end = (i + 2).min(bytes.len());
                if bytes.get(end) == Some(&b'n') {
                    end += 1;
                }
                let hex = bytes[end..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
                    .count();
                if bytes.get(end + hex) == Some(&b'_') {
                    end += hex + 1;
                }
                out.push_str(&symbol[i..end]);
                i = end;
            }
            b'.' => {
                // A suffix (`.llvm.123`, a clone's number): the caller reads it.
                out.push_str(&symbol[i..]);
                break;
            }
            _ => {
                out.push(c as char);
                i += 1;
            }
        }
    }
    out
}

/// A legacy name's part before its hash: `_ZN...17h<16 hex>E` gives `_ZN...`.
fn legacy_stem(symbol: &str) -> Option<&str> {
    let body = symbol.strip_prefix("_ZN")?.strip_suffix('E')?;
    let (_, hash) = body.split_at_checked(body.len().checked_sub(19)?)?;
    let hex = hash.strip_prefix("17h")?;
    hex.bytes()
        .all(|b| b.is_ascii_hexdigit())
        .then(|| &symbol[..symbol.len() - 20])
}

/// The linker script: one output section of the patterns, in order, placed before `.text`
/// (`INSERT` keeps the linker's own layout for everything else).
fn script(patterns: &[String]) -> String {
    let mut s = String::from(
        "/* The functions vyred runs to start and sit idle, and the vyre command for one call,\n   \
         laid out together so that an idle vyred keeps few of its binary's pages resident.\n   \
         Made by `vyre-bench --startup-order` (bench/README.md); applied to release builds on\n   \
         Linux by daemon/build.rs. A function missing here still links, only elsewhere. */\n\
         SECTIONS\n{\n  .text.vyre_startup :\n  {\n",
    );
    // LLVM and GCC put a function they deem cold (`#[cold]`, or only reached on a way out) in
    // `.text.unlikely.<name>`; a start runs many of them once.
    for p in patterns {
        s.push_str(&format!("    *(.text.{p} .text.unlikely.{p})\n"));
    }
    s.push_str("  }\n}\nINSERT BEFORE .text;\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_hashes_become_wildcards_and_the_rest_stays() {
        assert_eq!(
            pattern("_RNvNtCs1a2B3c_4core3fmt5write"),
            "_RNvNtCs*_4core3fmt5write"
        );
        assert_eq!(
            pattern("_RINvNtCsx_5tokio4task5spawnNtCsyz9_4vyre3FooE"),
            "_RINvNtCs*_5tokio4task5spawnNtCs*_4vyre3FooE"
        );
        assert_eq!(
            pattern("_ZN4vyre6kernel5tools5input9schema_of17h0123456789abcdefE"),
            "_ZN4vyre6kernel5tools5input9schema_of17h*"
        );
        assert_eq!(
            pattern("sqlite3PagerClose.isra.0"),
            "sqlite3PagerClose.isra.*"
        );
        assert_eq!(pattern("_RNvCsab_3std4main.2366"), "_RNvCs*_3std4main.*");
        assert_eq!(pattern("sqlite3Select"), "sqlite3Select");
        // Not a hash: a name that happens to hold `Cs` with no `_` after its letters.
        assert_eq!(pattern("_RNvCs1_3fooCsx"), "_RNvCs*_3fooCsx");
        // An identifier is read whole: `Cs` and `B` inside one are its letters.
        assert_eq!(pattern("_RNvCs1_3foo7CsB1_x_"), "_RNvCs*_3foo7CsB1_x_");
    }

    /// A back-reference is a byte offset into the name: with a crate hash a character shorter
    /// the same function's name has `BJ_` where it had `BK_` (seen on a new machine).
    #[test]
    fn back_references_become_wildcards_and_counts_stay() {
        let one = "_RINvNtNtCshOVmIHUCCc_4vyre6kernel5tools5typedNtNtNtB6_7modules4gate10CheckInputNtBJ_7CheckedE";
        let other = "_RINvNtNtCs3hOVmIHUCCc_4vyre6kernel5tools5typedNtNtNtB6_7modules4gate10CheckInputNtBK_7CheckedE";
        assert_eq!(pattern(one), pattern(other));
        assert_eq!(
            pattern(one),
            "_RINvNtNtCs*_4vyre6kernel5tools5typedNtNtNtB*_7modules4gate10CheckInputNtB*_7CheckedE"
        );
        // Disambiguators of impls and closures (`s_`, `s0_`), lifetimes and constants count
        // things and stay; an identifier after a `_` separator is read whole.
        assert_eq!(
            pattern("_RNCNvMs0_NtCs1_3foo3Bar3baz0s1_0B4_"),
            "_RNCNvMs0_NtCs*_3foo3Bar3baz0s1_0B*_"
        );
        assert_eq!(
            pattern("_RINvCs1_3foo3barKj1f_L0_E"),
            "_RINvCs*_3foo3barKj1f_L0_E"
        );
        assert_eq!(pattern("_RNvCs1_3foo4_1abc"), "_RNvCs*_3foo4_1abc");
        // A legacy-looking name whose tail is not hex stays whole.
        assert_eq!(
            pattern("_ZN3foo3bar17hzzzzzzzzzzzzzzzzE"),
            "_ZN3foo3bar17hzzzzzzzzzzzzzzzzE"
        );
    }

    #[test]
    fn only_the_binarys_functions_are_kept_in_first_seen_order() {
        let trace = "ob=/usr/lib/libc.so.6\nfn=malloc\nob=/x/vyre\nfn=main\nfn=_RNvCs1_3foo1f'2\nfn=(below main)\nob=/usr/lib/libm.so.6\nfn=cos\nob=/x/vyre\nfn=sqlite3Select\nob=???\nfn=_RNvCs1_3foo4laid\n";
        assert_eq!(
            functions_in(trace, Path::new("/x/vyre")),
            [
                "main",
                "_RNvCs1_3foo1f",
                "sqlite3Select",
                "_RNvCs1_3foo4laid"
            ]
        );
    }

    #[test]
    fn the_script_places_its_section_before_text() {
        let s = script(&["main".into(), "_RNvCs*_3foo1f".into()]);
        assert!(s.contains(
            "    *(.text.main .text.unlikely.main)\n    *(.text._RNvCs*_3foo1f .text.unlikely._RNvCs*_3foo1f)\n"
        ));
        assert!(s.trim_end().ends_with("INSERT BEFORE .text;"));
    }
}

#[cfg(test)]
mod committed {
    /// The committed script is one `vyre-bench --startup-order` writes: a release build links
    /// with it (daemon/build.rs), and a hand edit that breaks it would break only release builds,
    /// which the test suite does not make.
    #[test]
    fn the_committed_script_is_whole() {
        let text = std::fs::read_to_string(super::default_out()).unwrap();
        let body = text
            .split_once("  .text.vyre_startup :\n  {\n")
            .expect("the section opens")
            .1;
        let (lines, tail) = body.split_once("  }\n}\n").expect("the section closes");
        assert_eq!(tail.trim_end(), "INSERT BEFORE .text;");
        let lines: Vec<&str> = lines.lines().collect();
        assert!(lines.len() > 1000, "only {} patterns", lines.len());
        for line in lines {
            let inner = line
                .strip_prefix("    *(.text.")
                .and_then(|l| l.strip_suffix(')'))
                .unwrap_or_else(|| panic!("not a pattern line: {line:?}"));
            let (p, q) = inner
                .split_once(" .text.unlikely.")
                .unwrap_or_else(|| panic!("no cold twin: {line:?}"));
            assert_eq!(p, q, "{line:?}");
            assert!(
                p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_.$*?".contains(&b)),
                "{line:?}"
            );
        }
    }
}
