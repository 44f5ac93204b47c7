//! Dense recall on the real embedding model (issue 22): every turn is embedded in the background
//! and kept in the store, a search by meaning finds what the words miss, the two halves are fused
//! and say who found what, a grown transcript keeps its old vectors, a restart goes on where it
//! stopped, the model is let go when idle, and a damaged model leaves search by words working.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use vyre::surfaces::client::Client;

use crate::memory::{assistant, user};
use crate::support::*;

const CHAT: &str = "0b7e4c1e-0000-4000-8000-00000000d001";
const PETS: &str = "0b7e4c1e-0000-4000-8000-00000000d002";

fn model_dir() -> PathBuf {
    PathBuf::from(std::env::var("VYRE_TEST_EMBED_MODEL").expect(
        "VYRE_TEST_EMBED_MODEL names the all-MiniLM-L6-v2 folder (tests/run fetches it from PyPI)",
    ))
}

fn write_config(home: &TempHome, recall: Value) {
    std::fs::create_dir_all(home.vyre_home()).unwrap();
    std::fs::write(
        home.vyre_home().join("config.json"),
        json!({ "recall": recall }).to_string(),
    )
    .unwrap();
}

/// Two sessions of a person's history, in words a search by meaning must see through.
pub(crate) fn write_history(home: &TempHome) -> PathBuf {
    let cwd = home.dir.join("work/ops");
    let folder = home.dir.join("home/.claude/projects/-work-ops");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join(format!("{CHAT}.jsonl")),
        [
            user(CHAT, 1, &cwd, "The nightly backup failed again: the storage server's disk is completely full."),
            assistant(CHAT, 1, &cwd, "I deleted old snapshots and freed 40 GB on the volume, so tonight's copy should fit."),
            user(CHAT, 2, &cwd, "Let's rewrite the invoice generator so that bills are produced faster."),
            assistant(CHAT, 2, &cwd, "The PDF step was the slow part; I cached the fonts and it runs three times quicker."),
        ]
        .concat(),
    )
    .unwrap();
    std::fs::write(
        folder.join(format!("{PETS}.jsonl")),
        [
            user(
                PETS,
                1,
                &cwd,
                "We adopted a kitten last week and she sleeps on my keyboard.",
            ),
            assistant(
                PETS,
                1,
                &cwd,
                "A warm laptop is a favourite bed for young cats.",
            ),
        ]
        .concat(),
    )
    .unwrap();
    folder
}

