//! Keeping the snapshot stores small: a turn's changes are kept [`KEEP_DAYS`] days, then its row
//! goes, and each store keeps only the trees its remaining rows name. Once a day (and a few
//! minutes after vyred starts) every store not written in the last hour is packed and what no
//! row names any more is dropped (`git gc`, objects younger than an hour always spared, so a
//! snapshot being taken meanwhile loses nothing); a store no row names is removed whole (a
//! thread that follows its folder again starts it afresh).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rusqlite::params;

use super::shadow::Shadow;
use crate::kernel::module::Ctx;

/// How long a turn's changes are kept.
pub const KEEP_DAYS: i64 = 30;
/// A store written more recently than this is left for the next round.
const QUIET: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(24 * 3600);

/// What one round did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    pub rows: usize,
    pub packed: usize,
    pub removed: usize,
}

/// Every store's folder (from the `folder` file it keeps) and its directory.
fn stores(root: &Path) -> Vec<(PathBuf, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return vec![];
    };
    entries
        .flatten()
        .filter_map(|e| {
            let dir = e.path();
            let folder = std::fs::read(dir.join("folder")).ok()?;
            use std::os::unix::ffi::OsStringExt;
            Some((PathBuf::from(std::ffi::OsString::from_vec(folder)), dir))
        })
        .collect()
}

/// Whether the store at `dir` was written within [`QUIET`] (its index moves with each snapshot).
fn busy(dir: &Path) -> bool {
    ["index", "HEAD"].iter().any(|f| {
        std::fs::metadata(dir.join(f))
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_none_or(|age| age < QUIET)
    })
}

/// Prune the stores under `root`, each keeping the trees `keep` names for its folder.
pub async fn stores_under(root: &Path, keep: &BTreeMap<PathBuf, BTreeSet<String>>) -> Pruned {
    let mut done = Pruned::default();
    for (folder, dir) in stores(root) {
        if busy(&dir) {
            continue;
        }
        match keep.get(&folder) {
            None => {
                if std::fs::remove_dir_all(&dir).is_ok() {
                    done.removed += 1;
                }
            }
            Some(trees) => {
                let shadow = match Shadow::open(root, &folder).await {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::warn!(folder = %folder.display(), error = %e, "a snapshot store cannot be opened to prune");
                        continue;
                    }
                };
                match shadow.keep_only(trees).await {
                    Ok(()) => done.packed += 1,
                    Err(e) => {
                        tracing::warn!(folder = %folder.display(), error = %e, "a snapshot store was not pruned")
                    }
                }
            }
        }
    }
    done
}

/// One round: old rows dropped, then the stores pruned to what the rest name.
pub async fn once(ctx: &Ctx) -> Result<Pruned, crate::kernel::store::StoreError> {
    let before = crate::now_ms() - KEEP_DAYS * 24 * 3600 * 1000;
    let (rows, keep) = ctx
        .store()
        .write(move |tx| {
            let rows = tx
                .conn()
                .execute("DELETE FROM threads_changes WHERE at < ?1", params![before])?;
            let mut stmt = tx
                .conn()
                .prepare("SELECT folder, before, after FROM threads_changes")?;
            let mut keep: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
            let found = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                ))
            })?;
            for row in found {
                let (folder, b, a) = row?;
                keep.entry(PathBuf::from(folder))
                    .or_default()
                    .extend(b.into_iter().chain(a));
            }
            Ok((rows, keep))
        })
        .await?;
    let mut done = stores_under(&ctx.home().root().join("changes"), &keep).await;
    done.rows = rows;
    Ok(done)
}

impl Shadow {
    /// Keep only `trees` (and what the index holds): each named by a ref of the store's own
    /// (`refs/vyre/<tree>`, loose, never packed, so the next round can take it away), then
    /// packed and the rest dropped, sparing objects younger than [`QUIET`].
    pub async fn keep_only(&self, trees: &BTreeSet<String>) -> Result<(), String> {
        let refs = self.git_dir.join("refs").join("vyre");
        let _ = std::fs::remove_dir_all(&refs);
        std::fs::create_dir_all(&refs).map_err(|e| e.to_string())?;
        for tree in trees {
            let id_like = tree.len() >= 40 && tree.bytes().all(|b| b.is_ascii_hexdigit());
            // A tree the store no longer has (made again since) is not named.
            if id_like && self.git(&["cat-file", "-e", tree], 1024).await.is_ok() {
                std::fs::write(refs.join(tree), format!("{tree}\n")).map_err(|e| e.to_string())?;
            }
        }
        let expire = format!("gc.pruneExpire={}.seconds.ago", QUIET.as_secs());
        self.git(
            &[
                "-c",
                &expire,
                "-c",
                "gc.packRefs=false",
                "-c",
                "gc.reflogExpire=now",
                "gc",
                "--quiet",
            ],
            64 * 1024,
        )
        .await
        .map(|_| ())
    }
}

