//! `vyre status` and `vyre doctor`.

use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};

use super::fail;
use crate::kernel::paths::VyreHome;
use crate::surfaces::client::{Client, ClientError};

pub async fn status(client: &Client, as_json: bool) -> i32 {
    match client.call("system.status", &json!({})).await {
        Ok(status) => {
            if as_json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&status).unwrap_or_default()
                );
            } else {
                print!("{}", render_status(&status));
            }
            0
        }
        Err(e) => fail(&e.to_string()),
    }
}

/// The status as a person reads it.
pub fn render_status(s: &Value) -> String {
    let mut out = String::new();
    let str_of = |v: &Value| v.as_str().unwrap_or("?").to_string();
    out.push_str(&format!(
        "vyred {} (role {}, pid {}), up {}\n",
        str_of(&s["version"]),
        str_of(&s["role"]),
        s["pid"],
        human_duration(s["uptime_s"].as_u64().unwrap_or(0))
    ));
    out.push_str(&format!("  home      {}\n", str_of(&s["home"])));
    for l in s["listeners"].as_array().into_iter().flatten() {
        let addr = str_of(&l["address"]);
        match l["kind"].as_str() {
            Some("http") => out.push_str(&format!("  http      http://{addr}/\n")),
            _ => out.push_str(&format!("  socket    {addr}\n")),
        }
    }
    let store = &s["store"];
    out.push_str(&format!(
        "  store     {} ({}, {} events)\n",
        str_of(&store["path"]),
        human_bytes(
            store["size_bytes"].as_u64().unwrap_or(0) + store["wal_bytes"].as_u64().unwrap_or(0)
        ),
        store["events"]
    ));
    match s["config"]["file"].as_str() {
        Some(f) => out.push_str(&format!("  config    {f}\n")),
        None => out.push_str("  config    defaults (no config.json)\n"),
    }
    for w in s["config"]["warnings"].as_array().into_iter().flatten() {
        out.push_str(&format!("            warning: {}\n", str_of(w)));
    }
    out.push_str("  modules\n");
    for m in s["modules"].as_array().into_iter().flatten() {
        let reason = m["reason"]
            .as_str()
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "    {:<12} {}{}\n",
            str_of(&m["name"]),
            str_of(&m["state"]),
            reason
        ));
    }
    out
}

fn human_duration(s: u64) -> String {
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {}s", s / 60, s % 60),
        3600..86400 => format!("{}h {}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d {}h", s / 86400, (s % 86400) / 3600),
    }
}

fn human_bytes(b: u64) -> String {
    match b {
        0..1024 => format!("{b} B"),
        1024..1_048_576 => format!("{:.1} KiB", b as f64 / 1024.0),
        _ => format!("{:.1} MiB", b as f64 / 1_048_576.0),
    }
}

#[derive(Debug, serde::Serialize)]
struct Check {
    name: &'static str,
    /// ok, warn or fail
    level: &'static str,
    detail: String,
}

pub async fn doctor(home: &VyreHome, client: &Client, as_json: bool) -> i32 {
    let mut checks = Vec::new();
    let mut push = |name, level, detail: String| {
        checks.push(Check {
            name,
            level,
            detail,
        })
    };

    match std::fs::metadata(home.root()) {
        Ok(m) => {
            let mode = m.permissions().mode() & 0o777;
            if mode == 0o700 {
                push(
                    "home",
                    "ok",
                    format!("{} (mode 0700)", home.root().display()),
                );
            } else {
                push(
                    "home",
                    "warn",
                    format!(
                        "{} has mode {mode:o}; vyred tightens it to 0700 when it starts",
                        home.root().display()
                    ),
                );
            }
        }
        Err(_) => push(
            "home",
            "warn",
            format!(
                "{} does not exist yet; `vyre up` creates it",
                home.root().display()
            ),
        ),
    }
    match crate::kernel::config::load(&home.config_file()) {
        Ok(c) if c.file.is_none() => {
            push("config", "ok", "no config.json: the defaults apply".into())
        }
        Ok(c) if c.warnings.is_empty() => {
            push("config", "ok", home.config_file().display().to_string())
        }
        Ok(c) => push("config", "warn", c.warnings.join("; ")),
        Err(e) => push("config", "fail", e.to_string()),
    }
    let status = client.call("system.status", &json!({})).await;
    match &status {
        Ok(s) => {
            push(
                "vyred",
                "ok",
                format!(
                    "running, pid {}, up {}",
                    s["pid"],
                    human_duration(s["uptime_s"].as_u64().unwrap_or(0))
                ),
            );
            for m in s["modules"].as_array().into_iter().flatten() {
                if m["state"] == "disabled" {
                    push(
                        "module",
                        "fail",
                        format!(
                            "{} is disabled: {}",
                            m["name"].as_str().unwrap_or("?"),
                            m["reason"].as_str().unwrap_or("?")
                        ),
                    );
                }
            }
            let wal = s["store"]["wal_bytes"].as_u64().unwrap_or(0);
            push(
                "store",
                if wal > 256 * 1_048_576 { "warn" } else { "ok" },
                format!("{} events, WAL {}", s["store"]["events"], human_bytes(wal)),
            );
        }
        Err(ClientError::NotRunning(_)) => push(
            "vyred",
            "fail",
            "not running; start it with `vyre up`".into(),
        ),
        Err(e) => push("vyred", "fail", e.to_string()),
    }
    if status.is_ok() {
        match client.call("vault.status", &json!({})).await {
            Ok(v) => {
                let state = v["state"].as_str().unwrap_or("?");
                let level = match state {
                    "unlocked" | "empty" => "ok",
                    "locked" => "warn",
                    _ => "fail",
                };
                push(
                    "vault",
                    level,
                    format!(
                        "{state} ({} item(s), key in {})",
                        v["items"],
                        v["keystore"].as_str().unwrap_or("?")
                    ),
                );
                let ready = v["claude"]["advice"].is_null() && !v["claude"]["mode"].is_null();
                push(
                    "claude",
                    if ready { "ok" } else { "warn" },
                    super::vault_cmd::auth_line(&v["claude"]),
                );
            }
            Err(e) => push("vault", "fail", e.to_string()),
        }
    }
    if let Ok(m) = std::fs::metadata(home.socket()) {
        let mode = m.permissions().mode() & 0o777;
        push(
            "socket",
            if mode == 0o600 { "ok" } else { "fail" },
            format!("{} (mode {mode:o})", home.socket().display()),
        );
    }
    let failed = checks.iter().any(|c| c.level == "fail");
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "checks": checks, "ok": !failed }))
                .unwrap_or_default()
        );
    } else {
        if let Ok(s) = &status {
            print!("{}", render_status(s));
        }
        for c in &checks {
            println!("[{:<4}] {:<7} {}", c.level, c.name, c.detail);
        }
    }
    i32::from(failed)
}
