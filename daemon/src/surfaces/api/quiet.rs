//! "Once vyred is quiet after work": a hook that runs when [`QUIET`] has passed with no request
//! on any listener and no event in the log, after at least one of them. `vyre daemon` gives
//! glibc's allocator its freed pages back there (an idle vyred held twice its own memory after
//! a few CLI calls until it did). While nothing happens the waiting task is parked: no timer
//! runs in an idle vyred (architecture.md, Idle cost).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::middleware::Next;
use tokio::sync::{Notify, broadcast};
use tokio_util::sync::CancellationToken;

use crate::kernel::Kernel;

/// How long nothing must happen before the hook runs: a session's turn writes events every
/// few hundred milliseconds and a person's clicks come seconds apart, so work that goes on
/// does not run it each time it pauses.
pub const QUIET: Duration = Duration::from_secs(5);

/// Something happened: a request, or (seen by the task itself) an event.
#[derive(Clone, Default)]
pub struct Activity(Arc<Notify>);

impl Activity {
    pub fn touch(&self) {
        // A permit is kept when the task is not waiting yet, so no touch is lost.
        self.0.notify_one();
    }

    /// `app`, with every request (its start and its answer) counted as activity.
    pub fn counting(&self, app: Router) -> Router {
        let activity = self.clone();
        app.layer(axum::middleware::from_fn(
            move |request: Request, next: Next| {
                let activity = activity.clone();
                async move {
                    activity.touch();
                    let response = next.run(request).await;
                    activity.touch();
                    response
                }
            },
        ))
    }
}

/// Run `then` each time vyred has been quiet for `quiet` after activity, until vyred stops.
pub fn spawn(kernel: &Kernel, activity: &Activity, quiet: Duration, then: fn()) {
    let signal = activity.0.clone();
    let bus = kernel.bus().subscribe();
    let stop = kernel.shutdown_token().clone();
    kernel.tasks().spawn(run(signal, bus, quiet, then, stop));
}

async fn run<T: Clone>(
    signal: Arc<Notify>,
    mut bus: broadcast::Receiver<T>,
    quiet: Duration,
    then: fn(),
    stop: CancellationToken,
) {
    // Busy: something happened and `quiet` has not yet passed since; while not busy, nothing
    // but activity wakes the task (the sleep is not polled).
    let mut busy = false;
    loop {
        tokio::select! {
            _ = signal.notified() => busy = true,
            got = bus.recv() => {
                if matches!(got, Err(broadcast::error::RecvError::Closed)) {
                    return;
                }
                busy = true;
            }
            _ = tokio::time::sleep(quiet), if busy => {
                busy = false;
                then();
            }
            _ = stop.cancelled() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    static RAN: AtomicUsize = AtomicUsize::new(0);

    fn count() {
        RAN.fetch_add(1, Ordering::SeqCst);
    }

    /// Lets the task run until it waits again (time is paused: a sleep it is in does not end).
    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn runs_once_after_a_quiet_spell_that_follows_work_and_never_while_idle() {
        let activity = Activity::default();
        let (events, bus) = broadcast::channel::<u32>(16);
        let stop = CancellationToken::new();
        let task = tokio::spawn(run(activity.0.clone(), bus, QUIET, count, stop.clone()));
        // Idle from the start: however long, nothing runs.
        tokio::time::sleep(QUIET * 100).await;
        settle().await;
        assert_eq!(RAN.load(Ordering::SeqCst), 0);

        // Work that keeps going (a request, then events closer together than QUIET) holds it off.
        activity.touch();
        for i in 0..5 {
            tokio::time::sleep(QUIET / 2).await;
            events.send(i).unwrap();
            settle().await;
        }
        assert_eq!(RAN.load(Ordering::SeqCst), 0);
        // QUIET with nothing: it runs once, and not again while nothing follows.
        tokio::time::sleep(QUIET + Duration::from_millis(1)).await;
        settle().await;
        assert_eq!(RAN.load(Ordering::SeqCst), 1);
        tokio::time::sleep(QUIET * 100).await;
        settle().await;
        assert_eq!(RAN.load(Ordering::SeqCst), 1);

        // An event alone is work too.
        events.send(9).unwrap();
        settle().await;
        tokio::time::sleep(QUIET + Duration::from_millis(1)).await;
        settle().await;
        assert_eq!(RAN.load(Ordering::SeqCst), 2);

        stop.cancel();
        task.await.unwrap();
    }

    #[tokio::test]
    async fn a_request_is_activity_at_its_start_and_at_its_answer() {
        use tower::ServiceExt;
        let activity = Activity::default();
        let (held, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        let app = activity.counting(Router::new().route(
            "/",
            axum::routing::get({
                let (held, release) = (held.clone(), release.clone());
                move || async move {
                    held.notify_one();
                    release.notified().await;
                    "ok"
                }
            }),
        ));
        let call = tokio::spawn(app.oneshot(Request::new(axum::body::Body::empty())));
        held.notified().await;
        // Its start was counted (the permit is there while the handler still runs).
        tokio::time::timeout(Duration::from_secs(5), activity.0.notified())
            .await
            .expect("counted at the start");
        release.notify_one();
        let response = call.await.unwrap().unwrap();
        assert_eq!(response.status(), 200);
        tokio::time::timeout(Duration::from_secs(5), activity.0.notified())
            .await
            .expect("counted at the answer");
    }
}
