//! Opening IronClaw's local state: the history database and the audit log live in the data
//! folder next to the sandbox's session records. One place, so the CLI and the desktop app
//! always agree on where things are.

use std::path::PathBuf;
use std::sync::Arc;

use ironclaw_sandbox::Paths;
use ironclaw_store::{AuditLog, History, ReconcileReport, RecoveryReport};

use crate::error::{Error, Result};
use crate::session::{Deps, Runtime};

pub fn history_path(paths: &Paths) -> PathBuf {
    paths.data_dir.join("history.sqlite3")
}

pub fn audit_path(paths: &Paths) -> PathBuf {
    paths.data_dir.join("audit.log")
}

/// The audit log, anchored outside its file (see [`crate::audit_anchor`]).
pub fn open_audit(paths: &Paths) -> Result<(AuditLog, Option<ironclaw_store::TornTail>)> {
    let path = audit_path(paths);
    let anchor = crate::audit_anchor::for_log(&path, &paths.config_dir);
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

/// The history for commands that only read it (`history ls|show|search|export`). The normal
/// open comes first, so a damaged file is refused (one copy kept) and a crashed process's work
/// is marked interrupted exactly as for every other command. Only when that open needs a write
/// the disk has no room for (recovery or an upgrade on a full disk) is the history opened
/// read-only instead: reading never needs free space.
pub fn open_history_for_reading(paths: &Paths) -> Result<History> {
    match open_history(paths) {
        Ok((history, _)) => Ok(history),
        Err(Error::Store(e)) if e.is_disk_full() => {
            tracing::info!(error = %e, "no room to open the history normally; reading it read-only");
            History::open_read_only(history_path(paths)).map_err(|read_only| {
                tracing::debug!(error = %read_only, "the read-only open failed too");
                Error::Store(e)
            })
        }
        Err(e) => Err(e),
    }
}

/// Brings the history and the audit log into agreement about every run that ended since the
/// last start (see [`History::reconcile_with_audit`]). Only when this process is alone with
/// the history (`recovery` ran): another live process may be between its two writes. Never
/// fails a start: what could not be done is in the report and is tried again next time.
pub fn reconcile(
    history: &History,
    audit: &AuditLog,
    recovery: &RecoveryReport,
) -> ReconcileReport {
    if recovery.skipped_in_use {
        return ReconcileReport::default();
    }
    history
        .reconcile_with_audit(audit)
        .unwrap_or_else(|e| ReconcileReport {
            audit_unusable: Some(format!("the history could not be updated: {e}")),
            ..ReconcileReport::default()
        })
}

/// Everything a session needs, with what the start recovered and reconciled, for a front end
/// that already has its sandbox and model (the CLI, the tests).
pub fn open(runtime: Runtime) -> Result<(Deps, RecoveryReport, ReconcileReport)> {
    let paths = runtime.sandbox.paths().clone();
    let (history, report) = open_history(&paths)?;
    let (audit, _torn) = open_audit_noting(&paths, &history)?;
    let reconciled = reconcile(&history, &audit, &report);
    Ok((
        Deps {
            history: Arc::new(history),
            audit: Arc::new(audit),
            runtime: Arc::new(runtime),
        },
        report,
        reconciled,
    ))
}
