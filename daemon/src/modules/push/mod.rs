//! `push`: notifications on the person's browsers and phone, by Web Push (spec 7.10; issue 21;
//! ADR 0020). A browser subscribes with this vyred's VAPID key (`push.key`, `push.subscribe`);
//! an ask then reaches every subscription at once, with Allow and Deny on the notification, and
//! is withdrawn from them when it is answered or closed anywhere. No message is held back
//! because a window of the app is open (a device that shows the app still gets it: the person
//! may be looking elsewhere), and every message is sent to every subscription.
//!
//! Answering from a notification is an ordinary `threads.answer` by the device that got it,
//! with its own credential (its tunnel on the private network, its cookie in a browser), marked
//! `via: "notification"` in `ask.answered`; nothing in the message itself is a credential.
//!
//! Other modules notify through `push.notify` (only modules may call it).
//!
//! Where messages may go is the config's `push.services` (the browsers' push services by
//! default): a subscription that points anywhere else is refused, so no caller can make vyred
//! post to an address of its choosing.

mod deliver;
mod message;
mod notify;
mod subscriptions;
mod vapid;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::kernel::events::{Event, Filter, NewEvent};
use crate::kernel::module::{Ctx, Module, StartFuture, ToolDef};
use crate::kernel::outbound::Http;
use crate::kernel::tools::{Caller, NoInput, ToolError};

use deliver::{Outcome, Target};
use message::Message;
use subscriptions::Listed;
use vapid::Vapid;

pub struct PushModule;

