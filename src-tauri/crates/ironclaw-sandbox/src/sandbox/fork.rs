//! A branch of a conversation gets a sandbox session of its own: its workspace a copy of the
//! original's (see `ironclaw_workspace::copy`), taken back to the branch point with the original's
//! undo record, and no container until its first run (so no interpreter state comes along).

use std::path::Path;

use ironclaw_workspace::checkpoint::Store;
use ironclaw_workspace::copy::{copy_tree, Copied};

use super::Sandbox;
use crate::error::{Error, Result};
use crate::session::SessionName;

/// What became of a branch's workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forked {
    pub copied: Copied,
    /// The runs taken back in the copy, newest first (empty when the files are as they are now).
    pub undone: Vec<String>,
    /// Why the copy could not be taken back to the branch point (a run's copies were dropped
    /// for the undo history's size cap): the branch then has the files as they are now.
    pub not_rewound: Option<String>,
}

impl Sandbox {
    /// Session `to` with a copy of session `from`'s workspace and undo record, and `from`'s
    /// profile and network choice. With `back_before`, the copy is put back as it was before
    /// that run: it and every later run are undone in the copy (never in the original). Waits
    /// for a run of `from` in this process to end first, so the copy is of a resting workspace.
    pub async fn fork_workspace(
        &self,
        from: &SessionName,
        to: &SessionName,
        back_before: Option<&str>,
    ) -> Result<Forked> {
        let slot = self.slot(from).await;
        let _resting = slot.lock().await;
        let source = self
            .registry
            .get(from)?
            .ok_or_else(|| Error::SessionNotFound {
                name: from.to_string(),
            })?;
        if self.registry.get(to)?.is_some() {
            return Err(Error::Checkpoint(format!(
                "session {to} exists already; a branch starts a session of its own"
            )));
        }
        let target = self.paths.workspaces_dir().join(to.as_str());
        let records = self.paths.checkpoints_dir();
        let (from_record, to_record) = (records.join(from.as_str()), records.join(to.as_str()));
        let keep = self.undo_caps().0;
        let run = back_before.map(str::to_owned);
        let workspace = source.workspace.clone();
        let copy_target = target.clone();
        let (_, profile) = self.policy.profile(source.profile.as_deref())?;
        let quota = profile.workspace;
        let forked = tokio::task::spawn_blocking(move || -> Result<Forked> {
            if let Some(parent) = copy_target.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| Error::io("cannot create", parent, e))?;
            }
            let allowed = branch_room(&workspace, &copy_target, &quota)?;
            let copied = copy_tree(&workspace, &copy_target, allowed).map_err(|e| {
                // Half a branch is no branch.
                let _ = std::fs::remove_dir_all(&copy_target);
                Error::Checkpoint(format!("copying the workspace failed: {e}"))
            })?;
            let mut forked = Forked {
                copied,
                undone: Vec::new(),
                not_rewound: None,
            };
            let Some(run) = run else {
                return Ok(forked);
            };
            if !from_record.is_dir() {
                forked.not_rewound = Some("the conversation has no undo record".into());
                return Ok(forked);
            }
            copy_record(&from_record, &to_record, false)?;
            let back = Store::open(&to_record, keep).and_then(|store| {
                let rewound = store.rewind(&copy_target, &run)?;
                let mut undone: Vec<String> = rewound.undone.into_iter().map(|(r, _)| r).collect();
                store.undo(&copy_target, &run, false)?;
                undone.push(run.clone());
                Ok(undone)
            });
            match back {
                Ok(undone) => forked.undone = undone,
                Err(e) => forked.not_rewound = Some(e.to_string()),
            }
            Ok(forked)
        })
        .await
        .map_err(|e| Error::Checkpoint(format!("the copy stopped: {e}")))??;
        // The branch's record, as a first run would make it, with the original's choices.
        let mut record =
            self.registry
                .get_or_create(to, None, source.profile.as_deref(), self.user)?;
        // The copy belongs to the original folder's owner; a person's folder (`--workspace`)
        // ran its code as that person, and so does the branch.
        if record.network != source.network || record.run_as != source.run_as {
            record.network = source.network;
            record.run_as = source.run_as;
            self.registry.save(&record)?;
        }
        Ok(forked)
    }
}

/// What a branch of `workspace` (copied next to `target`) may write: what the original holds
/// on the disk (sparse files count their data, as the copy writes only that), checked before
/// anything is copied against the branch's quota and the disk's free space above `keep_free`.
fn branch_room(
    workspace: &Path,
    target: &Path,
    quota: &crate::policy::WorkspaceQuota,
) -> Result<u64> {
    let io = |e| Error::io("cannot measure the workspace", workspace, e);
    let limit = crate::quota::Usage {
        bytes: quota.bytes,
        files: quota.files,
    };
    let used = crate::quota::walk::measure(workspace, limit).map_err(io)?;
    let free = target
        .parent()
        .map(crate::quota::sample)
        .transpose()
        .map_err(io)?
        .map_or(0, |fs| fs.avail_bytes);
    let room = quota.bytes.min(free.saturating_sub(quota.keep_free));
    if used.over(limit) || used.usage.bytes > room {
        return Err(Error::Checkpoint(format!(
            "a branch copies the workspace, which holds {} on the disk; the branch may take {} \
             (its quota is {}, and the disk keeps {} of its {} free). Delete files from the \
             workspace, or free disk space, then branch again",
            crate::quota::human(used.usage.bytes),
            crate::quota::human(room),
            crate::quota::human(quota.bytes),
            crate::quota::human(quota.keep_free),
            crate::quota::human(free),
        )));
    }
    Ok(room)
}

/// The undo record is IronClaw's own (no container mounts it): a plain copy. Stored copies
/// (`objects/`) are never changed once written, so a hard link serves for them where the file
/// system allows one; the log and the rest are appended to and rewritten, so they are copied.
fn copy_record(from: &Path, to: &Path, immutable: bool) -> Result<()> {
    std::fs::create_dir_all(to).map_err(|e| Error::io("cannot create", to, e))?;
    let entries = std::fs::read_dir(from).map_err(|e| Error::io("cannot read", from, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("cannot read", from, e))?;
        let kind = entry
            .file_type()
            .map_err(|e| Error::io("cannot read", entry.path(), e))?;
        let name = entry.file_name();
        let target = to.join(&name);
        if kind.is_dir() {
            copy_record(&entry.path(), &target, immutable || name == "objects")?;
        } else if kind.is_file() && name != "lock" {
            let path = entry.path();
            if !immutable || std::fs::hard_link(&path, &target).is_err() {
                std::fs::copy(&path, &target).map_err(|e| Error::io("cannot copy", &path, e))?;
            }
        }
    }
    Ok(())
}
