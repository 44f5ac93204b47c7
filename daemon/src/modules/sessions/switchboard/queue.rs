//! Vyre's own queue of "after this turn" messages (`threads_inbox`), from the tools' side: a
//! queued message can be taken back, edited, or sent at once until its turn comes. The
//! actor queues them and hands them over (`actor/turn.rs`).

use serde_json::json;

use super::*;

impl Switchboard {
    /// Why `queued` cannot be changed: it was queued once and is no longer (sent, taken back),
    /// or there never was such a message.
    async fn not_queued(&self, queued: i64) -> Error {
        let known = self
            .read(move |c| Ok(rows::inbox::thread_of(c, queued)?.is_some()))
            .await
            .unwrap_or(true);
        if known {
            Error::NotQueued("that message is no longer queued")
        } else {
            Error::UnknownQueued
        }
    }

    /// Take a queued message back before it is handed over.
    pub async fn unqueue(&self, queued: i64) -> Result<()> {
        let done = self
            .change(move |tx| {
                let Some((thread, uuid)) = rows::inbox::unqueue(tx.conn(), queued)? else {
                    return Ok(false);
                };
                let payload = json!({ "queued": queued, "uuid": uuid, "reason": "unqueued" });
                tell(tx, &thread, "thread.unqueued", payload)?;
                Ok(true)
            })
            .await?;
        if !done {
            return Err(self.not_queued(queued).await);
        }
        Ok(())
    }

    /// Change the words of a queued message.
    pub async fn edit(&self, queued: i64, text: &str) -> Result<()> {
        if text.trim().is_empty() {
            return Err(Error::EmptyText);
        }
        let x = text.to_string();
        let done = self
            .change(move |tx| {
                let Some((thread, uuid)) = rows::inbox::edit(tx.conn(), queued, &x)? else {
                    return Ok(false);
                };
                let payload = json!({ "queued": queued, "uuid": uuid, "text": clean(&x), "edited": true, "status": InboxStatus::Queued });
                tell(tx, &thread, "thread.queued", payload)?;
                Ok(true)
            })
            .await?;
        if !done {
            return Err(self.not_queued(queued).await);
        }
        Ok(())
    }

    /// Send a queued message at once.
    pub async fn send_now(&self, queued: i64) -> Result<Sent> {
        let thread = self
            .read(move |c| Ok(rows::inbox::thread_of(c, queued)?))
            .await?
            .ok_or(Error::UnknownQueued)?;
        let live = self
            .live(&thread)
            .ok_or(Error::NotLive("its thread's session is not running"))?;
        live.request(
            |reply| Command::SendNow { queued, reply },
            || Error::NotLive("the session just ended"),
        )
        .await?
    }
}
