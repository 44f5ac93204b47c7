//! The git a worktree needs, run by [`crate::kernel::git`] (no hooks, no fsmonitor, no system
//! or global config) as the sessions' user when they have one (ADR 0013: the repository and
//! the worktree stay theirs), with the repository's own filters turned off: a checkout or a
//! merge never runs a program the repository's config names (a session may have written it).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::kernel::tools::ToolError;

const WAIT: Duration = Duration::from_secs(60);
const MAX: usize = 4 * 1024 * 1024;

/// A repository's main checkout, who git runs as there, and its filters (off in every run).
#[derive(Debug, Clone)]
pub struct Repo {
    pub top: PathBuf,
    user: Option<(u32, u32)>,
    /// The filter drivers its config defines, off in every run here.
    filters: Vec<String>,
}

/// What is not saved elsewhere in a worktree: files not committed, commits on no other branch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unsaved {
    /// Changed or new files (ignored files are not counted: build output goes with a worktree).
    pub uncommitted: Vec<String>,
    /// Commits on the worktree's branch that neither the checkout's branch nor a remote has.
    pub unmerged: u64,
}

impl Unsaved {
    pub fn is_empty(&self) -> bool {
        self.uncommitted.is_empty() && self.unmerged == 0
    }
}

fn failed(code: &'static str) -> impl Fn(String) -> ToolError {
    move |why| ToolError::conflict(code, why)
}

/// Whether `name` may name a branch Vyre makes: git's rules and a few of its own (no leading
/// `-`, no space or shell-special character, at most 100 bytes).
pub fn branch_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && !name.starts_with(['-', '/', '.'])
        && !name.ends_with(['/', '.'])
        && !name.ends_with(".lock")
        && !name.contains("..")
        && !name.contains("//")
        && !name.contains("@{")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/'))
}

impl Repo {
    async fn git(&self, dir: &Path, args: Vec<OsString>) -> Result<String, String> {
        let mut all = Self::filters_off(&self.filters);
        all.extend(args);
        let ran = crate::kernel::git::run_as(self.user, Some(dir), &all, &[], WAIT, MAX).await?;
        Ok(String::from_utf8_lossy(&ran.stdout).trim_end().to_string())
    }

    /// The repository `cwd` is in (its top folder) and where `cwd` is within it.
    pub async fn at(cwd: &Path, user: Option<(u32, u32)>) -> Result<(Repo, PathBuf), ToolError> {
        let probe = Repo {
            top: cwd.to_path_buf(),
            user,
            filters: vec![],
        };
        let top = probe
            .git(cwd, args(&["rev-parse", "--show-toplevel"]))
            .await
            .map_err(|_| {
                ToolError::conflict(
                    "not_a_repository",
                    format!(
                        "{} is not in a git repository, so it cannot have a worktree",
                        cwd.display()
                    ),
                )
            })?;
        let top = PathBuf::from(top);
        let rel = cwd
            .canonicalize()
            .ok()
            .and_then(|c| c.strip_prefix(&top).ok().map(Path::to_path_buf))
            .unwrap_or_default();
        let mut repo = Repo {
            top,
            user,
            filters: vec![],
        };
        repo.filters = repo.filters().await;
        Ok((repo, rel))
    }

    /// The commit the checkout is at.
    pub async fn head(&self) -> Result<String, ToolError> {
        self.git(&self.top, args(&["rev-parse", "--verify", "HEAD^{commit}"]))
            .await
            .map_err(|_| {
                ToolError::conflict(
                    "no_commit",
                    "the repository has no commit yet: a worktree starts from one",
                )
            })
    }

    /// The branch the main checkout is on (none when detached).
    pub async fn current_branch(&self) -> Option<String> {
        self.git(
            &self.top,
            args(&["symbolic-ref", "--quiet", "--short", "HEAD"]),
        )
        .await
        .ok()
        .filter(|b| !b.is_empty())
    }

