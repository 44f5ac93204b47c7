//! The error every tool call returns. It knows nothing of HTTP: it names a kind, and
//! [`crate::surfaces::api::error`] maps each kind to a status in one place. The message is for the caller;
//! the detail, when there is one, goes only to the log.

use std::borrow::Cow;
use std::fmt;

/// What went wrong, in terms any surface can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The input is malformed or breaks the tool's schema.
    InvalidInput,
    /// The caller is not allowed to do this.
    Refused,
    /// No such tool, or no such thing the tool was asked about.
    NotFound,
    /// The request conflicts with the current state.
    Conflict,
    /// Too much at once; try later.
    Busy,
    /// The module behind the tool is disabled or stopping.
    Unavailable,
    /// A fault inside vyred.
    Internal,
}

#[derive(Debug, Clone)]
pub struct ToolError {
    pub kind: ErrorKind,
    /// A stable machine-readable code, e.g. `invalid_input`, `person_only`, `unknown_tool`.
    pub code: Cow<'static, str>,
    /// What a person reads.
    pub message: String,
    /// What only the log sees (internal errors).
    pub detail: Option<String>,
}

impl ToolError {
    pub fn new(
        kind: ErrorKind,
        code: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
    ) -> Self {
        ToolError {
            kind,
            code: code.into(),
            message: message.into(),
            detail: None,
        }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, "invalid_input", message)
    }
    pub fn refused(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Refused, code, message)
    }
    pub fn not_found(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, code, message)
    }
    pub fn unavailable(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unavailable, code, message)
    }
    pub fn conflict(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Conflict, code, message)
    }
    /// Another Vyre's refusal, as this side's: its code (when it is one) and message, said to
    /// be `who`'s, and its kind from the HTTP status it came with. `error` is the
    /// `{"code", "message"}` of an error answer.
    pub fn passed_on(status: u16, error: &serde_json::Value, who: &str) -> Self {
        let text = |k: &str| error.get(k).and_then(serde_json::Value::as_str);
        let code = text("code")
            .filter(|c| {
                !c.is_empty()
                    && c.len() <= 64
                    && c.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
            })
            .unwrap_or("peer_error")
            .to_string();
        let message = match text("message") {
            Some(m) => format!("{who} says: {}", m.chars().take(1000).collect::<String>()),
            None => format!("{who} answered {status}"),
        };
        let kind = match status {
            400 | 413 | 415 | 422 => ErrorKind::InvalidInput,
            401 | 403 => ErrorKind::Refused,
            404 => ErrorKind::NotFound,
            409 => ErrorKind::Conflict,
            429 => ErrorKind::Busy,
            503 => ErrorKind::Unavailable,
            _ => ErrorKind::Internal,
        };
        Self::new(kind, code, message)
    }
    /// An internal fault: the caller sees a generic message, the log sees `detail`.
    pub fn internal(detail: impl fmt::Display) -> Self {
        ToolError {
            kind: ErrorKind::Internal,
            code: "internal".into(),
            message: "vyred failed to handle this call; the detail is in its log".into(),
            detail: Some(detail.to_string()),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<crate::kernel::store::StoreError> for ToolError {
    fn from(e: crate::kernel::store::StoreError) -> Self {
        use crate::kernel::store::StoreError;
        match e {
            StoreError::Refused(message) => ToolError::refused("refused_by_store", message),
            StoreError::Closed => ToolError::new(
                ErrorKind::Unavailable,
                "stopping",
                "vyred is shutting down; try again when it is back",
            ),
            e if e.is_disk_full() => ToolError {
                kind: ErrorKind::Unavailable,
                code: "disk_full".into(),
                message: "the disk holding the Vyre store is full; nothing was written. Free some space and try again".into(),
                detail: Some(e.to_string()),
            },
            e => ToolError::internal(e),
        }
    }
}
