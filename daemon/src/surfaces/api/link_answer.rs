//! `POST /v1/link/calls/{id}`: a paired Vyre's answer to a call this machine sent down its
//! event stream (`crate::kernel::link_calls`). The body is what a tool call answers here:
//! `{"data": ...}`, or `{"status": <HTTP status>, "error": {"code", "message"}}`. Only the
//! device the call went to answers it, once.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::auth::Authed;
use super::error::ApiError;
use crate::kernel::Kernel;
use crate::kernel::tools::{Caller, ToolError};

/// The largest answer taken (a file's preview, a thumbnail).
const MAX_ANSWER: usize = 8 * 1024 * 1024;

pub async fn answer(
    State(kernel): State<Kernel>,
    Path(id): Path<String>,
    Authed(caller): Authed,
    body: Body,
) -> Result<Response, ApiError> {
    let Caller::Linked { id: device, .. } = &caller else {
        return Err(ApiError::forbidden(
            "not_paired_vyre",
            "only a paired Vyre answers this machine's calls",
        ));
    };
    let bytes = super::read_body(&kernel, body, MAX_ANSWER).await?;
    let body: Value = serde_json::from_slice(&bytes).map_err(|e| {
        ApiError::bad_request("malformed_json", format!("the body is not valid JSON: {e}"))
    })?;
    let answer = match (body.get("data"), body.get("error")) {
        (Some(data), None) => Ok(data.clone()),
        (None, Some(error)) => {
            let status = body.get("status").and_then(Value::as_u64).unwrap_or(500);
            Err(ToolError::passed_on(
                u16::try_from(status).unwrap_or(500),
                error,
                "the paired Vyre",
            ))
        }
        _ => {
            return Err(ApiError::bad_request(
                "invalid_input",
                "an answer is {\"data\": ...} or {\"status\", \"error\": {\"code\", \"message\"}}",
            ));
        }
    };
    if !kernel.link_calls().answer(device, &id, answer) {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "unknown_call",
            "no call of this machine waits for that answer from this Vyre (answered, timed out, or never made)",
        ));
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}