#[derive(Clone)]
struct Push {
    ctx: Ctx,
    vapid: Arc<Vapid>,
    /// Made at the first notification sent: loading the system's certificate roots holds
    /// ~100 kB, which a vyred that sends none need not.
    http: Arc<std::sync::OnceLock<Http>>,
    /// Per ask, held while its notification is being sent, so its withdrawal goes after it.
    sending: Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Keys {
    /// The browser's P-256 public key, base64url.
    #[schemars(length(min = 80, max = 100))]
    p256dh: String,
    /// The browser's authentication secret, base64url.
    #[schemars(length(min = 16, max = 32))]
    auth: String,
}

/// A browser's subscription, as `PushSubscription.toJSON()` gives it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscribeInput {
    /// Where its push service takes messages for it (an https URL of a service in
    /// `push.services`).
    #[schemars(length(min = 10, max = 2048))]
    endpoint: String,
    keys: Keys,
    /// When the browser says it expires (ms), if it does; not used.
    #[serde(default, rename = "expirationTime")]
    #[allow(dead_code)]
    expiration_time: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnsubscribeInput {
    #[schemars(length(min = 1, max = 2048))]
    endpoint: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct KeyOutput {
    /// The VAPID public key, base64url of the uncompressed P-256 point: the
    /// `applicationServerKey` a browser subscribes with.
    public_key: String,
    /// Who the push services are told sent the messages.
    contact: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Subscribed {
    subscription: String,
    device: String,
    /// The push service's origin.
    service: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Removed {
    removed: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Sent {
    /// Subscriptions the message reached.
    sent: usize,
    /// Subscriptions it did not (`push.list` says why).
    failed: usize,
}

/// The device behind a call, or why this call has none.
fn device_of(caller: &Caller) -> Result<(String, String), ToolError> {
    match caller {
        Caller::Device { id, name, .. } => Ok((id.clone(), name.clone())),
        _ => Err(ToolError::refused(
            "device_only",
            "only a browser or phone subscribes, for itself: open the app on it and turn notifications on there",
        )),
    }
}

impl Push {
    fn key(&self) -> KeyOutput {
        KeyOutput {
            public_key: self.vapid.public_key(),
            contact: self.ctx.config().push.contact().to_string(),
        }
    }

    async fn subscribe(
        &self,
        input: SubscribeInput,
        caller: &Caller,
    ) -> Result<Subscribed, ToolError> {
        let (device, _) = device_of(caller)?;
        let service = vapid::origin(&input.endpoint)
            .ok_or_else(|| ToolError::invalid("endpoint is not an http(s) URL"))?;
        let services = self.ctx.config().push.services();
        if !services.iter().any(|s| s.matches(&service)) {
            return Err(ToolError::refused(
                "push_service_refused",
                format!(
                    "{service} is not a push service this Vyre sends to (push.services: {})",
                    services
                        .iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        deliver::keys(&input.keys.p256dh, &input.keys.auth).map_err(ToolError::invalid)?;
        let id = crate::kernel::ids::random_hex(8);
        let (endpoint, p256dh, auth) = (input.endpoint, input.keys.p256dh, input.keys.auth);
        let (dev, svc) = (device.clone(), service.clone());
        let kept = self
            .ctx
            .store()
            .write(move |tx| {
                let conn = tx.conn();
                if !subscriptions::holds(conn, &endpoint)?
                    && subscriptions::count_of(conn, &dev)? >= subscriptions::PER_DEVICE
                {
                    return Ok(None);
                }
                let new = subscriptions::New {
                    id: &id,
                    device: &dev,
                    endpoint: &endpoint,
                    p256dh: &p256dh,
                    auth: &auth,
                    service: &svc,
                    at: crate::now_ms(),
                };
                let (kept, _) = subscriptions::put(tx.conn(), &new)?;
                tx.emit(NewEvent::new(
                    "push.subscribed",
                    json!({ "subscription": kept, "device": dev, "service": svc }),
                ))?;
                Ok(Some(kept))
            })
            .await?;
        let Some(subscription) = kept else {
            return Err(ToolError::conflict(
                "too_many_subscriptions",
                format!(
                    "this device holds {} subscriptions already: turn notifications off in a browser it no longer uses",
                    subscriptions::PER_DEVICE
                ),
            ));
        };
        Ok(Subscribed {
            subscription,
            device,
            service,
        })
    }

    async fn unsubscribe(
        &self,
        input: UnsubscribeInput,
        caller: &Caller,
    ) -> Result<Removed, ToolError> {
        let (device, _) = device_of(caller)?;
        let removed = self
            .ctx
            .store()
            .write(move |tx| {
                let gone = subscriptions::remove(tx.conn(), &device, &input.endpoint)?;
                if let Some(id) = &gone {
                    tx.emit(NewEvent::new(
                        "push.unsubscribed",
                        json!({ "subscription": id, "device": device, "why": "unsubscribed" }),
                    ))?;
                }
                Ok(gone.is_some())
            })
            .await?;
        Ok(Removed { removed })
    }

    async fn list(&self, caller: &Caller) -> Result<Vec<Listed>, ToolError> {
        let mut rows = self
            .ctx
            .store()
            .read(|c| Ok(subscriptions::list(c)?))
            .await?;
        let names: HashMap<String, String> = self
            .ctx
            .devices()
            .list()
            .await?
            .into_iter()
            .map(|d| (d.id, d.name))
            .collect();
        let me = match caller {
            Caller::Device { id, .. } => Some(id.as_str()),
            _ => None,
        };
        for row in &mut rows {
            row.device_name = names.get(&row.device).cloned();
            row.mine = me == Some(row.device.as_str());
        }
        Ok(rows)
    }

    async fn test(&self, caller: &Caller) -> Result<Sent, ToolError> {
        let (device, _) = device_of(caller)?;
        let dev = device.clone();
        let targets = self
            .ctx
            .store()
            .read(move |c| Ok(subscriptions::targets(c, Some(&dev))?))
            .await?;
        if targets.is_empty() {
            return Err(ToolError::conflict(
                "not_subscribed",
                "this device has no subscription: turn notifications on first",
            ));
        }
        let (sent, failed) = self.send_all(targets, &message::test(), None).await;
        Ok(Sent { sent, failed })
    }

    /// `m` to each target at once; a service that cannot take it now is tried again. Returns
    /// how many it reached and how many it did not.
    async fn send_all(
        &self,
        targets: Vec<(Target, String)>,
        m: &Message,
        ask: Option<&str>,
    ) -> (usize, usize) {
        let sends = targets.into_iter().map(|(target, _device)| {
            let me = self.clone();
            let m = m.clone();
            async move { me.send_one(&target, &m).await }
        });
        let outcomes = futures_util::future::join_all(sends).await;
        let delivered = outcomes
            .iter()
            .filter(|o| **o == Outcome::Delivered)
            .count();
        let gone = outcomes.iter().filter(|o| **o == Outcome::Gone).count();
        let failed = outcomes.len() - delivered - gone;
        let mut payload =
            json!({ "kind": m.kind, "delivered": delivered, "failed": failed, "gone": gone });
        if let Some(ask) = ask {
            payload["ask"] = json!(ask);
        }
        if let Err(e) = self
            .ctx
            .events()
            .emit(NewEvent::new("push.sent", payload))
            .await
        {
            tracing::warn!(error = %e, "cannot record a push");
        }
        (delivered, failed + gone)
    }

    /// The HTTPS client, made on first use.
    fn http(&self) -> Result<&Http, String> {
        if let Some(http) = self.http.get() {
            return Ok(http);
        }
        let made = Http::new()?;
        Ok(self.http.get_or_init(|| made))
    }

    async fn send_one(&self, target: &Target, m: &Message) -> Outcome {
        let contact = self.ctx.config().push.contact().to_string();
        let outcome = match self.http() {
            Ok(http) => {
                let stop = self.ctx.shutdown();
                deliver::retrying(http, &self.vapid, &contact, target, m, &stop).await
            }
            Err(e) => Outcome::Failed(e),
        };
        let id = target.id.clone();
        let o = outcome.clone();
        let written = self
            .ctx
            .store()
            .write(move |tx| {
                match &o {
                    Outcome::Delivered => {
                        subscriptions::sent(tx.conn(), &id, crate::now_ms(), None)?
                    }
                    Outcome::Gone => {
                        if subscriptions::remove_id(tx.conn(), &id)? {
                            tx.emit(NewEvent::new(
                                "push.unsubscribed",
                                json!({ "subscription": id, "why": "gone" }),
                            ))?;
                        }
                    }
                    Outcome::Later(e) | Outcome::Failed(e) => {
                        subscriptions::sent(tx.conn(), &id, crate::now_ms(), Some(e))?
                    }
                }
                Ok(())
            })
            .await;
        if let Err(e) = written {
            tracing::warn!(error = %e, "cannot record a push's outcome");
        }
        if let Outcome::Later(e) | Outcome::Failed(e) = &outcome {
            tracing::warn!(subscription = %target.id, error = %e, "a push did not go");
        }
        outcome
    }

    /// The ask's lock, made if it is not there.
    fn ask_lock(&self, ask: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.sending
            .lock()
            .expect("push")
            .entry(ask.to_string())
            .or_default()
            .clone()
    }

    /// An event this module watches, as it comes: an ask goes out, an answered one is taken back.
    fn on_event(&self, event: Arc<Event>) {
        let payload = event.payload_value();
        let Some(ask) = payload["ask"].as_str().map(str::to_string) else {
            return;
        };
        let lock = self.ask_lock(&ask);
        let me = self.clone();
        match event.kind.as_str() {
            "ask.raised" => {
                // Taken now, in the order events come, so the withdrawal waits for it.
                let Ok(held) = lock.try_lock_owned() else {
                    return;
                };
                let thread = event.thread.clone().unwrap_or_default();
                self.ctx.spawn(async move {
                    let title = me.title(&thread).await;
                    if let Some(m) = message::ask(&thread, title.as_deref(), &payload) {
                        me.broadcast(&m, &ask).await;
                    }
                    drop(held);
                });
            }
            "ask.answered" => {
                self.ctx.spawn(async move {
                    let _after = lock.lock().await;
                    me.broadcast(&message::withdraw(&ask), &ask).await;
                    me.sending.lock().expect("push").remove(&ask);
                });
            }
            _ => {}
        }
    }

    async fn broadcast(&self, m: &Message, ask: &str) {
        let targets = match self
            .ctx
            .store()
            .read(|c| Ok(subscriptions::targets(c, None)?))
            .await
        {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the push subscriptions");
                return;
            }
        };
        if !targets.is_empty() {
            self.send_all(targets, m, Some(ask)).await;
        }
    }

    /// The thread's title, for the notification.
    async fn title(&self, thread: &str) -> Option<String> {
        let got = self
            .ctx
            .call("threads.get", json!({ "thread": thread }))
            .await
            .ok()?;
        got["title"].as_str().map(str::to_string)
    }

    /// Forget the subscriptions of a device as it is revoked, and of any revoked while vyred
    /// was down.
    async fn follow_revocations(self) {
        let mut revoked = self.ctx.devices().revocations();
        let stop = self.ctx.shutdown();
        self.forget_inactive().await;
        loop {
            let id = tokio::select! {
                () = stop.cancelled() => return,
                id = revoked.recv() => id,
            };
            match id {
                Ok(id) => self.forget_device(id).await,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    self.forget_inactive().await
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    }

    /// Forget the subscriptions of every device that is no longer active (revoked while vyred
    /// was down, or while this listener lagged).
    async fn forget_inactive(&self) {
        let held = self
            .ctx
            .store()
            .read(|c| Ok(subscriptions::devices(c)?))
            .await;
        for device in held.into_iter().flatten() {
            if !self.ctx.devices().is_active(&device) {
                self.forget_device(device).await;
            }
        }
    }

    async fn forget_device(&self, device: String) {
        let written = self
            .ctx
            .store()
            .write(move |tx| {
                for id in subscriptions::remove_device(tx.conn(), &device)? {
                    tx.emit(NewEvent::new(
                        "push.unsubscribed",
                        json!({ "subscription": id, "device": device, "why": "device_revoked" }),
                    ))?;
                }
                Ok(())
            })
            .await;
        if let Err(e) = written {
            tracing::warn!(error = %e, "cannot forget a revoked device's push subscriptions");
        }
    }
}

impl Module for PushModule {
    fn name(&self) -> &str {
        "push"
    }

    fn manifest(&self) -> &str {
        include_str!("module.json")
    }

    fn start(&self, ctx: Ctx) -> StartFuture {
        Box::pin(async move {
            ctx.store().migrate(subscriptions::MIGRATIONS).await?;
            let contact = ctx.config().push.contact();
            if !(contact.starts_with("mailto:") || contact.starts_with("https://")) {
                return Err(format!(
                    "push.contact must be a mailto: or https: address, not {contact:?}"
                )
                .into());
            }
            let vapid = Vapid::load_or_create(&ctx.home().root().join("push").join("vapid.p8"))?;
            let push = Push {
                ctx: ctx.clone(),
                vapid: Arc::new(vapid),
                http: Arc::default(),
                sending: Arc::default(),
            };
            ctx.tool_with(
                ToolDef::new(
                    "push.key",
                    "This Vyre's VAPID public key, which a browser subscribes to its notifications with.",
                ),
                &push,
                |p, _: NoInput, _| async move { Ok::<_, ToolError>(p.key()) },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "push.subscribe",
                    "Send this browser or phone Vyre's notifications (asks with Allow and Deny): its push subscription, as PushSubscription.toJSON() gives it.",
                )
                .finishes()
                .person_only(),
                &push,
                |p, input: SubscribeInput, cx| async move { p.subscribe(input, &cx.caller).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "push.unsubscribe",
                    "Stop sending notifications to this device's subscription at the endpoint.",
                )
                .finishes()
                .person_only(),
                &push,
                |p, input: UnsubscribeInput, cx| async move { p.unsubscribe(input, &cx.caller).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "push.list",
                    "The browsers and phones that get notifications: their device, push service and last message.",
                ),
                &push,
                |p, _: NoInput, cx| async move { p.list(&cx.caller).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "push.test",
                    "Send a test notification to the calling device's subscriptions.",
                )
                .finishes()
                .person_only(),
                &push,
                |p, _: NoInput, cx| async move { p.test(&cx.caller).await },
            )?;
            ctx.tool_with(
                ToolDef::new(
                    "push.notify",
                    "For Vyre's modules: a notification on every subscribed device (a Gate item, a reminder), or its withdrawal.",
                ),
                &push,
                |p, input: notify::NotifyInput, cx| async move { p.notify(input, &cx.caller).await },
            )?;
            let watcher = push.clone();
            ctx.events().on(
                Filter {
                    types: vec!["ask.raised".into(), "ask.answered".into()],
                    ..Filter::default()
                },
                move |event| {
                    watcher.on_event(event);
                    std::future::ready(())
                },
            );
            ctx.spawn(push.follow_revocations());
            Ok(())
        })
    }
}
