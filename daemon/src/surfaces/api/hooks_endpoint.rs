//! `POST /v1/hooks/<watcher>/<secret>`: a webhook watcher's address (spec 7.6). No device
//! credential: whoever holds the address may call it (a forge, a form, a payment service), and
//! the secret in its path is what lets them, checked by `watchers.hook` against the hash Vyre
//! kept. The body (JSON, or text) is handed to the watcher's run, which goes on after the
//! answer: 202 as soon as the call is taken.

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::{Value, json};

use super::error::ApiError;
use crate::kernel::Kernel;
use crate::kernel::tools::Caller;

/// The largest body a webhook may send.
pub const MAX_HOOK_BODY: usize = 256 * 1024;

pub async fn hook(
    State(kernel): State<Kernel>,
    Path((name, secret)): Path<(String, String)>,
    body: Body,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let bytes = super::read_body(&kernel, body, MAX_HOOK_BODY).await?;
    let body = serde_json::from_slice::<Value>(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    let caller = Caller::Module {
        name: "webhook".into(),
    };
    let data = kernel
        .registry()
        .call(
            "watchers.hook",
            json!({ "name": name, "secret": secret, "body": body }),
            caller,
        )
        .await?;
    Ok((StatusCode::ACCEPTED, Json(json!({ "data": data }))))
}
