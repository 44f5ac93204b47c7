//! The link's idle cost: a box vyred and a Local vyred (the Mac's), paired, the Local one
//! following the box's events on its one stream; both left alone and watched from `/proc`,
//! beside the same two vyreds unpaired. The link must add no polling: one long request, a
//! keep-alive comment a minute.

use std::time::Duration;

use serde_json::json;
use vyre::surfaces::client::Client;

use crate::Opts;
use crate::idle::{Idle, SETTLE, sample};
use crate::procfs;
use crate::report::{Against, Report, Val};
use crate::spawn::{self, Server};

/// The two sides, each started on its own fresh home.
async fn pair_of(kind: &spawn::Kind) -> Result<(Server, Server), String> {
    let mut the_box = Server::spawn(kind)?;
    let mut mac = Server::spawn_configured(kind, |_| {
        Ok(Some(
            json!({ "role": "local", "vault": { "keystore": "file" } }),
        ))
    })?;
    the_box.wait_healthy(Duration::from_millis(10)).await?;
    mac.wait_healthy(Duration::from_millis(10)).await?;
    Ok((the_box, mac))
}

async fn pair(the_box: &Server, mac: &Server) -> Result<(), String> {
    let on_box = Client::socket(the_box.socket());
    let on_mac = Client::socket(mac.socket());
    let code = on_box
        .call("pairing.code", &json!({}))
        .await
        .map_err(|e| format!("pairing.code: {e}"))?;
    on_mac
        .call(
            "pairing.add",
            &json!({ "address": code["address"], "code": code["code"], "name": "bench mac" }),
        )
        .await
        .map_err(|e| format!("pairing.add: {e}"))?;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let list = on_mac
            .call("pairing.list", &json!({}))
            .await
            .map_err(|e| format!("pairing.list: {e}"))?;
        if list[0]["link"] == "up" {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(format!("the link never came up: {list}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Both sides' idle windows, watched at the same time.
async fn watch(the_box: &Server, mac: &Server, window: Duration) -> Result<(Idle, Idle), String> {
    tokio::time::sleep(SETTLE).await;
    let (tck, _) = procfs::clk_tck();
    let (b, m) = tokio::join!(
        sample(the_box.pid(), window, tck),
        sample(mac.pid(), window, tck)
    );
    Ok((b?, m?))
}

pub async fn run(opts: &Opts, report: &mut Report) -> Result<(), String> {
    let window = if opts.quick {
        Duration::from_secs(10)
    } else {
        Duration::from_secs(60)
    };
    let kind = spawn::vyred()?;

    eprintln!("link: two vyreds, unpaired, for {}s...", window.as_secs());
    let (the_box, mac) = pair_of(&kind).await?;
    let apart = watch(&the_box, &mac, window).await;
    the_box.stop().await?;
    mac.stop().await?;
    let apart = apart?;

    eprintln!(
        "link: two vyreds, paired and linked, for {}s...",
        window.as_secs()
    );
    let (the_box, mac) = pair_of(&kind).await?;
    let linked = async {
        pair(&the_box, &mac).await?;
        watch(&the_box, &mac, window).await
    }
    .await;
    the_box.stop().await?;
    mac.stop().await?;
    let linked = linked?;

    type Get = fn(&Idle) -> f64;
    let rows: [(&str, &str, Get, usize, &str); 3] = [
        (
            "cpu_mean_pct",
            "idle CPU, mean (% of a core)",
            |m| m.cpu_mean_pct,
            3,
            "< 0.05, as unpaired",
        ),
        (
            "switches_per_min",
            "idle wake-ups (ctx switches/min)",
            |m| m.switches_per_min,
            1,
            "no polling: one keep-alive a minute",
        ),
        (
            "rss_end_mib",
            "idle RSS at end (MiB)",
            |m| m.rss_end_mib,
            1,
            "< 20",
        ),
    ];
    for (side, (with, without)) in [
        ("mac", (&linked.1, &apart.1)),
        ("box", (&linked.0, &apart.0)),
    ] {
        for (key, label, f, decimals, target) in rows {
            report.row_against(
                Against::Unpaired,
                &format!("link.{side}.{key}"),
                &format!("linked, {side} side: {label}"),
                Val::Num(f(with), decimals),
                Val::Num(f(without), decimals),
                target,
            );
        }
    }
    report.note(format!(
        "link: reference = the same two vyreds unpaired; linked = paired, the Local one following the box's events on one stream; both watched together for {}s after {}s settle",
        window.as_secs(),
        SETTLE.as_secs()
    ));
    Ok(())
}