    /// The filter drivers the repository's config defines (`filter.<name>.*`).
    async fn filters(&self) -> Vec<String> {
        let listed = self
            .git(
                &self.top,
                args(&["config", "--name-only", "--get-regexp", r"^filter\."]),
            )
            .await
            .unwrap_or_default();
        let mut names: Vec<String> = listed
            .lines()
            .filter_map(|l| l.strip_prefix("filter."))
            .filter_map(|l| l.rsplit_once('.').map(|(name, _)| name.to_string()))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Settings that turn each of the repository's filters into a plain copy.
    fn filters_off(names: &[String]) -> Vec<OsString> {
        let mut out = vec![];
        for n in names {
            for setting in [
                format!("filter.{n}.smudge=cat"),
                format!("filter.{n}.clean=cat"),
                format!("filter.{n}.process="),
                format!("filter.{n}.required=false"),
            ] {
                out.push("-c".into());
                out.push(setting.into());
            }
        }
        out
    }

    /// Whether the config names a program a merge would run (a filter or a merge driver).
    async fn runs_programs_on_merge(&self) -> Vec<String> {
        let mut found: Vec<String> = self.filters.iter().map(|f| format!("filter.{f}")).collect();
        let drivers = self
            .git(
                &self.top,
                args(&[
                    "config",
                    "--name-only",
                    "--get-regexp",
                    r"^merge\..*\.driver$",
                ]),
            )
            .await
            .unwrap_or_default();
        found.extend(drivers.lines().map(String::from));
        found
    }

    /// Whether `branch` exists.
    pub async fn has_branch(&self, branch: &str) -> bool {
        self.git(
            &self.top,
            args(&[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{branch}"),
            ]),
        )
        .await
        .is_ok()
    }

    /// A new worktree at `path` on `branch` (made from HEAD, or checked out when it exists),
    /// with the repository's filters off; the filters turned off are returned.
    pub async fn add(&self, path: &Path, branch: &str) -> Result<Vec<String>, ToolError> {
        let mut a = args(&["worktree", "add", "--quiet"]);
        if self.has_branch(branch).await {
            a.extend([path.as_os_str().to_owned(), branch.into()]);
        } else {
            a.extend(args(&["-b", branch]));
            a.extend([path.as_os_str().to_owned(), "HEAD".into()]);
        }
        self.git(&self.top, a)
            .await
            .map_err(failed("worktree_failed"))?;
        Ok(self.filters.clone())
    }

    /// What in the worktree at `path` on `branch` is not saved anywhere else.
    pub async fn unsaved(&self, path: &Path, branch: &str) -> Result<Unsaved, ToolError> {
        let uncommitted = if path.exists() {
            let status = self
                .git(
                    path,
                    args(&["status", "--porcelain=v1", "-z", "--untracked-files=all"]),
                )
                .await
                .map_err(failed("worktree_unreadable"))?;
            status
                .split('\0')
                .filter(|e| e.len() > 3)
                .map(|e| e[3..].to_string())
                .collect()
        } else {
            vec![]
        };
        let unmerged = if self.has_branch(branch).await {
            let mut a = args(&["rev-list", "--count", branch, "--not", "--remotes"]);
            if let Some(current) = self.current_branch().await
                && current != branch
            {
                a.push(current.into());
            }
            self.git(&self.top, a)
                .await
                .map_err(failed("worktree_unreadable"))?
                .parse()
                .unwrap_or(0)
        } else {
            0
        };
        Ok(Unsaved {
            uncommitted,
            unmerged,
        })
    }

    /// Bring `branch` into the main checkout's branch: a fast-forward, or a merge commit. A merge
    /// that conflicts is taken back whole; a merge commit needs the checkout's tracked files
    /// clean (git cannot always take back a merge over uncommitted changes).
    pub async fn merge(
        &self,
        branch: &str,
        commit: bool,
        message: &str,
    ) -> Result<String, ToolError> {
        let Some(into) = self.current_branch().await else {
            return Err(ToolError::conflict(
                "detached",
                format!(
                    "{} is not on a branch (a detached HEAD): check out the branch to merge into first",
                    self.top.display()
                ),
            ));
        };
        let programs = self.runs_programs_on_merge().await;
        if !programs.is_empty() {
            return Err(ToolError::conflict(
                "merge_runs_programs",
                format!(
                    "the repository's config runs programs when merging ({}), which Vyre does not run: merge it yourself with `git merge {branch}`",
                    programs.join(", ")
                ),
            ));
        }
        let ahead: u64 = self
            .git(
                &self.top,
                args(&["rev-list", "--count", &format!("{into}..{branch}")]),
            )
            .await
            .map_err(failed("merge_failed"))?
            .parse()
            .unwrap_or(0);
        if ahead == 0 {
            return Err(ToolError::conflict(
                "nothing_to_merge",
                format!("{branch} has no commit that {into} lacks"),
            ));
        }
        let identity = args(&["-c", "user.name=Vyre", "-c", "user.email=vyre@localhost"]);
        if !commit {
            let mut a = identity;
            a.extend(args(&["merge", "--ff-only", "--quiet", branch]));
            return match self.git(&self.top, a).await {
                Ok(_) => self.head().await,
                Err(why) => Err(ToolError::conflict(
                    "not_fast_forward",
                    format!(
                        "{into} cannot fast-forward to {branch} ({why}): merge with a merge commit instead"
                    ),
                )),
            };
        }
        let dirty = self
            .git(
                &self.top,
                args(&["status", "--porcelain=v1", "--untracked-files=no"]),
            )
            .await
            .map_err(failed("merge_failed"))?;
        if !dirty.is_empty() {
            return Err(ToolError::conflict(
                "checkout_not_clean",
                format!(
                    "{} has uncommitted changes to tracked files: commit or stash them before a merge commit",
                    self.top.display()
                ),
            ));
        }
        let mut a = identity;
        a.extend(args(&[
            "merge",
            "--no-ff",
            "--no-edit",
            "--quiet",
            "-m",
            message,
            branch,
        ]));
        match self.git(&self.top, a).await {
            Ok(_) => self.head().await,
            Err(why) => {
                let conflicted = self
                    .git(&self.top, args(&["diff", "--name-only", "--diff-filter=U"]))
                    .await
                    .unwrap_or_default();
                let _ = self.git(&self.top, args(&["merge", "--abort"])).await;
                Err(ToolError::conflict(
                    "merge_conflict",
                    if conflicted.is_empty() {
                        format!("merging {branch} into {into} failed, and was taken back: {why}")
                    } else {
                        format!(
                            "merging {branch} into {into} conflicts in {}; nothing was changed",
                            conflicted.lines().collect::<Vec<_>>().join(", ")
                        )
                    },
                ))
            }
        }
    }

    /// Remove the worktree at `path` (`force`: with what is not committed in it) and its branch
    /// (`force`: even with commits nothing else has; else only when merged).
    pub async fn remove(&self, path: &Path, branch: &str, force: bool) -> Result<bool, ToolError> {
        if path.exists() {
            let mut a = args(&["worktree", "remove"]);
            if force {
                a.push("--force".into());
            }
            a.push(path.as_os_str().to_owned());
            self.git(&self.top, a)
                .await
                .map_err(failed("remove_failed"))?;
        } else {
            let _ = self.git(&self.top, args(&["worktree", "prune"])).await;
        }
        if !self.has_branch(branch).await {
            return Ok(false);
        }
        let delete = if force { "-D" } else { "-d" };
        Ok(self
            .git(&self.top, args(&["branch", delete, "--quiet", branch]))
            .await
            .is_ok())
    }
}

fn args(list: &[&str]) -> Vec<OsString> {
    list.iter().map(OsString::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names_are_refused_unless_plain() {
        for ok in ["vyre/fix-login-3f2a", "feature_x", "a.b/c-d"] {
            assert!(branch_ok(ok), "{ok}");
        }
        for bad in [
            "", "-x", "--force", "a..b", "a b", "a;rm", "x.lock", "a//b", "/a", "a/", "$(id)",
            "a@{1}", ".hidden",
        ] {
            assert!(!branch_ok(bad), "{bad:?}");
        }
        assert!(!branch_ok(&"a".repeat(101)));
    }
}
