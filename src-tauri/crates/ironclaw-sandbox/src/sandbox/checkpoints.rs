//! Each run's checkpoint: the workspace's record is brought up to date before the run and the
//! run's changes recorded after it (see `ironclaw_workspace::checkpoint`), so any run can be
//! undone. The record of session S lives in `<data>/checkpoints/S`, which no container mounts.
//!
//! A checkpoint that fails never fails the run: the run's result says it cannot be undone.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ironclaw_workspace::checkpoint::{
    self, Change, CheckpointError, Rewound, Store, Stored, UndoOutcome,
};

use super::Sandbox;
use crate::error::{Error, Result};
use crate::exec::ExecResult;
use crate::paths::Paths;
use crate::policy::Policy;
use crate::session::{Registry, SessionName};
use ironclaw_protocol::FileChange;

impl Sandbox {
    /// The session's record, opened once per process.
    fn checkpoints(&self, name: &SessionName, workspace: &Path) -> Result<Arc<Store>> {
        let mut stores = self
            .checkpoint_stores
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(store) = stores.get(name) {
            return Ok(store.clone());
        }
        let store = open_store(&self.paths, name, workspace, self.undo_caps().0)?;
        // Copies keep the disk's floor that the session's runs keep.
        if let Ok(Some(record)) = self.registry.get(name) {
            if let Ok((_, profile)) = self.policy.profile(record.profile.as_deref()) {
                store.keep_free(profile.workspace.keep_free);
            }
        }
        store.watch_workspace(
            self.workspace_watch
                .load(std::sync::atomic::Ordering::Relaxed),
        );
        stores.insert(name.clone(), store.clone());
        Ok(store)
    }

    /// Before a run: the record is brought up to date and the run noted as started. Returns
    /// the run's id, or why it cannot be undone.
    pub(super) async fn checkpoint_before(
        &self,
        name: &SessionName,
        workspace: &Path,
    ) -> std::result::Result<String, String> {
        let store = self
            .checkpoints(name, workspace)
            .map_err(|e| e.to_string())?;
        let run = uuid::Uuid::now_v7().to_string();
        let (ws, id) = (workspace.to_owned(), run.clone());
        blocking(move || store.before_run(&ws, &id))
            .await
            .map(|_| run)
            .map_err(|e| e.to_string())
    }

    /// A checkpoint taken by [`Sandbox::checkpoint_before`] for a run that then never started:
    /// what changes in the workspace next is not that run's.
    pub(super) async fn forget_checkpoint(
        &self,
        name: &SessionName,
        workspace: &Path,
        run: std::result::Result<String, String>,
    ) {
        let Ok(run) = run else { return };
        let Ok(store) = self.checkpoints(name, workspace) else {
            return;
        };
        if let Err(e) = blocking(move || store.forget_run(&run)).await {
            tracing::warn!(error = %e, "could not withdraw the checkpoint of a run that never started");
        }
    }

    /// The checkpoint of a run about to start, taken now, before deciding whether it may start
    /// without asking: a run whose checkpoint cannot be taken cannot be undone. Returns the id
    /// to pass in [`crate::exec::ExecRequest::checkpointed`], or why the workspace cannot be
    /// checkpointed (the session's record is damaged, the cap cannot hold the changes, the
    /// disk is full…).
    pub async fn prepare_checkpoint(
        &self,
        name: &SessionName,
        options: &super::SessionOptions,
    ) -> Result<String> {
        let slot = self.slot(name).await;
        let _running = slot.lock().await;
        let record = self.record_or_adopt(name, options).await?;
        self.checkpoint_before(name, &record.workspace)
            .await
            .map_err(Error::Checkpoint)
    }

