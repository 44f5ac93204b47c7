//! `GET /v1/files/<token>`: a download link `files.fetch` made. The token is the credential (it
//! was shown once, to a person or a device, and works for ten minutes); the files module opens
//! the file again, confined to its roots and never through a link, and the bytes are streamed
//! as they are, whatever their size.

use axum::body::Body;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::auth::{self, Peer};
use super::error::ApiError;
use crate::kernel::Kernel;
use crate::kernel::contracts::downloads::Downloads;

pub async fn download(
    State(kernel): State<Kernel>,
    ConnectInfo(peer): ConnectInfo<Peer>,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> Result<Response, ApiError> {
    if peer.is_http() {
        auth::check_browser_headers(&peer, &headers)?;
    }
    let Some(downloads) = kernel.get::<dyn Downloads>() else {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "module_disabled",
            "the files module is not running",
        ));
    };
    let d = downloads.open(&token).await?;
    let stream =
        tokio_util::io::ReaderStream::with_capacity(tokio::fs::File::from_std(d.file), 64 * 1024);
    let mut res = Body::from_stream(stream).into_response();
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(d.size));
    h.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_str(&disposition(&d.name))
            .unwrap_or_else(|_| HeaderValue::from_static("attachment")),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    Ok(res)
}

/// `attachment` with the name: plain where it is plain ASCII, and as RFC 5987 UTF-8 always.
fn disposition(name: &str) -> String {
    let plain: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let encoded: String = name
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    format!("attachment; filename=\"{plain}\"; filename*=UTF-8''{encoded}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_name_never_breaks_out_of_its_header() {
        let d = super::disposition("a\"b\r\nSet-Cookie: x=1;é.txt");
        assert!(!d.contains('\r') && !d.contains('\n'), "{d}");
        assert!(
            d.starts_with("attachment; filename=\"a_b__Set-Cookie: x=1;_.txt\""),
            "{d}"
        );
        assert!(
            d.ends_with("filename*=UTF-8''a%22b%0D%0ASet-Cookie%3A%20x%3D1%3B%C3%A9.txt"),
            "{d}"
        );
    }
}
