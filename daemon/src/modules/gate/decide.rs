//! A person's decision on a held item: approved (as it is or edited), rejected with a reason,
//! or gone because its session no longer waits. Moving an item out of `held` is one conditional
//! UPDATE ([`items::take`]), so two answers cannot both win.

use serde_json::json;

use super::items::{self, Item};
use super::request::Boundary;
use super::{ApproveInput, Decided, RejectInput, emit, mask, tag};
use crate::kernel::module::Ctx;
use crate::kernel::tools::{CallCx, ToolError};

async fn open_item(c: &Ctx, id: &str) -> Result<Item, ToolError> {
    let key = id.to_string();
    let item = c
        .store()
        .read(move |conn| items::get(conn, &key))
        .await?
        .ok_or_else(|| ToolError::not_found("no_item", format!("no held item {id}")))?;
    if item.state != "held" {
        return Err(ToolError::conflict(
            "decided",
            format!("item {id} is already {}", item.state),
        ));
    }
    Ok(item)
}

/// Move `id` out of `held` for this decision, or say it was not there to take.
async fn take(c: &Ctx, id: &str) -> Result<(), ToolError> {
    let key = id.to_string();
    if c.store()
        .write(move |tx| items::take(tx.conn(), &key))
        .await?
    {
        Ok(())
    } else {
        Err(ToolError::conflict(
            "decided",
            format!("item {id} is being decided or was decided"),
        ))
    }
}

/// The item's session is gone or no longer waits: withdrawn, said, and the notice taken back.
pub(super) async fn gone(c: &Ctx, b: &Boundary, item: &Item, why: &str) {
    b.forget(&item.item);
    let (id, w) = (item.item.clone(), why.to_string());
    if let Ok(true) = c
        .store()
        .write(move |tx| items::withdraw(tx.conn(), &id, &w))
        .await
    {
        emit(
            c,
            "gate.withdrawn",
            &item.thread,
            json!({ "item": item.item, "why": why }),
        )
        .await;
    }
    c.notify_devices(json!({ "tag": tag(&item.item), "withdraw": true }));
}

pub(super) async fn approve(
    c: Ctx,
    b: Boundary,
    input: ApproveInput,
    cx: CallCx,
) -> Result<Decided, ToolError> {
    let item = open_item(&c, &input.item).await?;
    let mut release = json!({ "thread": item.thread, "call": item.call, "allow": true });
    if let Some(edited) = &input.edited {
        let Some(field) = &item.field else {
            return Err(ToolError::invalid(format!(
                "item {} cannot be edited here (its input has no text field); reject it with what to change",
                item.item
            )));
        };
        release["field"] = json!(field);
        release["text"] = json!(edited);
    }
    take(&c, &item.item).await?;
    // A request through the Gate may run once it is answered: its approval is kept first.
    b.approve(&item.item, input.edited.as_deref());
    let released = c.call("threads.release", release).await;
    if let Err(e) = released {
        gone(&c, &b, &item, "its session no longer waits for it").await;
        return Err(ToolError::conflict(
            "gone",
            format!(
                "nothing was sent: the session no longer waits for item {} ({})",
                item.item, e.message
            ),
        ));
    }
    let by = cx.caller.label();
    let (id, edited, b) = (
        item.item.clone(),
        input.edited.as_deref().map(mask),
        by.clone(),
    );
    c.store()
        .write(move |tx| items::decide(tx.conn(), &id, "approved", edited.as_deref(), None, &b))
        .await?;
    emit(
        &c,
        "gate.approved",
        &item.thread,
        json!({ "item": item.item, "call": item.call, "by": by, "edited": input.edited.is_some() }),
    )
    .await;
    c.notify_devices(json!({ "tag": tag(&item.item), "withdraw": true }));
    Ok(Decided {
        item: item.item,
        state: "approved".into(),
        edited: input.edited.is_some(),
    })
}

pub(super) async fn reject(
    c: Ctx,
    b: Boundary,
    input: RejectInput,
    cx: CallCx,
) -> Result<Decided, ToolError> {
    let item = open_item(&c, &input.item).await?;
    take(&c, &item.item).await?;
    b.forget(&item.item);
    let why = input
        .why
        .as_deref()
        .map(str::trim)
        .filter(|w| !w.is_empty());
    let message = match why {
        Some(w) => format!(
            "The person refused this in Vyre's Gate ({}): {w}",
            item.what
        ),
        None => format!("The person refused this in Vyre's Gate ({}).", item.what),
    };
    // A session that no longer waits sends nothing either way: the refusal stands.
    let _ = c
        .call(
            "threads.release",
            json!({ "thread": item.thread, "call": item.call, "allow": false, "message": message }),
        )
        .await;
    let by = cx.caller.label();
    let (id, w, b) = (item.item.clone(), why.map(String::from), by.clone());
    c.store()
        .write(move |tx| items::decide(tx.conn(), &id, "rejected", None, w.as_deref(), &b))
        .await?;
    emit(
        &c,
        "gate.rejected",
        &item.thread,
        json!({ "item": item.item, "call": item.call, "by": by, "why": why }),
    )
    .await;
    c.notify_devices(json!({ "tag": tag(&item.item), "withdraw": true }));
    Ok(Decided {
        item: item.item,
        state: "rejected".into(),
        edited: false,
    })
}
