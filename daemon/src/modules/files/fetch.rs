//! `files.fetch`: a time-limited download link to one file inside the roots. The token is 32
//! random bytes shown once and kept only as its SHA-256, good for [`FETCH_TTL`]; the link names
//! the path, and serving it confines and opens the path again (a file swapped for a link since
//! is refused then). The HTTP surface serves the bytes (`GET /v1/files/<token>`), streamed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;

use super::roots::{FilesError, Roots};
use crate::kernel::contracts::downloads::{Download, DownloadFuture, Downloads};
use crate::kernel::device_tokens::hash_token;
use crate::kernel::module::Ctx;
use crate::kernel::tools::ToolError;

/// How long a download link works.
pub const FETCH_TTL: Duration = Duration::from_secs(600);
/// Links kept at once; the oldest goes first.
const MAX_LINKS: usize = 256;

/// What `files.fetch` answers.
#[derive(Serialize, JsonSchema)]
pub struct Fetch {
    /// The download, on this Vyre's own address: `GET` it (no credential; the link is one).
    url: String,
    /// The file's name.
    name: String,
    size: u64,
    /// When the link stops working (ms).
    expires_at: i64,
}

/// A link's path, when it stops working (ms), and when it was made (its place in line).
type Link = (String, i64, u64);

/// The links minted and not yet expired, by the SHA-256 of their token.
#[derive(Clone, Default)]
pub struct Links {
    // std Mutex: held for a map lookup or insert, never across an await.
    by_hash: Arc<Mutex<HashMap<[u8; 32], Link>>>,
    made: Arc<std::sync::atomic::AtomicU64>,
}

impl Links {
    fn mint(&self, path: String) -> (String, i64) {
        let token = crate::kernel::ids::random_base64url(32);
        let expires_at = crate::now_ms() + FETCH_TTL.as_millis() as i64;
        let now = crate::now_ms();
        let mut links = self.by_hash.lock().unwrap_or_else(|p| p.into_inner());
        links.retain(|_, (_, until, _)| *until > now);
        if links.len() >= MAX_LINKS
            && let Some(oldest) = links
                .iter()
                .min_by_key(|(_, (_, _, made))| *made)
                .map(|(k, _)| *k)
        {
            links.remove(&oldest);
        }
        let made = self.made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        links.insert(hash_token(&token), (path, expires_at, made));
        (token, expires_at)
    }

    /// The path `token` was minted for, while it works.
    fn path(&self, token: &str) -> Result<String, ToolError> {
        let links = self.by_hash.lock().unwrap_or_else(|p| p.into_inner());
        match links.get(&hash_token(token)) {
            Some((path, until, _)) if *until > crate::now_ms() => Ok(path.clone()),
            Some(_) => Err(ToolError::not_found(
                "link_expired",
                "this download link has expired; files.fetch makes a new one",
            )),
            None => Err(ToolError::not_found(
                "unknown_link",
                "there is no such download link",
            )),
        }
    }
}

/// The file at `typed`, confined to `roots` and opened now, never through a link.
fn open(roots: &Roots, typed: &str) -> Result<Download, FilesError> {
    let target = roots.confine(typed)?;
    let shown = roots.shown(&target.path);
    let Some(name) = target.name.clone() else {
        return Err(FilesError::NotRegular(shown));
    };
    let file = target
        .parent
        .file(&name)
        .map_err(|e| FilesError::of(e, &shown))?;
    let meta = file
        .metadata()
        .map_err(|e| FilesError::Io(shown.clone(), e.to_string()))?;
    if !meta.is_file() {
        return Err(FilesError::NotRegular(shown));
    }
    Ok(Download {
        file,
        name: name.to_string_lossy().into_owned(),
        size: meta.len(),
    })
}

/// Mint a link to the file at `typed` (which must open now).
pub async fn fetch(ctx: &Ctx, links: &Links, typed: String) -> Result<Fetch, ToolError> {
    let roots = super::roots(ctx).await;
    // The link keeps the path as asked: following it confines and opens it again.
    let (download, typed) =
        tokio::task::spawn_blocking(move || open(&roots, &typed).map(|d| (d, typed)))
            .await
            .map_err(ToolError::internal)??;
    let (token, expires_at) = links.mint(typed);
    Ok(Fetch {
        url: format!("/v1/files/{token}"),
        name: download.name,
        size: download.size,
        expires_at,
    })
}

/// What serves the links: the files module's [`Downloads`].
pub struct Served {
    pub ctx: Ctx,
    pub links: Links,
}

impl Downloads for Served {
    fn open<'a>(&'a self, token: &'a str) -> DownloadFuture<'a> {
        Box::pin(async move {
            let path = self.links.path(token)?;
            let roots = super::roots(&self.ctx).await;
            Ok(tokio::task::spawn_blocking(move || open(&roots, &path))
                .await
                .map_err(ToolError::internal)??)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_works_until_it_expires_and_only_by_its_token() {
        let links = Links::default();
        let (token, expires_at) = links.mint("/w/a.txt".into());
        assert!(expires_at > crate::now_ms());
        assert_eq!(links.path(&token).unwrap(), "/w/a.txt");
        assert_eq!(&*links.path("other").unwrap_err().code, "unknown_link");
        // Past its time.
        for (_, until, _) in links.by_hash.lock().unwrap().values_mut() {
            *until = crate::now_ms() - 1;
        }
        assert_eq!(&*links.path(&token).unwrap_err().code, "link_expired");
        // The store keeps the hash, never the token.
        let held = links.by_hash.lock().unwrap();
        assert!(held.keys().all(|k| k != token.as_bytes()));
    }

    #[test]
    fn at_most_so_many_links_are_kept() {
        let links = Links::default();
        let first = links.mint("/w/0".into()).0;
        for i in 1..=MAX_LINKS {
            links.mint(format!("/w/{i}"));
        }
        assert_eq!(links.by_hash.lock().unwrap().len(), MAX_LINKS);
        assert!(links.path(&first).is_err(), "the oldest went first");
    }
}
