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
