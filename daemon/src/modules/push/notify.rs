//! `push.notify`: another module's notification on every subscribed device (the Gate's items
//! waiting for the person, the planner's reminders). Only a module calls it: a session that
//! could would put words of its choosing on the person's phone, under Vyre's name.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Push, Sent, message, subscriptions};
use crate::kernel::tools::{Caller, ErrorKind, ToolError};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotifyInput {
    /// The notice's tag, the module's own: a newer notice with the same tag replaces it, and
    /// `withdraw` closes it.
    #[schemars(length(min = 1, max = 64), pattern(r"^[A-Za-z0-9._:-]+$"))]
    tag: String,
    /// The notification's title (required unless withdrawing).
    #[schemars(length(min = 1, max = 120))]
    title: Option<String>,
    #[schemars(length(max = 1000))]
    body: Option<String>,
    /// Where a click opens the app: a path under `/app/` (default `/app/`).
    #[schemars(length(min = 5, max = 512), pattern(r"^/app/"))]
    url: Option<String>,
    /// Wake the phone at once (`high` urgency); default: when convenient.
    #[serde(default)]
    urgent: bool,
    /// Take the notice with this tag away instead.
    #[serde(default)]
    withdraw: bool,
}

impl Push {
    pub(super) async fn notify(
        &self,
        input: NotifyInput,
        caller: &Caller,
    ) -> Result<Sent, ToolError> {
        let Caller::Module { name: module } = caller else {
            return Err(ToolError::refused(
                "modules_only",
                "push.notify is for Vyre's modules (the Gate, the planner); a person tests notifications with push.test",
            ));
        };
        let m = if input.withdraw {
            message::withdraw_notice(module, &input.tag)
        } else {
            let Some(title) = input.title.as_deref().filter(|t| !t.trim().is_empty()) else {
                return Err(ToolError::new(
                    ErrorKind::InvalidInput,
                    "invalid_input",
                    "a notice needs a title",
                ));
            };
            let url = input.url.as_deref().unwrap_or("/app/");
            if !url.starts_with("/app/") || url.contains("//") || url.contains('\\') {
                return Err(ToolError::new(
                    ErrorKind::InvalidInput,
                    "invalid_input",
                    "url is a path under /app/",
                ));
            }
            let body = input.body.as_deref().unwrap_or_default();
            message::notice(module, &input.tag, title, body, url, input.urgent)
        };
        let targets = self
            .ctx
            .store()
            .read(|c| Ok(subscriptions::targets(c, None)?))
            .await?;
        if targets.is_empty() {
            return Ok(Sent { sent: 0, failed: 0 });
        }
        let (sent, failed) = self.send_all(targets, &m, None).await;
        Ok(Sent { sent, failed })
    }
}
