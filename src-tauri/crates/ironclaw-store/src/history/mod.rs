//! The conversation history: one SQLite file, written so that a `kill -9` at any instant loses
//! nothing that was reported as done.
//!
//! Every state change is its own short transaction, committed before the method returns.
//! Calls block on disk I/O; async callers should use `spawn_blocking`.

mod approvals;
mod checkpoints;
mod conversations;
mod executions;
mod fork;
mod full;
mod images;
mod messages;
mod migrations;
mod notices;
mod open;
mod read_only;
mod rebuild;
mod reconcile;
mod recover;
mod rows;
mod salvage;
mod search;
mod settings;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::error::Result;
use crate::model::RecoveryReport;

pub use checkpoints::RunCheckpoint;
pub use fork::{branch_key, BranchOrigin};
pub use images::{ImageInfo, NewImage, StoredImage};
pub use messages::STREAM_CHECKPOINT_INTERVAL;
pub use rebuild::{FreshStart, Recovered};
pub use reconcile::ReconcileReport;
pub use salvage::{TableSalvage, PLACEHOLDER_TITLE};
pub use search::{HIGHLIGHT_END, HIGHLIGHT_START};

/// An open history database. `Send + Sync`: share it behind an `Arc`; calls are serialized on
/// one connection, which is plenty for one person's chat.
#[derive(Debug)]
pub struct History {
    conn: Mutex<Connection>,
    path: PathBuf,
    /// The file was missing or 0 bytes when this open created it (see `note_missing_history`).
    created_empty: bool,
    /// `None` for a read-only handle, which must not count as a user of the file.
    _lock: Option<open::ProcessLock>,
}

impl History {
    /// Opens (creating if needed) the history at `path`, upgrades its schema, and — when no
    /// other IronClaw process has it open — marks whatever a previous run left unfinished as
    /// interrupted. The report says what was marked, so the UI can show it.
    ///
    /// Refuses a file that is not SQLite or fails SQLite's quick check, after copying it to
    /// `<name>.corrupt-<unix ms>`; the original is left untouched.
    pub fn open(path: impl AsRef<Path>) -> Result<(Self, RecoveryReport)> {
        let path = path.as_ref();
        Self::open_writable(path).map_err(|e| e.on_full_disk(path))
    }

    fn open_writable(path: &Path) -> Result<(Self, RecoveryReport)> {
        let path = path.to_path_buf();
        let created_empty = match std::fs::metadata(&path) {
            Ok(m) => m.len() == 0,
            Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        };
        open::refuse_non_sqlite(&path)?;
        let (lock, alone) = open::ProcessLock::acquire(&path)?;
        // Only the first opener checks for damage: damage comes from crashes, and a second
        // concurrent opener would only repeat the first one's verdict at the cost of a full read.
        let mut conn = open::connect(&path, alone)?;
        migrations::migrate(&mut conn, &path)?;
        let report = if alone {
            let report = recover::recover(&mut conn)?;
            lock.share()?;
            report
        } else {
            RecoveryReport {
                skipped_in_use: true,
                ..RecoveryReport::default()
            }
        };
        if !report.is_empty() {
            tracing::warn!(
                turns = report.interrupted_turns.len(),
                messages = report.interrupted_messages.len(),
                approvals = report.expired_approvals.len(),
                executions = report.interrupted_executions.len(),
                "history recovered unfinished work from a previous run"
            );
        }
        tracing::debug!(path = %path.display(), "history opened");
        Ok((
            Self::from_parts(conn, path, Some(lock), created_empty),
            report,
        ))
    }

    fn from_parts(
        conn: Connection,
        path: PathBuf,
        lock: Option<open::ProcessLock>,
        created_empty: bool,
    ) -> Self {
        Self {
            conn: Mutex::new(conn),
            path,
            created_empty,
            _lock: lock,
        }
    }

    /// Whether this open found no history (a missing or 0-byte file) and created it.
    pub fn was_created_empty(&self) -> bool {
        self.created_empty
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock dropped any open transaction, which rolled it back, so
        // the connection is still consistent and safe to keep using.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` in one write transaction, committed before returning. IMMEDIATE takes SQLite's
    /// write lock up front, so a concurrent writer makes us wait (busy timeout) instead of
    /// failing mid-transaction when a read would upgrade to a write.
    fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self.conn();
        let written = (|| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let value = f(&tx)?;
            tx.commit()?;
            Ok(value)
        })();
        written.map_err(|e: crate::error::StoreError| e.on_full_disk(&self.path))
    }

    /// Runs `f` in one read transaction, so multi-query reads see a single snapshot.
    fn read<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        f(&tx)
    }
}

#[cfg(test)]
mod tests;
