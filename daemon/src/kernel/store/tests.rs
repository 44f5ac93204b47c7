use super::*;
use crate::kernel::events::{Bus, NewEvent};
use serde_json::json;

fn temp_db(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vyre-store-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("vyre.db")
}

#[tokio::test]
async fn a_fresh_database_gets_every_kernel_migration() {
    let path = temp_db("fresh");
    let store = Store::open(&path, Bus::new()).unwrap();
    let (version, mode, timeout) = store
        .read(|c| {
            Ok((
                migrate::current_version(c, "kernel")?,
                c.query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))?,
                c.query_row("PRAGMA busy_timeout", [], |r| r.get::<_, i64>(0))?,
            ))
        })
        .await
        .unwrap();
    assert_eq!(
        version as usize,
        crate::kernel::migrations::MIGRATIONS.len()
    );
    assert_eq!(mode, "wal");
    assert_eq!(timeout, 10_000);
    store.close().await;
}

#[tokio::test]
async fn an_older_database_is_upgraded_and_keeps_its_rows() {
    let path = temp_db("upgrade");
    {
        // A database as the first release left it: only migration 1, with an event in it.
        let mut conn = open_connection(&path, false).unwrap();
        migrate(
            &mut conn,
            "kernel",
            &crate::kernel::migrations::MIGRATIONS[..1],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO events (at, type, source, payload) VALUES (1, 'daemon.started', 'kernel', '{}')",
            [],
        )
        .unwrap();
        assert!(
            conn.prepare("SELECT id FROM devices").is_err(),
            "devices came with migration 2"
        );
    }
    let store = Store::open(&path, Bus::new()).unwrap();
    let (events, devices) = store
        .read(|c| {
            Ok((
                crate::kernel::events::log::count(c)?,
                c.query_row("SELECT COUNT(*) FROM devices", [], |r| r.get::<_, i64>(0))?,
            ))
        })
        .await
        .unwrap();
    assert_eq!((events, devices), (1, 0));
    store.close().await;
}

#[test]
fn a_database_newer_than_the_code_is_refused() {
    let path = temp_db("newer");
    let mut conn = open_connection(&path, false).unwrap();
    let future = [
        Migration {
            version: 1,
            sql: "CREATE TABLE notes_a (x)",
        },
        Migration {
            version: 2,
            sql: "CREATE TABLE notes_b (x)",
        },
    ];
    migrate(&mut conn, "notes", &future).unwrap();
    let err = migrate(&mut conn, "notes", &future[..1]).unwrap_err();
    assert!(
        err.to_string().contains("newer than this vyred knows"),
        "{err}"
    );
    let err = migrate(
        &mut conn,
        "bad",
        &[Migration {
            version: 2,
            sql: "",
        }],
    )
    .unwrap_err();
    assert!(matches!(err, MigrationError::BadNumbering { .. }));
}

#[test]
fn a_failing_migration_leaves_the_previous_version() {
    let path = temp_db("failing");
    let mut conn = open_connection(&path, false).unwrap();
    let list = [
        Migration {
            version: 1,
            sql: "CREATE TABLE notes_a (x)",
        },
        Migration {
            version: 2,
            sql: "CREATE TABLE notes_b (x); THIS IS NOT SQL",
        },
    ];
    assert!(migrate(&mut conn, "notes", &list).is_err());
    assert_eq!(migrate::current_version(&conn, "notes").unwrap(), 1);
    assert!(
        conn.prepare("SELECT * FROM notes_b").is_err(),
        "migration 2 was rolled back whole"
    );
}

#[tokio::test]
async fn a_failed_job_rolls_back_only_itself_and_its_events() {
    let path = temp_db("rollback");
    let bus = Bus::new();
    let mut rx = bus.subscribe();
    let store = Store::open(&path, bus.clone()).unwrap();
    let ok = store.write(|tx| tx.emit(NewEvent::new("test.kept", json!({}))));
    let bad = store.write(|tx| {
        tx.emit(NewEvent::new("test.dropped", json!({})))?;
        Err::<(), _>(StoreError::Refused("no".into()))
    });
    let (ok, bad) = tokio::join!(ok, bad);
    let id = ok.unwrap();
    assert!(bad.is_err());
    let got = rx.recv().await.unwrap();
    assert_eq!(got.events().len(), 1);
    let got = &got.events()[0];
    assert_eq!((got.id, got.kind.as_str()), (id, "test.kept"));
    let kinds = store
        .read(|c| {
            Ok(crate::kernel::events::log::since(c, 0, 10)?
                .into_iter()
                .map(|e| e.kind)
                .collect::<Vec<_>>())
        })
        .await
        .unwrap();
    assert_eq!(kinds, vec!["test.kept"]);
    store.close().await;
}

