//! The fallback at a subscription's limit (ADR 0030 section 4; spec section 10): when Claude
//! refuses a turn because the subscription's limit is reached, the thread goes on with an API
//! key, if one is allowed (the agent's `auth.fallback`, or for other threads the machine's
//! `anthropic-api-key` granted to sessions), until the limit resets, and says so in the thread.

use std::sync::Arc;

use serde_json::json;

use super::*;

/// When the CLI does not say when the limit resets: a subscription's window is five hours.
const DEFAULT_WINDOW_MS: i64 = 5 * 60 * 60 * 1000;

impl Switchboard {
    /// The turn `text` was refused at the limit: resume the thread on the fallback key and run
    /// the words again, or say why it cannot.
    ///
    /// Boxed: it stops and relaunches the thread, whose actor is what calls this.
    pub(super) fn fall_back(
        self: Arc<Self>,
        thread: String,
        text: String,
        resets: Option<i64>,
    ) -> crate::kernel::contracts::provider::BoxFuture<'static, ()> {
        Box::pin(async move { self.fall_back_now(&thread, &text, resets).await })
    }

    async fn fall_back_now(self: &Arc<Self>, thread: &str, text: &str, resets: Option<i64>) {
        let until = resets.unwrap_or_else(|| crate::now_ms() + DEFAULT_WINDOW_MS);
        let notice =
            |message: String| json!({ "level": "warning", "text": message, "resets_at": until });
        if self.on_fallback(thread).await {
            // Already on the API key: nothing further to fall back to.
            self.emit(
                "thread.notice",
                thread,
                notice("The API key's limit was reached as well; this thread waits until the limit resets.".into()),
            )
            .await;
            return;
        }
        let agent = match self.launch_options(thread).await {
            Ok(Some((req, _))) => req.agent,
            _ => return,
        };
        if let Err(e) = self.router.credential_for(agent.as_deref(), true).await {
            self.emit(
                "thread.notice",
                thread,
                notice(format!(
                    "The subscription's limit is reached and no API key may take over ({}); this thread waits until the limit resets.",
                    e.message
                )),
            )
            .await;
            return;
        }
        let t = thread.to_string();
        let told = notice("The subscription's limit was reached: this thread goes on with the API key until the limit resets, and runs your last message again.".into());
        let stored = self
            .change(move |tx| {
                rows::runs::set_fallback(tx.conn(), &t, until)?;
                tell(
                    tx,
                    &t,
                    "thread.fallback",
                    json!({ "to": "api-key", "until": until }),
                )?;
                tell(tx, &t, "thread.notice", told)
            })
            .await;
        if let Err(e) = stored {
            tracing::warn!(thread, error = %e, "cannot record the fallback");
            return;
        }
        if let Err(e) = self.stop(thread, "fallback").await {
            tracing::warn!(thread, error = %e, "cannot stop the thread to fall back");
            return;
        }
        if let Err(e) = self.send(thread, Message::words(text)).await {
            self.emit(
                "thread.notice",
                thread,
                notice(format!(
                    "Going on with the API key failed: {}",
                    crate::kernel::tools::ToolError::from(e).message
                )),
            )
            .await;
        }
    }
}