async fn status_until(sock: &Client, until: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    for _ in 0..600 {
        last = sock.call("recall.status", &json!({})).await.unwrap();
        if until(&last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("recall.status never got there: {last:#}");
}

fn all_embedded(s: &Value, turns: i64) -> bool {
    s["turns"] == turns && s["dense"]["embedded"] == turns
}

async fn search(sock: &Client, input: Value) -> Vec<Value> {
    sock.call("recall.search", &input)
        .await
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the model: tests/run, or VYRE_TEST_EMBED_MODEL=... cargo test -- --include-ignored"]
async fn a_search_by_meaning_finds_what_the_words_miss_and_the_vectors_last() {
    let home = TempHome::new("dense");
    write_config(&home, json!({ "model": model_dir(), "idle_s": 2 }));
    let folder = write_history(&home);
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    status_until(&sock, |s| all_embedded(s, 6)).await;

    // No word of the question is in the answer; its meaning is.
    let question = "which machine ran out of space?";
    assert!(
        search(&sock, json!({ "query": question, "mode": "words" }))
            .await
            .is_empty(),
        "the words alone find nothing"
    );
    let meaning = search(
        &sock,
        json!({ "query": question, "mode": "meaning", "limit": 3 }),
    )
    .await;
    assert!(!meaning.is_empty(), "{meaning:#?}");
    assert!(
        meaning.iter().all(|h| h["thread"] == CHAT),
        "the kitten is unrelated, and left out: {meaning:#?}"
    );
    assert!(
        meaning[0]["snippet"]
            .as_str()
            .unwrap()
            .contains("storage server's disk is completely full"),
        "{meaning:#?}"
    );
    assert_eq!(meaning[0]["found"], json!(["meaning"]));
    assert_eq!(meaning[0]["rank"], Value::Null);
    let sim = meaning[0]["similarity"].as_f64().unwrap();
    assert!(sim > 0.2 && sim <= 1.0, "{sim}");
    // Both halves (the default): a turn each finds ranks first, and says so.
    let both = search(&sock, json!({ "query": "kitten", "limit": 3 })).await;
    assert_eq!(both[0]["thread"], PETS);
    assert_eq!(both[0]["found"], json!(["words", "meaning"]), "{both:#?}");
    assert!(both[0]["snippet"].as_str().unwrap().contains("[kitten]"));
    // A search within sessions is within them.
    let cat = "a young cat at home";
    let fenced = search(
        &sock,
        json!({ "query": cat, "mode": "meaning", "threads": [PETS] }),
    )
    .await;
    assert_eq!(fenced.len(), 2, "{fenced:#?}");
    assert!(fenced.iter().all(|h| h["thread"] == PETS), "{fenced:#?}");
    let elsewhere = search(
        &sock,
        json!({ "query": cat, "mode": "meaning", "threads": [CHAT] }),
    )
    .await;
    assert!(
        elsewhere.iter().all(|h| h["thread"] == CHAT),
        "{elsewhere:#?}"
    );

    // A transcript that grows: only the new turn is embedded; the old vectors stay.
    let models = sock.call("recall.models", &json!({})).await.unwrap();
    assert_eq!(models[0]["state"], "ready", "{models}");
    let fingerprint = models[0]["vectors_of"].as_str().unwrap().to_string();
    let cwd = home.dir.join("work/ops");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(folder.join(format!("{PETS}.jsonl")))
        .unwrap();
    std::io::Write::write_all(
        &mut f,
        user(PETS, 2, &cwd, "The vet says the cat should eat less.").as_bytes(),
    )
    .unwrap();
    status_until(&sock, |s| all_embedded(s, 7)).await;
    let diet = search(
        &sock,
        json!({ "query": "my pet needs to lose weight", "mode": "meaning", "limit": 1 }),
    )
    .await;
    assert!(
        diet[0]["snippet"].as_str().unwrap().contains("eat less"),
        "{diet:#?}"
    );

    // Idle: the model and the vectors are let go, and come back at the next search.
    let idle = status_until(&sock, |s| {
        s["dense"]["state"] == "ready" && s["dense"]["loaded"] == false
    })
    .await;
    assert_eq!(idle["dense"]["held"], 0, "{idle}");
    let again = search(
        &sock,
        json!({ "query": question, "mode": "meaning", "limit": 1 }),
    )
    .await;
    assert!(again[0]["snippet"].as_str().unwrap().contains("disk"));
    vyred.stop().await;

    // A restart goes on where it stopped: nothing is embedded anew.
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let s = sock.call("recall.status", &json!({})).await.unwrap();
    assert_eq!(s["dense"]["embedded"], 7, "kept in the store: {s}");
    let models = sock.call("recall.models", &json!({})).await.unwrap();
    assert_eq!(models[0]["vectors_of"], fingerprint.as_str());
    vyred.stop().await;
}

/// A copy of the model with its weights cut short.
fn damaged_model(home: &TempHome) -> PathBuf {
    let dir = home.dir.join("damaged-model");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["config.json", "tokenizer.json"] {
        std::fs::copy(model_dir().join(name), dir.join(name)).unwrap();
    }
    let weights = std::fs::read(model_dir().join("model.safetensors")).unwrap();
    std::fs::write(dir.join("model.safetensors"), &weights[..weights.len() / 3]).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the model: tests/run, or VYRE_TEST_EMBED_MODEL=... cargo test -- --include-ignored"]
async fn without_a_usable_model_search_is_by_words_and_says_why() {
    let home = TempHome::new("dense-broken");
    let dir = damaged_model(&home);
    write_config(&home, json!({ "model": dir }));
    write_history(&home);
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    status_until(&sock, |s| s["turns"] == 6).await;
    let models = sock.call("recall.models", &json!({})).await.unwrap();
    assert_eq!(models[0]["state"], "broken", "{models}");
    assert!(
        models[0]["error"]
            .as_str()
            .unwrap()
            .contains("model.safetensors"),
        "{models}"
    );
    let hits = search(&sock, json!({ "query": "kitten" })).await;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["found"], json!(["words"]));
    let err = sock
        .call(
            "recall.search",
            &json!({ "query": "kitten", "mode": "meaning" }),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no_model") && err.contains("cannot be used"),
        "{err}"
    );
    let s = sock.call("recall.status", &json!({})).await.unwrap();
    assert_eq!(s["dense"]["embedded"], 0, "{s}");

    // The model mended in place is read at the next look.
    std::fs::copy(
        model_dir().join("model.safetensors"),
        dir.join("model.safetensors"),
    )
    .unwrap();
    let models = sock.call("recall.models", &json!({})).await.unwrap();
    assert_eq!(models[0]["state"], "ready", "{models}");
    vyred.stop().await;

    // Off in the config: nothing embedded, and a search by meaning says so.
    let home = TempHome::new("dense-off");
    write_config(&home, json!({ "model": model_dir(), "embed": false }));
    write_history(&home);
    let vyred = InProcess::start(&home, vec![]).await;
    let sock = vyred.socket_client();
    let s = status_until(&sock, |s| s["turns"] == 6).await;
    assert_eq!(s["dense"]["state"], "off");
    let err = sock
        .call(
            "recall.search",
            &json!({ "query": "kitten", "mode": "meaning" }),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("off"), "{err}");
    vyred.stop().await;
}
