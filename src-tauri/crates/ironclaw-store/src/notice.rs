//! Things found wrong with IronClaw's own records at start that the person must hear about
//! once: a history that vanished beside an audit log that still lists its conversations, and
//! an audit log that was tampered with (and replaced by a new chain).
//!
//! "Once" is stored in the history itself (see `History::take_notices`): each notice keeps a
//! flag per place that shows it, so the app's banner and the CLI's line each appear once per
//! occurrence, whichever is used first, and never on every command.

use std::collections::HashSet;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::audit::ChainRestart;

/// One occurrence to report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum StateNotice {
    /// The history was missing or empty (0 bytes) when opened, while the audit log lists
    /// entries for conversations.
    #[serde(rename_all = "camelCase")]
    HistoryMissing {
        audit_entries: u64,
        conversations: u64,
    },
    /// The audit log was found tampered with; it was kept aside and a new chain started.
    #[serde(rename_all = "camelCase")]
    AuditRestarted { restart: ChainRestart },
}

impl fmt::Display for StateNotice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::HistoryMissing {
                audit_entries,
                conversations,
            } => write!(
                f,
                "history is empty but the audit log lists {audit_entries} entries for \
                 {conversations} conversations; the history may have been deleted or replaced"
            ),
            Self::AuditRestarted { restart } => f.write_str(&restart.describe()),
        }
    }
}

/// Who shows a notice; each shows it once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeAudience {
    Cli,
    App,
}

/// Entries in the audit log at `path` and the distinct conversations they name. Lenient on
/// purpose: a damaged log still says how much history it once described.
pub fn audit_summary(path: &Path) -> std::io::Result<(u64, u64)> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, 0)),
        Err(e) => return Err(e),
    };
    let mut entries = 0u64;
    let mut conversations = HashSet::new();
    for line in BufReader::new(file).split(b'\n') {
        let line = line?;
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(&line) else {
            continue;
        };
        entries += 1;
        if let Some(id) = value["data"]["conversation_id"].as_str() {
            conversations.insert(id.to_owned());
        }
    }
    Ok((entries, conversations.len() as u64))
}
