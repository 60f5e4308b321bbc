//! Opening IronClaw's local state: the history database and the audit log live in the data
//! folder next to the sandbox's session records. One place, so the CLI and the desktop app
//! always agree on where things are.

use std::path::PathBuf;
use std::sync::Arc;

use ironclaw_sandbox::{Paths, Sandbox};
use ironclaw_store::{AuditLog, History, RecoveryReport};

use crate::error::{Error, Result};
use crate::session::Deps;

pub fn history_path(paths: &Paths) -> PathBuf {
    paths.data_dir.join("history.sqlite3")
}

pub fn audit_path(paths: &Paths) -> PathBuf {
    paths.data_dir.join("audit.log")
}

/// The audit log, anchored outside its file (see [`crate::audit_anchor`]).
pub fn open_audit(paths: &Paths) -> Result<(AuditLog, Option<ironclaw_store::TornTail>)> {
    let path = audit_path(paths);
    let anchor = crate::audit_anchor::for_log(&path);
    Ok(AuditLog::open_anchored(path, anchor)?)
}

/// The audit log, opened beside `history`: when the log was found tampered with and a new
/// chain started, that is recorded in the history as a notice for the app and the CLI.
pub fn open_audit_noting(
    paths: &Paths,
    history: &History,
) -> Result<(AuditLog, Option<ironclaw_store::TornTail>)> {
    let (audit, torn) = open_audit(paths)?;
    if let Some(restart) = audit.restarted() {
        let notice = ironclaw_store::StateNotice::AuditRestarted {
            restart: restart.clone(),
        };
        // Not fatal: the new chain already records the link; only the banner would be lost.
        if let Err(e) = history.record_notice(notice) {
            tracing::warn!(error = %e, "could not record the audit restart as a notice");
        }
    }
    Ok((audit, torn))
}

/// The history alone (for `history` commands that need no engine or model). A history created
/// here beside an audit log that lists entries is recorded as a notice (see
/// [`History::note_missing_history`]).
pub fn open_history(paths: &Paths) -> Result<(History, RecoveryReport)> {
    std::fs::create_dir_all(&paths.data_dir).map_err(|e| {
        Error::Sandbox(ironclaw_sandbox::Error::io(
            "cannot create folder",
            &paths.data_dir,
            e,
        ))
    })?;
    let (history, report) = History::open(history_path(paths))?;
    if let Err(e) = history.note_missing_history(&audit_path(paths)) {
        tracing::warn!(error = %e, "could not compare the new history with the audit log");
    }
    Ok((history, report))
}

/// Everything a session needs.
pub fn open(
    sandbox: Arc<Sandbox>,
    provider: Arc<dyn ironclaw_llm::Provider>,
) -> Result<(Deps, RecoveryReport)> {
    let paths = sandbox.paths().clone();
    let (history, report) = open_history(&paths)?;
    let (audit, _torn) = open_audit_noting(&paths, &history)?;
    Ok((
        Deps {
            sandbox,
            history: Arc::new(history),
            audit: Arc::new(audit),
            provider,
        },
        report,
    ))
}
