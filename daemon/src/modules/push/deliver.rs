//! One message to one subscription: encrypted for the browser that subscribed (RFC 8291,
//! aes128gcm), signed as this vyred (VAPID, RFC 8292), posted to its push service (RFC 8030).

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use web_push_native::p256::PublicKey;

use super::message::Message;
use super::vapid::Vapid;
use crate::kernel::outbound::Http;

/// Where one browser receives its messages, as it subscribed.
#[derive(Debug, Clone)]
pub struct Target {
    pub id: String,
    pub endpoint: String,
    /// The browser's P-256 public key, base64url (uncompressed point).
    pub p256dh: String,
    /// Its 16-byte authentication secret, base64url.
    pub auth: String,
}

/// What the push service said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Delivered,
    /// The subscription is no more (404, 410): forget it.
    Gone,
    /// Worth another try later (429, 5xx, no answer).
    Later(String),
    /// Refused for good (a bad key, a message too large).
    Failed(String),
}

/// The keys of a subscription, checked: a P-256 point and a 16-byte secret.
pub fn keys(p256dh: &str, auth: &str) -> Result<(PublicKey, web_push_native::Auth), String> {
    let point = B64
        .decode(p256dh.trim_end_matches('='))
        .map_err(|_| "keys.p256dh is not base64url".to_string())?;
    let public = PublicKey::from_sec1_bytes(&point)
        .map_err(|_| "keys.p256dh is not a P-256 public key".to_string())?;
    let secret = B64
        .decode(auth.trim_end_matches('='))
        .map_err(|_| "keys.auth is not base64url".to_string())?;
    if secret.len() != 16 {
        return Err("keys.auth is not 16 bytes".to_string());
    }
    Ok((public, web_push_native::Auth::clone_from_slice(&secret)))
}

/// Waits before a message a push service could not take now is tried again.
const RETRIES: [Duration; 2] = [Duration::from_secs(5), Duration::from_secs(30)];

/// [`deliver`], tried again while the push service says later, until `stop`.
pub async fn retrying(
    http: &Http,
    vapid: &Vapid,
    contact: &str,
    target: &Target,
    message: &Message,
    stop: &tokio_util::sync::CancellationToken,
) -> Outcome {
    let mut outcome = deliver(http, vapid, contact, target, message).await;
    for wait in RETRIES {
        let Outcome::Later(_) = &outcome else { break };
        tokio::select! {
            () = stop.cancelled() => break,
            () = tokio::time::sleep(wait) => {}
        }
        outcome = deliver(http, vapid, contact, target, message).await;
    }
    outcome
}

pub async fn deliver(
    http: &Http,
    vapid: &Vapid,
    contact: &str,
    target: &Target,
    message: &Message,
) -> Outcome {
    let (public, auth) = match keys(&target.p256dh, &target.auth) {
        Ok(k) => k,
        Err(e) => return Outcome::Failed(e),
    };
    let body = match web_push_native::encrypt(message.body.clone(), &public, &auth) {
        Ok(b) => b,
        Err(e) => return Outcome::Failed(format!("cannot encrypt the message: {e}")),
    };
    let authorization = match vapid.authorization(&target.endpoint, contact, crate::now_ms() / 1000)
    {
        Ok(a) => a,
        Err(e) => return Outcome::Failed(e),
    };
    let mut headers = vec![
        ("authorization", authorization),
        ("content-encoding", "aes128gcm".to_string()),
        ("content-type", "application/octet-stream".to_string()),
        ("ttl", message.ttl.to_string()),
        ("urgency", message.urgency.to_string()),
    ];
    if let Some(topic) = &message.topic {
        headers.push(("topic", topic.clone()));
    }
    match http.send(&target.endpoint, &headers, body).await {
        Ok((status, _)) if (200..300).contains(&status) => Outcome::Delivered,
        Ok((404 | 410, _)) => Outcome::Gone,
        Ok((status, body)) if status == 429 || status >= 500 => Outcome::Later(format!(
            "the push service answered {status}{}",
            reason(&body)
        )),
        Ok((status, body)) => Outcome::Failed(format!(
            "the push service refused the message ({status}){}",
            reason(&body)
        )),
        Err(e) => Outcome::Later(e),
    }
}

/// The start of a refusal's body, for the person to read.
fn reason(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        String::new()
    } else {
        format!(": {}", text.chars().take(200).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_checked_before_anything_is_sent() {
        // A real point and a 16-byte secret.
        use web_push_native::p256::elliptic_curve::sec1::ToEncodedPoint;
        let secret = web_push_native::p256::SecretKey::from_slice(&[5u8; 32]).unwrap();
        let g = &B64.encode(secret.public_key().to_encoded_point(false).as_bytes());
        assert!(keys(g, "AAAAAAAAAAAAAAAAAAAAAA").is_ok());
        assert!(
            keys(&format!("{g}="), "AAAAAAAAAAAAAAAAAAAAAA==").is_ok(),
            "padding is tolerated"
        );
        assert_eq!(
            keys("BAAA", "AAAAAAAAAAAAAAAAAAAAAA").unwrap_err(),
            "keys.p256dh is not a P-256 public key"
        );
        assert_eq!(keys(g, "AAAA").unwrap_err(), "keys.auth is not 16 bytes");
        assert_eq!(
            keys("not base64!", "x").unwrap_err(),
            "keys.p256dh is not base64url"
        );
    }

    #[test]
    fn encrypted_messages_open_with_the_browsers_key() {
        let secret = web_push_native::p256::SecretKey::from_slice(&[7u8; 32]).unwrap();
        let point = secret.public_key();
        use web_push_native::p256::elliptic_curve::sec1::ToEncodedPoint;
        let p256dh = B64.encode(point.to_encoded_point(false).as_bytes());
        let auth = B64.encode([9u8; 16]);
        let (public, a) = keys(&p256dh, &auth).unwrap();
        let sealed =
            web_push_native::encrypt(b"{\"kind\":\"test\"}".to_vec(), &public, &a).unwrap();
        let opened = web_push_native::decrypt(sealed, &secret, &a).unwrap();
        assert_eq!(opened, b"{\"kind\":\"test\"}");
    }
}