#[tokio::test]
async fn a_panicking_job_does_not_take_the_writer_down() {
    let path = temp_db("panic");
    let store = Store::open(&path, Bus::new()).unwrap();
    let err = store
        .write(|_tx| -> Result<(), StoreError> { panic!("boom") })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("panicked"), "{err}");
    let id = store
        .write(|tx| tx.emit(NewEvent::new("test.after", json!({}))))
        .await
        .unwrap();
    assert_eq!(id, 1);
    store.close().await;
}

#[tokio::test]
async fn secrets_and_bad_events_are_refused() {
    let path = temp_db("refuse");
    let store = Store::open(&path, Bus::new()).unwrap();
    let key = format!("sk-ant-api03-{}", "Ab3dE".repeat(8));
    for event in [
        NewEvent::new(
            "test.leaked",
            json!({ "note": format!("the key is {key}") }),
        ),
        NewEvent::new("Bad Type", json!({})),
        NewEvent::new("test.scalar", json!(3)),
        NewEvent::new("test.big", json!({ "x": "y".repeat(70_000) })),
    ] {
        let err = store.write(move |tx| tx.emit(event)).await.unwrap_err();
        assert!(matches!(err, StoreError::Refused(_)), "{err}");
        assert!(
            !err.to_string().contains(&key),
            "the refusal never repeats the value"
        );
    }
    let n = store.read(crate::kernel::events::log::count).await.unwrap();
    assert_eq!(n, 0);
    store.close().await;
}

#[tokio::test]
async fn concurrent_writers_share_commits_and_keep_id_order() {
    let path = temp_db("group");
    let bus = Bus::new();
    let mut rx = bus.subscribe();
    let store = Store::open(&path, bus).unwrap();
    let mut tasks = Vec::new();
    for i in 0..200 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            store
                .write(move |tx| tx.emit(NewEvent::new("test.burst", json!({ "i": i }))))
                .await
                .unwrap()
        }));
    }
    let mut ids = Vec::new();
    for t in tasks {
        ids.push(t.await.unwrap());
    }
    ids.sort();
    assert_eq!(ids, (1..=200).collect::<Vec<i64>>());
    let mut expected = 1;
    while expected <= 200 {
        for event in rx.recv().await.unwrap().events() {
            assert_eq!(event.id, expected, "broadcast in id order");
            expected += 1;
        }
    }
    store.close().await;
    assert!(
        store.write(|_| Ok(())).await.is_err(),
        "a closed store refuses writes"
    );
}

#[tokio::test]
async fn a_read_given_up_by_its_caller_is_interrupted_and_its_connection_reused() {
    let path = temp_db("cancel");
    let store = Store::open(&path, Bus::new()).unwrap();
    let (ended_tx, ended) = std::sync::mpsc::channel();
    // A query that never ends by itself.
    let forever = store.read(move |c| {
        let r = c.query_row(
            "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n",
            [],
            |r| r.get::<_, i64>(0),
        );
        let _ = ended_tx.send(r.map_err(|e| e.to_string()));
        Ok(())
    });
    // Its caller waits a moment, then goes away.
    let gave_up = tokio::time::timeout(Duration::from_millis(200), forever).await;
    assert!(gave_up.is_err(), "the query cannot have finished");
    let why = tokio::task::spawn_blocking(move || ended.recv_timeout(Duration::from_secs(30)))
        .await
        .unwrap()
        .expect("the query was interrupted");
    assert!(why.unwrap_err().contains("interrupt"), "an interrupt");
    // The pooled connection answers the next caller, with no flag left on it.
    let one: i64 = store
        .read(|c| Ok(c.query_row("SELECT 1", [], |r| r.get(0))?))
        .await
        .unwrap();
    assert_eq!(one, 1);
    store.close().await;
}

#[tokio::test]
async fn the_log_is_copied_back_by_its_own_thread_and_stays_small_under_steady_writes() {
    let path = temp_db("checkpoints");
    let store = Store::open(&path, Bus::new()).unwrap();
    store
        .write(|tx| Ok(tx.conn().execute_batch("CREATE TABLE filler (b BLOB)")?))
        .await
        .unwrap();
    let wal = path.with_file_name("vyre.db-wal");
    let mut largest = 0;
    // 400 commits of about 25 pages: 10,000 pages (40 MB) written, far below the writer's own
    // cap, so only the checkpoint thread can bring the log back to its start.
    for _ in 0..400 {
        store
            .write(|tx| {
                Ok(tx
                    .conn()
                    .execute("INSERT INTO filler VALUES (randomblob(100000))", [])?)
            })
            .await
            .unwrap();
        largest = largest.max(std::fs::metadata(&wal).unwrap().len());
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert!(
        largest < 6 * 1000 * 4096,
        "the log went back to its start every thousand pages or so, not grown to {largest} bytes"
    );
    // Closing folds the log back whole.
    store.close().await;
    assert_eq!(std::fs::metadata(&wal).map_or(0, |m| m.len()), 0);
}
