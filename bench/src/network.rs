//! The private network's idle cost (ADR 0018): three vyreds watched together from `/proc`, one
//! with its network off (the reference, today's idle), one with it up and no device, one with
//! a phone connected: a real WireGuard peer in this process (boringtun's Noise, as a phone's app
//! runs it) that shook hands and keeps its tunnel alive with a keepalive every 25 s. With no
//! device connected the network must add no wake-up; with one, its keepalives and the tunnel's
//! timers (every 10 s while a device is connected).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use boringtun::noise::{Tunn, TunnResult};
use boringtun::x25519::{PublicKey, StaticSecret};
use serde_json::{Value, json};
use tokio::net::UdpSocket;
use vyre::surfaces::client::Client;

use crate::Opts;
use crate::idle::{Idle, SETTLE, sample};
use crate::procfs;
use crate::report::{Against, Report, Val};
use crate::spawn::{self, Server};

fn config_value(config: &str, key: &str) -> Result<String, String> {
    config
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key} = ")))
        .map(str::to_string)
        .ok_or_else(|| format!("no {key} in the device's configuration"))
}

fn key(text: &str) -> Result<[u8; 32], String> {
    STANDARD
        .decode(text)
        .ok()
        .and_then(|k| k.try_into().ok())
        .ok_or_else(|| format!("{text:?} is not a WireGuard key"))
}

/// A phone on the network: shakes hands with the box and keeps the tunnel alive, until dropped.
struct Phone(tokio::task::JoinHandle<()>);

impl Drop for Phone {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn phone(config: &str) -> Result<Phone, String> {
    let secret = StaticSecret::from(key(&config_value(config, "PrivateKey")?)?);
    let box_public = PublicKey::from(key(&config_value(config, "PublicKey")?)?);
    let endpoint: SocketAddr = config_value(config, "Endpoint")?
        .parse()
        .map_err(|e| format!("the endpoint: {e}"))?;
    let keepalive = config_value(config, "PersistentKeepalive")?
        .parse::<u16>()
        .map_err(|e| e.to_string())?;
    let udp = Arc::new(
        UdpSocket::bind("127.0.0.1:0")
            .await
            .map_err(|e| e.to_string())?,
    );
    udp.connect(endpoint).await.map_err(|e| e.to_string())?;
    let mut tunn = Tunn::new(secret, box_public, None, Some(keepalive), 1, None);
    let (up_tx, up_rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(async move {
        let mut up = Some(up_tx);
        let (mut buf, mut out) = (vec![0u8; 2048], vec![0u8; 2048]);
        if let TunnResult::WriteToNetwork(init) = tunn.format_handshake_initiation(&mut out, false)
        {
            let _ = udp.send(init).await;
        }
        let mut timers = tokio::time::interval(Duration::from_millis(250));
        loop {
            tokio::select! {
                got = udp.recv(&mut buf) => {
                    let Ok(n) = got else { continue };
                    let mut result = tunn.decapsulate(None, &buf[..n], &mut out);
                    while let TunnResult::WriteToNetwork(p) = result {
                        let _ = udp.send(p).await;
                        result = tunn.decapsulate(None, &[], &mut out);
                    }
                    if tunn.time_since_last_handshake().is_some()
                        && let Some(up) = up.take()
                    {
                        let _ = up.send(());
                    }
                }
                _ = timers.tick() => {
                    if let TunnResult::WriteToNetwork(p) = tunn.update_timers(&mut out) {
                        let _ = udp.send(p).await;
                    }
                }
            }
        }
    });
    tokio::time::timeout(Duration::from_secs(10), up_rx)
        .await
        .map_err(|_| "the phone's handshake got no answer".to_string())?
        .map_err(|_| "the phone stopped".to_string())?;
    Ok(Phone(task))
}

fn with_network(_: &std::path::Path) -> Result<Option<Value>, String> {
    Ok(Some(json!({
        "network": { "enabled": true, "listen": "127.0.0.1:0" }
    })))
}

pub async fn run(opts: &Opts, report: &mut Report) -> Result<(), String> {
    let window = if opts.quick {
        Duration::from_secs(10)
    } else {
        Duration::from_secs(60)
    };
    let kind = spawn::vyred()?;
    let mut off = Server::spawn(&kind)?;
    let mut up = Server::spawn_configured(&kind, with_network)?;
    let mut connected = Server::spawn_configured(&kind, with_network)?;
    let result = async {
        for s in [&mut off, &mut up, &mut connected] {
            s.wait_healthy(Duration::from_millis(10)).await?;
        }
        let client = Client::socket(connected.socket());
        let status = client
            .call("network.status", &json!({}))
            .await
            .map_err(|e| format!("network.status: {e}"))?;
        if status["up"] != true {
            return Err(format!("the network did not come up: {status}"));
        }
        let joined = client
            .call(
                "network.join",
                &json!({ "name": "bench phone", "endpoint": status["listen"] }),
            )
            .await
            .map_err(|e| format!("network.join: {e}"))?;
        let phone = phone(joined["config"].as_str().unwrap_or("")).await?;
        eprintln!(
            "network: three vyreds (network off, up, a phone connected) for {}s...",
            window.as_secs()
        );
        tokio::time::sleep(SETTLE).await;
        let (tck, _) = procfs::clk_tck();
        let (a, b, c) = tokio::join!(
            sample(off.pid(), window, tck),
            sample(up.pid(), window, tck),
            sample(connected.pid(), window, tck),
        );
        drop(phone);
        Ok::<_, String>((a?, b?, c?))
    }
    .await;
    for s in [off, up, connected] {
        s.stop().await?;
    }
    let (off, up, connected) = result?;

    type Get = fn(&Idle) -> f64;
    let rows: [(&str, &str, Get, usize); 3] = [
        (
            "cpu_mean_pct",
            "idle CPU, mean (% of a core)",
            |m| m.cpu_mean_pct,
            3,
        ),
        (
            "switches_per_min",
            "idle wake-ups (ctx switches/min)",
            |m| m.switches_per_min,
            1,
        ),
        ("rss_end_mib", "idle RSS at end (MiB)", |m| m.rss_end_mib, 1),
    ];
    for (state, measured, target) in [
        (
            "up",
            &up,
            "as with the network off: nothing wakes with no device",
        ),
        (
            "connected",
            &connected,
            "a keepalive every 25 s and the tunnel's timers every 10 s",
        ),
    ] {
        for (key, label, f, decimals) in rows {
            report.row_against(
                Against::NetworkOff,
                &format!("network.{state}.{key}"),
                &format!("network {state}: {label}"),
                Val::Num(f(measured), decimals),
                Val::Num(f(&off), decimals),
                target,
            );
        }
    }
    report.note(format!(
        "network: reference = the same vyred with its network off; up = WireGuard listening and the API served in the tunnel, no device; connected = a phone (boringtun in the bench) that shook hands and keeps its tunnel alive every 25 s; all three watched together for {}s after {}s settle",
        window.as_secs(),
        SETTLE.as_secs()
    ));
    Ok(())
}
