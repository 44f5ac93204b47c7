use super::*;

/// Counts the handlers that ended, however they ended (finished, aborted, or dropped).
struct Ended(Arc<std::sync::atomic::AtomicUsize>);
impl Drop for Ended {
    fn drop(&mut self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A registry with `wait` (never ends by itself) and `write` (the same, but finishes once
/// started: it ends when told), each counting its ends.
fn waiting_tools(
    registry: &Registry,
) -> (
    Arc<std::sync::atomic::AtomicUsize>,
    Arc<tokio::sync::Notify>,
) {
    #[derive(serde::Deserialize, JsonSchema)]
    struct In {}
    let ended = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let release = Arc::new(tokio::sync::Notify::new());
    for (name, finishes) in [("t.wait", false), ("t.write", true)] {
        let (e, r) = (ended.clone(), release.clone());
        let (input, output, handler) = typed(move |_: In, _| {
            let guard = Ended(e.clone());
            let r = r.clone();
            async move {
                r.notified().await;
                drop(guard);
                Ok::<_, ToolError>(1)
            }
        });
        let spec = ToolSpec {
            name: name.into(),
            module: "t".into(),
            description: String::new(),
            person_only: false,
            for_sessions: ForSessions::No,
            for_models: true,
            cli: false,
            onboarding: false,
            input_schema: schema_text(&input),
            output_schema: schema_text(&output),
        };
        registry.insert(spec, handler, Health::default(), finishes);
    }
    (ended, release)
}

async fn until(n: &std::sync::atomic::AtomicUsize, want: usize) {
    while n.load(std::sync::atomic::Ordering::SeqCst) != want {
        tokio::task::yield_now().await;
    }
}

fn module() -> Caller {
    Caller::Module { name: "m".into() }
}

#[tokio::test]
async fn a_call_whose_caller_goes_away_is_aborted_unless_it_finishes() {
    let registry = Registry::new();
    let (ended, release) = waiting_tools(&registry);
    let call = registry.call("t.wait", serde_json::json!({}), module());
    // The caller gives up on it: the handler is aborted at once.
    assert!(
        tokio::time::timeout(std::time::Duration::from_millis(50), call)
            .await
            .is_err()
    );
    until(&ended, 1).await;
    // One that finishes once started is left running when its caller goes.
    let call = registry.call("t.write", serde_json::json!({}), module());
    assert!(
        tokio::time::timeout(std::time::Duration::from_millis(50), call)
            .await
            .is_err()
    );
    tokio::task::yield_now().await;
    assert_eq!(ended.load(std::sync::atomic::Ordering::SeqCst), 1);
    release.notify_waiters();
    until(&ended, 2).await;
}

#[tokio::test]
async fn a_stop_ends_calls_in_flight_and_waits_for_those_that_finish() {
    let stop = CancellationToken::new();
    let registry = Registry::stopped_by(stop.clone());
    let (ended, release) = waiting_tools(&registry);
    let (r1, r2) = (registry.clone(), registry.clone());
    let waiting =
        tokio::spawn(async move { r1.call("t.wait", serde_json::json!({}), module()).await });
    let writing =
        tokio::spawn(async move { r2.call("t.write", serde_json::json!({}), module()).await });
    tokio::task::yield_now().await;
    stop.cancel();
    let err = waiting.await.unwrap().unwrap_err();
    assert_eq!(err.code, "stopping");
    // The write is still running; draining waits for it.
    let drain = tokio::spawn({
        let r = registry.clone();
        async move { r.drain().await }
    });
    tokio::task::yield_now().await;
    assert!(!drain.is_finished());
    release.notify_waiters();
    assert_eq!(writing.await.unwrap().unwrap(), 1);
    drain.await.unwrap();
    assert_eq!(ended.load(std::sync::atomic::Ordering::SeqCst), 2);
    let refused = registry
        .call("t.wait", serde_json::json!({}), module())
        .await;
    assert_eq!(refused.unwrap_err().code, "stopping");
}

#[tokio::test]
async fn the_calls_a_finishing_tool_makes_finish_too() {
    #[derive(serde::Deserialize, JsonSchema)]
    struct In {}
    let stop = CancellationToken::new();
    let registry = Registry::stopped_by(stop.clone());
    let (ended, release) = waiting_tools(&registry);
    // `t.outer` finishes once started, and waits on `t.wait`, which alone would not.
    let inner = registry.clone();
    let (input, output, handler) = typed(move |_: In, _| {
        let inner = inner.clone();
        async move { inner.call("t.wait", serde_json::json!({}), module()).await }
    });
    let spec = ToolSpec {
        name: "t.outer".into(),
        module: "t".into(),
        description: String::new(),
        person_only: false,
        for_sessions: ForSessions::No,
        for_models: true,
        cli: false,
        onboarding: false,
        input_schema: schema_text(&input),
        output_schema: schema_text(&output),
    };
    registry.insert(spec, handler, Health::default(), true);
    let r = registry.clone();
    let outer =
        tokio::spawn(async move { r.call("t.outer", serde_json::json!({}), module()).await });
    tokio::task::yield_now().await;
    stop.cancel();
    tokio::task::yield_now().await;
    assert!(!outer.is_finished(), "the stop did not cut the inner call");
    release.notify_waiters();
    assert_eq!(outer.await.unwrap().unwrap(), 1);
    until(&ended, 1).await;
}

#[test]
fn tool_names() {
    for ok in [
        "system.status",
        "projects.add-threads",
        "vault.pass.create",
        "a1.b_c",
    ] {
        assert!(valid_name(ok), "{ok}");
    }
    for bad in [
        "",
        "system",
        ".status",
        "system.",
        "System.status",
        "system.Status",
        "../etc.passwd",
        "system./x",
        "sys tem.status",
        "system.status-",
    ] {
        assert!(!valid_name(bad), "{bad}");
    }
}
