//! One box thread followed live from the Mac (issue 20): `/v1/boxes/<box>/threads/<thread>/events`
//! passes on the box's own stream of that thread, word by word, resumable with the box's ids,
//! stored nowhere on the Mac, and refused to anyone but the Mac's person.

use std::time::Duration;

use serde_json::{Value, json};

use crate::link::{free_port, mac_home, pair, start_box, start_mac};
use crate::support::*;

/// `n` words of thread `thread` on the box, as its sessions say them (`thread.text` deltas).
async fn say(on_box: &InProcess, thread: &str, n: u32) {
    on_box
        .socket_client()
        .call(
            "boxprobe.emit",
            &json!({ "n": n, "kind": "thread.text", "thread": thread }),
        )
        .await
        .unwrap();
}

/// The next `n` events of a stream, as (id, type, thread).
async fn next_events(
    stream: &mut vyre::surfaces::client::EventStream,
    n: usize,
) -> Vec<(String, String, String)> {
    let mut got = Vec::new();
    while got.len() < n {
        let message = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .expect("the box's word within 10 s")
            .expect("the stream goes on")
            .unwrap();
        let event: Value = serde_json::from_str(&message.data).unwrap();
        got.push((
            message.id.unwrap(),
            event["type"].as_str().unwrap().to_string(),
            event["thread"].as_str().unwrap().to_string(),
        ));
    }
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mac_follows_one_box_thread_word_by_word_and_resumes_where_it_left_off() {
    let box_home = TempHome::new("link-live-box");
    let the_box = start_box(&box_home, free_port()).await;
    let mac_home = mac_home("link-live-mac");
    let mac = start_mac(&mac_home).await;
    let paired = pair(&the_box, &mac).await;
    let id = paired["id"].as_str().unwrap().to_string();
    let (_, token) = mac.device_token("browser").await;
    let browser = mac.http_client(Some(&token));
    let path = format!("/v1/boxes/{id}/threads/t1/events");

    let mut stream = browser.event_stream(&path, None).await.unwrap();
    say(&the_box, "t1", 3).await;
    say(&the_box, "t2", 2).await; // another thread: not this stream's
    say(&the_box, "t1", 2).await;
    let got = next_events(&mut stream, 5).await;
    assert!(
        got.iter()
            .all(|(_, t, th)| t == "thread.text" && th == "t1"),
        "{got:?}"
    );
    let ids: Vec<i64> = got.iter().map(|(i, _, _)| i.parse().unwrap()).collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "the box's ids, in order"
    );
    // Nothing of it is kept on the Mac.
    assert!(
        !stored_events(&mac_home.home().database())
            .iter()
            .any(|(_, t, _)| t == "thread.text"),
        "the Mac stores no word of the box's thread"
    );

    // The app drops the stream; words go on; it comes back from its last id and misses none.
    drop(stream);
    say(&the_box, "t1", 2).await;
    let last = got.last().unwrap().0.clone();
    let mut again = browser.event_stream(&path, Some(&last)).await.unwrap();
    let resumed = next_events(&mut again, 2).await;
    assert!(
        resumed
            .iter()
            .all(|(i, _, th)| th == "t1" && i.parse::<i64>().unwrap() > ids[4])
    );
    say(&the_box, "t1", 1).await;
    assert_eq!(next_events(&mut again, 1).await.len(), 1, "then live again");

    // What may not follow it, or must not reach the box's query.
    for (bad, want) in [
        (
            format!("/v1/boxes/{id}/threads/t1%26types%3Dvault.%2A/events"),
            400,
        ),
        ("/v1/boxes/nope/threads/t1/events".to_string(), 404),
    ] {
        let err = browser.event_stream(&bad, None).await.err().unwrap();
        assert!(
            matches!(err, vyre::surfaces::client::ClientError::Api { status, .. } if status == want),
            "{bad}: {err:?}"
        );
    }
    let err = mac
        .http_client(None)
        .event_stream(&path, None)
        .await
        .err()
        .unwrap();
    assert!(
        matches!(
            err,
            vyre::surfaces::client::ClientError::Api { status: 401, .. }
        ),
        "{err:?}"
    );
    drop(again);
    the_box.stop().await;
    mac.stop().await;
}
