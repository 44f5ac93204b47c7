//! The web app's snapshot of the API: `ui/src/lib/openapi/openapi.json` is what vyred publishes at
//! `/v1/openapi.json` to its owner, in both roles the app talks to (the box and the Mac's local
//! vyred), merged. The app's TypeScript types are generated from that file (`npm run gen:api` in
//! `ui/`), so this test is the daemon's half of "the types cannot drift": it fails when a tool's
//! schema changes until the snapshot is rewritten with
//! `VYRE_UPDATE_OPENAPI=1 cargo test -p vyre --test it openapi`.

use std::path::PathBuf;

use serde_json::{Map, Value};
use vyre::kernel::config::Role;

use crate::support::*;

fn snapshot_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ui/src/lib/openapi/openapi.json")
}

/// The document an owner of a fresh vyred in `role` is given.
async fn published(role: Role) -> Value {
    let home = TempHome::new(&format!("openapi-{role:?}"));
    let vyred = InProcess::start_with(&home, vec![], |o| o.role = Some(role)).await;
    let (status, doc) = vyred
        .socket_client()
        .json(hyper::Method::GET, "/v1/openapi.json", None, &[])
        .await
        .unwrap();
    assert_eq!(status, 200, "{doc}");
    vyred.stop().await;
    doc
}

/// Every object's keys in order, so the file is the same on every machine and run.
fn sorted(v: Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// `b`'s entries added to `a`'s; an entry in both must be the same in both roles.
fn union(a: &mut Map<String, Value>, b: &Map<String, Value>, what: &str) {
    for (k, v) in b {
        match a.get(k) {
            Some(mine) => assert_eq!(mine, v, "{what} {k} differs between the box and local"),
            None => {
                a.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The two roles' documents as one: every path and schema either offers.
fn merged(mut doc: Value, other: &Value) -> Value {
    for (section, what) in [("/paths", "path"), ("/components/schemas", "schema")] {
        let theirs = other.pointer(section).and_then(Value::as_object).unwrap();
        let mine = doc
            .pointer_mut(section)
            .and_then(Value::as_object_mut)
            .unwrap();
        union(mine, &theirs.clone(), what);
    }
    // The release's number is not the API's shape: a version bump must not need a new snapshot.
    doc["info"]["version"] = Value::String("snapshot".into());
    sorted(doc)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_apps_openapi_snapshot_is_what_vyred_publishes() {
    let doc = merged(published(Role::Box).await, &published(Role::Local).await);
    let text = serde_json::to_string_pretty(&doc).unwrap() + "\n";
    let path = snapshot_path();
    if std::env::var_os("VYRE_UPDATE_OPENAPI").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != text {
        let first = committed
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(committed.lines().count().min(text.lines().count()));
        panic!(
            "{} is not what vyred publishes (first difference at line {}).\n\
             A tool's schema changed: update the snapshot and the app's types with\n\
             \x20   VYRE_UPDATE_OPENAPI=1 cargo test -p vyre --test it openapi\n\
             \x20   cd ui && npm run gen:api\n\
             and commit both files.",
            path.display(),
            first + 1
        );
    }
}
