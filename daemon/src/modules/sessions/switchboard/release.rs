//! A person's decision on a call the Gate held, handed to the session that waits for it
//! (`threads.release`, which only the gate module calls).

use super::Switchboard;
use super::actor::Release;
use super::error::{Error, Result};
use super::handle::Command;

impl Switchboard {
    /// Answer the held call `release.call` of `thread`'s live session; an error when the
    /// session is gone or the call no longer waits (then nothing was sent).
    pub async fn release(&self, thread: &str, release: Release) -> Result<()> {
        let live = self
            .live(thread)
            .ok_or(Error::AskClosed("the session that waited has ended"))?;
        live.request(
            |reply| Command::Release { release, reply },
            || Error::AskClosed("the session that waited has ended"),
        )
        .await?
    }
}