    /// The undo history caps in force: per conversation, and all conversations together.
    pub fn undo_caps(&self) -> (u64, u64) {
        *self.undo_caps.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Caps other than the policy's (Settings); `None` keeps the policy's. Records already open
    /// keep to the new per-conversation cap from their next run, and the total from the next
    /// run that adds copies.
    pub fn use_undo_caps(&self, per: Option<u64>, total: Option<u64>) {
        let caps = (
            per.unwrap_or(self.policy.undo_keep_bytes),
            total.unwrap_or(self.policy.undo_keep_total_bytes),
        );
        *self.undo_caps.lock().unwrap_or_else(|e| e.into_inner()) = caps;
        for store in self.open_stores() {
            store.set_cap(caps.0);
        }
    }

    /// [`Sandbox::use_undo_caps`], and the total kept to now.
    pub async fn set_undo_caps(&self, per: Option<u64>, total: Option<u64>) {
        self.use_undo_caps(per, total);
        self.keep_undo_total().await;
    }

    /// Keeps all conversations' undo history within the total cap, dropping the oldest runs of
    /// any conversation first. Never fails a run: what went wrong is logged.
    pub(super) async fn keep_undo_total(&self) {
        let stores = match self.every_store().await {
            Ok(stores) => stores,
            Err(e) => {
                tracing::warn!(error = %e, "undo history: the records could not be listed");
                return;
            }
        };
        let total = self.undo_caps().1;
        match blocking(move || checkpoint::enforce_total(&stores, total)).await {
            Ok(r) if r.over => tracing::warn!(
                kept = r.kept,
                total,
                "undo history: what the workspaces hold now alone passes the total cap"
            ),
            Ok(r) if r.halvings > 0 => tracing::info!(
                kept = r.kept,
                halvings = r.halvings,
                "undo history: the oldest runs were dropped to stay within the total cap"
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "undo history: the total cap could not be kept"),
        }
    }

    fn open_stores(&self) -> Vec<Arc<Store>> {
        let stores = self
            .checkpoint_stores
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        stores.values().cloned().collect()
    }

    /// The record of every session with one, each opened once per process (the ones no run
    /// opened yet, now: their copies count toward the total). Opening reads files: off the
    /// async workers.
    async fn every_store(&self) -> Result<Vec<Arc<Store>>> {
        let dir = self.paths.checkpoints_dir();
        let per = self.undo_caps().0;
        let have: std::collections::HashSet<SessionName> = self
            .checkpoint_stores
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect();
        let opened = blocking(move || {
            let names: Vec<SessionName> = match std::fs::read_dir(&dir) {
                Ok(entries) => entries
                    .flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .filter_map(|e| SessionName::new(e.file_name().to_string_lossy()).ok())
                    .filter(|n| !have.contains(n))
                    .collect(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
                Err(e) => return Err(CheckpointError::io(&dir, e)),
            };
            names
                .into_iter()
                .map(|n| Ok((Store::open(&dir.join(n.as_str()), per)?, n)))
                .collect::<std::result::Result<Vec<_>, CheckpointError>>()
        })
        .await
        .map_err(checkpoint_error)?;
        let mut stores = self
            .checkpoint_stores
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for (store, name) in opened {
            stores.entry(name).or_insert_with(|| Arc::new(store));
        }
        Ok(stores.values().cloned().collect())
    }

    /// Files of the session's workspace some process held open for writing (a descriptor or
    /// a shared memory mapping, typically kept by an interpreter from an earlier run) when its
    /// record was last brought up to date: such a file can change at any moment without that
    /// being recorded. Empty when no record is open in this process. Under gVisor, also asked
    /// from inside the sandbox (see below).
    pub async fn held_for_writing(&self, name: &SessionName) -> Result<Vec<String>> {
        let store = self
            .checkpoint_stores
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned();
        let Some(store) = store else {
            return Ok(Vec::new());
        };
        let workspace = workspace_of(&self.paths, name)?;
        let held = blocking(move || store.held_for_writing(&workspace))
            .await
            .map_err(checkpoint_error)?;
        if held.is_empty() {
            return Ok(held);
        }
        // Under gVisor the host's lease says "held" for most files an earlier run wrote
        // (gVisor keeps its own descriptors of them open for writing), so the sandbox is asked
        // too; its answer counts only when it is complete, and only to say "nothing".
        match self.held_inside(name).await {
            Ok(Some(inside)) if inside.unknowable.is_none() && inside.paths.is_empty() => {
                Ok(Vec::new())
            }
            Ok(Some(inside)) => {
                if let Some(why) = &inside.unknowable {
                    tracing::debug!(session = %name, why, "what the sandbox holds is not known");
                }
                let mut all = held;
                for path in inside.paths {
                    if !all.contains(&path) {
                        all.push(path);
                    }
                }
                Ok(all)
            }
            Ok(None) => Ok(held),
            Err(e) => {
                tracing::warn!(session = %name, error = %e, "could not ask the sandbox what it holds");
                Ok(held)
            }
        }
    }

    /// Records what a prepared run changed when the run itself ended in an error (its container
    /// was killed, the engine went away…): the code may have changed files before that, and
    /// those changes must be undoable too.
    pub async fn finish_checkpoint(
        &self,
        name: &SessionName,
        run: &str,
    ) -> Result<Vec<FileChange>> {
        let slot = self.slot(name).await;
        let _running = slot.lock().await;
        let workspace = workspace_of(&self.paths, name)?;
        let store = self.checkpoints(name, &workspace)?;
        let id = run.to_owned();
        let changes = blocking(move || store.after_run(&workspace, &id))
            .await
            .map_err(checkpoint_error)?;
        self.keep_undo_total().await;
        Ok(file_changes(&changes))
    }

    /// After a run: what it changed, into its result (or why it cannot be undone).
    pub(super) async fn checkpoint_after(
        &self,
        name: &SessionName,
        workspace: &Path,
        before: std::result::Result<String, String>,
        result: &mut ExecResult,
    ) {
        let run = match before {
            Ok(run) => run,
            Err(e) => {
                result.checkpoint_error = Some(e);
                return;
            }
        };
        let store = match self.checkpoints(name, workspace) {
            Ok(store) => store,
            Err(e) => {
                result.checkpoint_error = Some(e.to_string());
                return;
            }
        };
        let (ws, id) = (workspace.to_owned(), run.clone());
        match blocking(move || store.after_run(&ws, &id)).await {
            Ok(changes) => {
                result.changes = file_changes(&changes);
                result.run_id = Some(run);
                if !changes.is_empty() {
                    self.keep_undo_total().await;
                }
            }
            // Still linked to its before-state: undo puts the workspace back as before it
            // (`Store::undo`), whatever stopped the record.
            Err(e) => {
                result.run_id = Some(run);
                result.changes_unknown = Some(e.to_string());
            }
        }
    }

    /// [`undo`], waiting for a run in progress in this process to end first.
    pub async fn undo(
        &self,
        name: &SessionName,
        run: Option<&str>,
        force: bool,
    ) -> Result<(String, UndoOutcome)> {
        let slot = self.slot(name).await;
        let _running = slot.lock().await;
        let workspace = workspace_of(&self.paths, name)?;
        undo_with(self.checkpoints(name, &workspace)?, workspace, run, force).await
    }

    /// [`rewind`], waiting for a run in progress in this process to end first.
    pub async fn rewind(&self, name: &SessionName, run: &str) -> Result<Rewound> {
        let slot = self.slot(name).await;
        let _running = slot.lock().await;
        let workspace = workspace_of(&self.paths, name)?;
        rewind_with(self.checkpoints(name, &workspace)?, workspace, run).await
    }

    /// [`redo`], waiting for a run in progress in this process to end first.
    pub async fn redo(&self, name: &SessionName, run: &str) -> Result<Vec<FileChange>> {
        let slot = self.slot(name).await;
        let _running = slot.lock().await;
        let workspace = workspace_of(&self.paths, name)?;
        redo_with(self.checkpoints(name, &workspace)?, workspace, run).await
    }
}

/// Puts session `name`'s workspace back as it was before `run` (the newest run not undone
/// when `None`). Later runs that changed the same files are named and nothing is changed,
/// unless `force`: then they are undone too. Needs no Docker: the CLI's `ironclaw undo`.
pub async fn undo(
    paths: &Paths,
    name: &SessionName,
    run: Option<&str>,
    force: bool,
) -> Result<(String, UndoOutcome)> {
    let workspace = workspace_of(paths, name)?;
    let keep = Policy::load(paths)?.undo_keep_bytes;
    undo_with(
        open_store(paths, name, &workspace, keep)?,
        workspace,
        run,
        force,
    )
    .await
}

/// Puts back what an undone `run` had made.
pub async fn redo(paths: &Paths, name: &SessionName, run: &str) -> Result<Vec<FileChange>> {
    let workspace = workspace_of(paths, name)?;
    let keep = Policy::load(paths)?.undo_keep_bytes;
    redo_with(open_store(paths, name, &workspace, keep)?, workspace, run).await
}

/// Puts session `name`'s workspace back as it was right after `run`: every later run is
/// undone, newest first. Needs no Docker: the CLI's `ironclaw undo --to`.
pub async fn rewind(paths: &Paths, name: &SessionName, run: &str) -> Result<Rewound> {
    let workspace = workspace_of(paths, name)?;
    let keep = Policy::load(paths)?.undo_keep_bytes;
    rewind_with(open_store(paths, name, &workspace, keep)?, workspace, run).await
}

async fn rewind_with(store: Arc<Store>, workspace: PathBuf, run: &str) -> Result<Rewound> {
    let id = run.to_owned();
    blocking(move || store.rewind(&workspace, &id))
        .await
        .map_err(checkpoint_error)
}

/// Both sides (before, after) of `path` as `run` changed it, from the record (files read up to
/// `max` bytes each): what the app shows as a diff. Needs no Docker.
pub async fn change_sides(
    paths: &Paths,
    name: &SessionName,
    run: &str,
    path: &str,
    max: u64,
) -> Result<[Stored; 2]> {
    let workspace = workspace_of(paths, name)?;
    let keep = Policy::load(paths)?.undo_keep_bytes;
    let store = open_store(paths, name, &workspace, keep)?;
    let (run, path) = (run.to_owned(), path.to_owned());
    blocking(move || store.sides(&run, &path, max))
        .await
        .map_err(checkpoint_error)
}

async fn undo_with(
    store: Arc<Store>,
    workspace: PathBuf,
    run: Option<&str>,
    force: bool,
) -> Result<(String, UndoOutcome)> {
    let run = match run {
        Some(r) => r.to_owned(),
        None => {
            let s = store.clone();
            blocking(move || s.last_run())
                .await
                .map_err(checkpoint_error)?
                .ok_or_else(|| {
                    Error::Checkpoint("this session has no run that can be undone".into())
                })?
        }
    };
    let id = run.clone();
    let outcome = blocking(move || store.undo(&workspace, &id, force))
        .await
        .map_err(checkpoint_error)?;
    Ok((run, outcome))
}

async fn redo_with(store: Arc<Store>, workspace: PathBuf, run: &str) -> Result<Vec<FileChange>> {
    let id = run.to_owned();
    let changes = blocking(move || store.redo(&workspace, &id))
        .await
        .map_err(checkpoint_error)?;
    Ok(file_changes(&changes))
}

fn workspace_of(paths: &Paths, name: &SessionName) -> Result<PathBuf> {
    Registry::new(paths.clone())
        .get(name)?
        .map(|r| r.workspace)
        .ok_or_else(|| Error::SessionNotFound {
            name: name.to_string(),
        })
}

/// The record of session `name`, kept apart from its workspace.
fn open_store(
    paths: &Paths,
    name: &SessionName,
    workspace: &Path,
    keep: u64,
) -> Result<Arc<Store>> {
    let dir = paths.checkpoints_dir().join(name.as_str());
    if dir.starts_with(workspace) {
        return Err(Error::Checkpoint(format!(
            "the workspace {} contains IronClaw's data folder, so its checkpoints would be \
             within the code's reach; choose another workspace folder",
            workspace.display()
        )));
    }
    Ok(Arc::new(Store::open(&dir, keep).map_err(checkpoint_error)?))
}

pub fn file_changes(changes: &[Change]) -> Vec<FileChange> {
    changes
        .iter()
        .map(|c| FileChange {
            path: c.display_path(),
            change: c.change,
        })
        .collect()
}

fn checkpoint_error(e: CheckpointError) -> Error {
    Error::Checkpoint(e.to_string())
}

/// Workspace walks and copies are blocking file work: off the async workers.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> std::result::Result<T, CheckpointError> + Send + 'static,
) -> std::result::Result<T, CheckpointError> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(CheckpointError::Io {
            path: "checkpoint".into(),
            reason: format!("the checkpoint task stopped: {e}"),
        })
    })
}
