//! Errors from the history database.

use std::path::PathBuf;

use crate::model::{ApprovalStatus, MessageStatus, TurnStatus};

/// Everything that can go wrong opening or using the history. Each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "could not open the history database {path}: {source}. Check that its folder exists, \
         is writable and the disk is not full"
    )]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    #[error(
        "could not lock {path} to coordinate with other IronClaw processes: {source}. Check that \
         the history folder is writable"
    )]
    Lock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "{path} is not a SQLite database, so IronClaw will not open it as its history. A copy \
         was kept at {backup}. Run `ironclaw history reset` to start a fresh history, or \
         `ironclaw history recover` to save whatever can still be read (the copy stays either \
         way; the app offers the same two choices)"
    )]
    NotADatabase { path: PathBuf, backup: PathBuf },

    #[error(
        "the history database {path} is damaged ({problem}), so IronClaw will not open it. A \
         copy was kept at {backup}. Run `ironclaw history recover` to copy every row that can \
         still be read into a new history, or `ironclaw history reset` to start a fresh one \
         (the copy stays either way; the app offers the same two choices)"
    )]
    Corrupt {
        path: PathBuf,
        backup: PathBuf,
        problem: String,
    },

    #[error(
        "the history database {path} is damaged or not a database, and keeping a copy at \
         {backup} failed: {source}. Nothing was changed; free some disk space or copy {path} \
         somewhere safe by hand, then move it aside"
    )]
    Backup {
        path: PathBuf,
        backup: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "another IronClaw process (the app, or a CLI command) has the history {path} open, so \
         it cannot be replaced now. Close it, then try again"
    )]
    InUse { path: PathBuf },

    #[error(
        "{path} is a SQLite database but not an IronClaw history (it holds tables {tables}), so \
         IronClaw left it untouched. Set IRONCLAW_DATA_DIR to another folder, or move {path} \
         aside to start a fresh history"
    )]
    Foreign { path: PathBuf, tables: String },

    #[error(
        "the history database {path} has schema version {found}, but this IronClaw only knows \
         up to {supported}. Update IronClaw, or point it at another history file"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },

    #[error("upgrading the history database to schema version {version} failed: {source}. The database was left at the previous version; report this as a bug")]
    Migration {
        version: i64,
        #[source]
        source: rusqlite::Error,
    },

    #[error("could not read {path}: {source}. Check the file's permissions")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("no {what} with id {id} in the history; it may have been deleted")]
    NotFound { what: &'static str, id: String },

    #[error(
        "a branch starts at one of the person's messages in that conversation; {id} is not one"
    )]
    NotABranchPoint { id: String },

    #[error("approval {id} was already {status}; ask for a new approval to run this code")]
    NotPending { id: String, status: ApprovalStatus },

    #[error(
        "approval {id} is {status}, not approved; code may only run after the person approves it"
    )]
    NotApproved { id: String, status: ApprovalStatus },

    #[error("approval {id} was already used for a run; each run needs its own approval")]
    ApprovalUsed { id: String },

    #[error("execution {id} already finished (or was marked interrupted after a restart); its outcome cannot change")]
    ExecutionFinished { id: String },

    #[error("turn {id} already ended as {status}; start a new turn")]
    TurnEnded { id: String, status: TurnStatus },

    #[error(
        "message {id} is already {status} and can no longer change; add a new message instead"
    )]
    MessageFinished { id: String, status: MessageStatus },

    #[error("stored JSON in the history is invalid: {0}. The file was edited outside IronClaw or is damaged")]
    Json(#[from] serde_json::Error),

    #[error(
        "the disk holding the history {path} is full ({free}), so IronClaw could not save to \
         it. Free space on that disk (IronClaw's data folder {} also holds the audit log and \
         the sandbox workspaces), then go on: what was saved before is intact",
        folder_of(path).display()
    )]
    DiskFull {
        path: PathBuf,
        free: crate::disk::FreeSpace,
        #[source]
        source: Box<rusqlite::Error>,
    },

    #[error(
        "the history {path} cannot be read without changing it ({reason}), and this command \
         only reads. Run `ironclaw chat` or open the app once to bring it up to date"
    )]
    NeedsWrite { path: PathBuf, reason: String },

    #[error("history database error: {0}. If this repeats, restart IronClaw; if the disk is full, free some space")]
    Sqlite(#[from] rusqlite::Error),
}

impl StoreError {
    /// Turns a SQLite "disk full" failure (wherever it surfaced: a write, a commit, opening or
    /// upgrading the file) into [`StoreError::DiskFull`] naming `path` and the space left.
    pub(crate) fn on_full_disk(self, path: &std::path::Path) -> Self {
        let source = match self {
            Self::Sqlite(source) | Self::Open { source, .. } | Self::Migration { source, .. }
                if crate::disk::sqlite_is_disk_full(&source) =>
            {
                source
            }
            other => return other,
        };
        Self::DiskFull {
            path: path.to_path_buf(),
            free: crate::disk::FreeSpace(crate::disk::free_bytes(folder_of(path))),
            source: Box::new(source),
        }
    }

    /// Whether this failure is the disk (or its quota) being full.
    pub fn is_disk_full(&self) -> bool {
        matches!(self, Self::DiskFull { .. })
    }
}

/// The folder holding `path` (`.` for a bare file name).
fn folder_of(path: &std::path::Path) -> &std::path::Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."))
}

/// Shorthand for results from the history.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

impl StoreError {
    /// Whether this is a refusal of a damaged history file (one copy kept), which "Start
    /// fresh" ([`crate::History::start_fresh`]) or recovery
    /// ([`crate::History::recover_readable`]) can get past.
    pub fn is_damaged_history(&self) -> bool {
        matches!(self, Self::NotADatabase { .. } | Self::Corrupt { .. })
    }

    /// Whether trying the same call again may succeed: only a busy database (another process
    /// holding a write lock past the busy timeout) is worth a retry.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => matches!(
                e.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ),
            Self::Sqlite(_)
            | Self::DiskFull { .. }
            | Self::NeedsWrite { .. }
            | Self::Open { .. }
            | Self::Lock { .. }
            | Self::NotADatabase { .. }
            | Self::Corrupt { .. }
            | Self::Backup { .. }
            | Self::InUse { .. }
            | Self::TooNew { .. }
            | Self::Foreign { .. }
            | Self::Migration { .. }
            | Self::NotFound { .. }
            | Self::NotABranchPoint { .. }
            | Self::NotPending { .. }
            | Self::NotApproved { .. }
            | Self::ApprovalUsed { .. }
            | Self::TurnEnded { .. }
            | Self::ExecutionFinished { .. }
            | Self::MessageFinished { .. }
            | Self::Io { .. }
            | Self::Json(_) => false,
        }
    }
}
