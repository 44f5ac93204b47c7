//! A due item on the person's phone: when a reminder, an alarm, a timer or a dated todo falls
//! due, the planner notifies every subscribed device (`Ctx::notify_devices`, through the push
//! module), tagged with the item; done, snoozed or removed, the notice is withdrawn under the
//! same tag. What falls due when the person opens Vyre is not pushed: they are there. This file
//! says what a notice says.

use serde_json::json;

use super::items::{Item, Kind};

/// Characters of an item's text in a notification; the app shows the rest.
const SHOWN: usize = 300;

/// `push.notify`'s withdrawal of item `id`'s notice.
pub fn withdraw(id: i64) -> serde_json::Value {
    json!({ "tag": tag(id), "withdraw": true })
}

/// The notice's tag, the item's own: a later notice for the same item replaces it.
fn tag(id: i64) -> String {
    format!("item:{id}")
}

/// `push.notify`'s input for `item`, fallen due `late_ms` after its time.
pub fn notice(item: &Item, late_ms: i64) -> serde_json::Value {
    let what = match item.kind {
        Kind::Alarm => "Alarm",
        Kind::Timer => "Timer done",
        Kind::Todo => "Todo due",
        Kind::Reminder | Kind::Note => "Reminder",
    };
    let title = match &item.project {
        Some(p) => format!("{what} · {}", shorten(p, 80)),
        None => what.to_string(),
    };
    let mut body = shorten(&item.text, SHOWN);
    if late_ms >= 60_000 {
        body.push_str(&format!(" (due {} ago, while Vyre was off)", span(late_ms)));
    }
    json!({
        "tag": tag(item.id),
        "title": title,
        "body": body,
        "url": "/app/needs",
        // Falling due is the point: the phone is woken at once.
        "urgent": true,
    })
}

/// A time span in a person's words, to the minute: "5 minutes", "2 hours", "3 days".
fn span(ms: i64) -> String {
    let minutes = ms / 60_000;
    let (n, unit) = match minutes {
        ..60 => (minutes, "minute"),
        60..1440 => (minutes / 60, "hour"),
        _ => (minutes / 1440, "day"),
    };
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

/// At most `n` characters of `s`, cut at a character and marked with an ellipsis.
fn shorten(s: &str, n: usize) -> String {
    let s = s.trim();
    match s.char_indices().nth(n) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(kind: Kind, text: &str, project: Option<&str>) -> Item {
        Item {
            id: 7,
            kind,
            text: text.into(),
            project: project.map(String::from),
            due_at: Some(1),
            on_open: false,
            fell_due_at: Some(1),
            done_at: None,
            created_by: "person".into(),
            created_at: 0,
            uid: None,
        }
    }

    #[test]
    fn a_notice_names_the_kind_and_project_and_says_when_it_was_late() {
        let n = notice(&item(Kind::Alarm, "stand up", Some("ops")), 0);
        assert_eq!(
            n,
            json!({ "tag": "item:7", "title": "Alarm · ops", "body": "stand up", "url": "/app/needs", "urgent": true })
        );
        let n = notice(
            &item(Kind::Reminder, "check the deploy", None),
            2 * 3_600_000,
        );
        assert_eq!(n["title"], "Reminder");
        assert_eq!(
            n["body"],
            "check the deploy (due 2 hours ago, while Vyre was off)"
        );
        // A long text is cut at a character, within push.notify's limit.
        let long = "é".repeat(2000);
        let body = notice(&item(Kind::Todo, &long, None), 0)["body"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(body.chars().count(), SHOWN + 1);
        assert!(body.ends_with('…'));
        assert_eq!(span(60_000), "1 minute");
        assert_eq!(span(90 * 60_000), "1 hour");
        assert_eq!(span(3 * 86_400_000 + 5), "3 days");
    }
}