/// Prune a few minutes after start, then daily.
pub fn daily(ctx: &Ctx) {
    let c = ctx.clone();
    let stop = ctx.shutdown();
    // Every wait ends when vyred stops: a task still sleeping would hold its shutdown back.
    ctx.spawn(async move { stop.run_until_cancelled(rounds(c)).await.unwrap_or(()) });
}

async fn rounds(c: Ctx) {
    tokio::time::sleep(Duration::from_secs(300)).await;
    loop {
        match once(&c).await {
            Ok(p) if p != Pruned::default() => {
                tracing::info!(
                    rows = p.rows,
                    packed = p.packed,
                    removed = p.removed,
                    "snapshot stores pruned"
                )
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "snapshot stores were not pruned"),
        }
        tokio::time::sleep(DAY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_objects(dir: &Path) -> usize {
        walk(&dir.join("objects"))
            .into_iter()
            .filter(|p| {
                p.parent()
                    .and_then(|d| d.file_name())
                    .is_some_and(|n| n.len() == 2)
            })
            .count()
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = vec![];
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
        out
    }

    /// Make every file of the store look an hour and a minute old.
    fn age(dir: &Path) {
        let old = SystemTime::now() - QUIET - Duration::from_secs(60);
        for p in walk(dir) {
            let f = std::fs::File::options()
                .write(true)
                .open(&p)
                .or_else(|_| std::fs::File::open(&p));
            if let Ok(f) = f {
                let _ = f.set_modified(old);
            }
        }
    }

    #[tokio::test]
    async fn a_store_keeps_the_trees_its_rows_name_and_a_store_named_by_none_goes() {
        let dir = std::env::temp_dir().join(format!("vyre-prune-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (kept, gone, root) = (dir.join("kept"), dir.join("gone"), dir.join("store"));
        for f in [&kept, &gone] {
            std::fs::create_dir_all(f).unwrap();
            std::fs::write(f.join("a.txt"), "first\n").unwrap();
        }
        let shadow = Shadow::open(&root, &kept).await.unwrap();
        let old = shadow.snapshot().await.unwrap().tree;
        std::fs::write(kept.join("a.txt"), "second\n").unwrap();
        std::fs::write(kept.join("b.txt"), "bee\n").unwrap();
        let mid = shadow.snapshot().await.unwrap().tree;
        std::fs::write(kept.join("a.txt"), "third\n").unwrap();
        let new = shadow.snapshot().await.unwrap().tree;
        Shadow::open(&root, &gone)
            .await
            .unwrap()
            .snapshot()
            .await
            .unwrap();

        let keep = BTreeMap::from([(kept.clone(), BTreeSet::from([mid.clone(), new.clone()]))]);
        // Just written: left for a later round.
        assert_eq!(stores_under(&root, &keep).await, Pruned::default());
        for (_, d) in stores(&root) {
            age(&d);
        }
        let loose = stores(&root)
            .into_iter()
            .find(|(f, _)| f == &kept)
            .map(|(_, d)| count_objects(&d))
            .unwrap();
        assert!(loose >= 6, "{loose} loose objects");
        let done = stores_under(&root, &keep).await;
        assert_eq!((done.packed, done.removed), (1, 1), "{done:?}");
        let left = stores(&root);
        assert_eq!(left.len(), 1);
        assert_eq!(count_objects(&left[0].1), 0, "packed");
        // The kept trees still read; the dropped one is gone.
        let diff = shadow.changed(&mid, &new).await.unwrap();
        assert_eq!(diff.len(), 1, "{diff:?}");
        assert!(
            shadow.changed(&old, &new).await.is_err(),
            "the old tree was dropped"
        );
        // Snapshots go on as before.
        std::fs::write(kept.join("c.txt"), "sea\n").unwrap();
        let next = shadow.snapshot().await.unwrap().tree;
        assert_eq!(shadow.changed(&new, &next).await.unwrap().len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
