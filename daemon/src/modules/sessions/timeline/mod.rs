//! A thread's one timeline (issue 18): everything that happened in it, in order, built here and
//! served the same to every surface.
//!
//! - [`item`]: the items (a message, Claude's words or thinking, a tool call with its input and
//!   output, an ask with its answer, a notice) and their stable keys.
//! - [`fold`]: one event and the items so far give the changes, purely.
//! - [`store`]: the rows. Every event the Switchboard records goes through [`store::record`],
//!   which folds it in the same transaction and announces each changed item as a `thread.item`
//!   event; `threads.timeline` reads a page and the newest event id in one snapshot, so a page
//!   and the events after it are exactly what a reload gives.
//! - [`import`]: history Vyre did not see, from the transcript (a terminal's turns, a session
//!   only recall knows, the tool details of threads older than the timeline).
//! - [`words`]: errors and retries as sentences.
//! - [`tools`]: `threads.timeline` and `threads.output`.

pub mod fold;
pub mod import;
pub mod item;
pub mod store;
pub mod tools;
pub mod words;

pub use item::Item;
pub use store::{Page, record};

/// [`record`] one event of `thread` in a transaction of its own.
pub async fn tell(
    ctx: &crate::kernel::module::Ctx,
    thread: &str,
    kind: &'static str,
    payload: serde_json::Value,
) -> Result<(), crate::kernel::store::StoreError> {
    let t = thread.to_string();
    ctx.store()
        .write(move |tx| {
            record(
                tx,
                crate::kernel::events::NewEvent::new(kind, payload).thread(&t),
            )?;
            Ok(())
        })
        .await
}
