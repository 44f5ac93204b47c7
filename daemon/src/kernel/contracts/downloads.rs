//! Time-limited download links (`files.fetch`): the files module mints a link to one file inside
//! its roots, and the HTTP surface serves `GET /v1/files/<token>` by asking it to open the file
//! again, confined as at the minting, never through a link. The token is the capability: it is
//! shown once, kept only as its SHA-256, and good for a few minutes.

use std::future::Future;
use std::pin::Pin;

use super::Capability;
use crate::kernel::tools::ToolError;

/// A file opened for a download.
pub struct Download {
    pub file: std::fs::File,
    /// Its name, for the browser's save dialog.
    pub name: String,
    pub size: u64,
}

pub type DownloadFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Download, ToolError>> + Send + 'a>>;

pub trait Downloads: Send + Sync {
    /// The file `token` names, opened now; `unknown_link` (404) or `link_expired` (410).
    fn open<'a>(&'a self, token: &'a str) -> DownloadFuture<'a>;
}

impl Capability for dyn Downloads {
    const NAME: &'static str = "downloads";
}
