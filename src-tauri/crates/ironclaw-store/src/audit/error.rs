//! Errors from the audit log.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How the hash chain is broken at the first bad entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainProblem {
    /// The entry's contents no longer match its hash, or the next entry's `prev` no longer
    /// matches this line.
    Edited,
    /// One or more entries before this line are missing (its `seq` skips ahead).
    Removed,
    /// Entries are out of order (the expected entry appears later).
    Reordered,
    /// An entry repeats an earlier `seq`: something was added that the writer never wrote.
    Inserted,
    /// The line is not a well-formed entry.
    Malformed,
}

impl fmt::Display for ChainProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Edited => "an entry was edited after it was written",
            Self::Removed => "entries before this line were removed",
            Self::Reordered => "entries were moved out of order",
            Self::Inserted => "an entry was inserted",
            Self::Malformed => "the line is not a valid audit entry",
        })
    }
}

/// Everything that can go wrong writing or verifying the audit log.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error(
        "could not read or write the audit log {path}: {source}. Check the folder's permissions \
         and free disk space"
    )]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "the disk holding the audit log {path} is full ({free}), so IronClaw could not record \
         this in it: {source}. Free space on that disk (IronClaw's data folder also holds the \
         history and the sandbox workspaces), then go on; the log's earlier entries are intact"
    )]
    DiskFull {
        path: PathBuf,
        free: crate::disk::FreeSpace,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "the audit log is broken at line {line} (entry {seq}): {problem}. The file was changed \
         outside IronClaw; keep it as evidence, and move it aside to start a new log"
    )]
    Broken {
        /// 1-based line number of the first bad entry.
        line: u64,
        /// The entry's `seq` (or, for a missing or unreadable one, the `seq` expected there).
        seq: u64,
        problem: ChainProblem,
    },

    #[error(
        "the last entry of the audit log {path} cannot be trusted ({problem}), so new entries \
         cannot be chained to it. Run the audit verification to find the first bad line, then \
         move the file aside to start a new log"
    )]
    UnreadableTail { path: PathBuf, problem: String },

    #[error("could not encode an audit entry as JSON: {0}; this is a bug, please report it")]
    Json(#[from] serde_json::Error),
}

impl AuditError {
    /// An I/O failure on the log at `path`, told apart when the disk is full.
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        if crate::disk::io_is_disk_full(&source) {
            Self::DiskFull {
                path: path.to_path_buf(),
                free: crate::disk::FreeSpace(crate::disk::free_bytes(path)),
                source,
            }
        } else {
            Self::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    }

    /// Whether this failure is the disk (or its quota) being full.
    pub fn is_disk_full(&self) -> bool {
        matches!(self, Self::DiskFull { .. })
    }
}
