//! Keeping the history and the audit log telling the same story about every run.
//!
//! A run's end is written twice: to the history (what the app shows) and to the audit log
//! (the tamper-evident record). When one write fails (a full disk) or the process dies between
//! them, the two disagree: recovery then marks the run "interrupted, no exit code" although
//! the audit log holds its result, or the audit log lacks a run the history shows. At a start
//! (when no other IronClaw process has the history open), every ended run not compared yet is
//! looked up in the audit log, once:
//! - interrupted in the history, with a result in the audit log: the history takes the audit's
//!   exit code and flags, marked "reconciled from audit log";
//! - finished in the history, missing from the audit log: its result is appended to the audit
//!   log, marked as reconciled from the history (appended late, never inserted in the past);
//! - in neither: it stays interrupted (the process stopped mid-run);
//! - both, with different exit codes: reported, nothing changed.
//!
//! Only a log whose chain verifies is used: an edited log must not rewrite the history.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use rusqlite::params;
use serde::Serialize;

use super::rows::{self, signed, EXECUTION_COLUMNS};
use super::History;
use crate::audit::{verify, AuditEntry, AuditLog};
use crate::error::Result;
use crate::model::Execution;
use crate::time::Timestamp;
use ironclaw_protocol::{AuditRecord, ExecResultRecord, ExecutionId};

/// What one reconciliation changed or found. Empty when the two records agreed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReconcileReport {
    /// Runs the history had as interrupted, now with the audit log's result.
    pub from_audit: Vec<ExecutionId>,
    /// Runs the audit log lacked, now appended to it from the history.
    pub to_audit: Vec<ExecutionId>,
    /// Runs whose exit code differs between the two (left as they are).
    pub disagree: Vec<ExecutionId>,
    /// Why the audit log was not used (its chain does not verify, or it cannot be read or
    /// appended to); the runs stay unreconciled and are tried again at the next start.
    pub audit_unusable: Option<String>,
}

impl ReconcileReport {
    pub fn is_empty(&self) -> bool {
        self.from_audit.is_empty()
            && self.to_audit.is_empty()
            && self.disagree.is_empty()
            && self.audit_unusable.is_none()
    }
}

impl std::fmt::Display for ReconcileReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if !self.from_audit.is_empty() {
            parts.push(format!(
                "{} run(s) the history had lost the result of were reconciled from the audit log",
                self.from_audit.len()
            ));
        }
        if !self.to_audit.is_empty() {
            parts.push(format!(
                "{} run(s) missing from the audit log were appended to it from the history",
                self.to_audit.len()
            ));
        }
        if !self.disagree.is_empty() {
            let ids: Vec<String> = self.disagree.iter().map(|id| id.to_string()).collect();
            parts.push(format!(
                "the history and the audit log disagree on the exit code of run(s) {}",
                ids.join(", ")
            ));
        }
        if let Some(why) = &self.audit_unusable {
            parts.push(format!(
                "the history was not compared with the audit log: {why}"
            ));
        }
        f.write_str(&parts.join("; "))
    }
}

/// How a run was compared; stored in `executions.reconciled`.
enum Mark {
    Matches,
    FromAudit(Box<(Timestamp, ExecResultRecord)>),
    ToAudit,
    Disagrees,
    Unknown,
}

impl History {
    /// Compares every ended run not compared yet with `audit` and repairs the side that lost
    /// it (see the module docs). Idempotent: each run is compared once. Call it only when no
    /// other process is writing (after an open whose recovery ran).
    pub fn reconcile_with_audit(&self, audit: &AuditLog) -> Result<ReconcileReport> {
        let mut report = ReconcileReport::default();
        let runs = self.read(|tx| {
            let mut query = tx.prepare(&format!(
                "SELECT {EXECUTION_COLUMNS} FROM executions
                 WHERE reconciled IS NULL AND ended_at IS NOT NULL ORDER BY seq"
            ))?;
            let runs = query
                .query_map([], rows::execution)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(runs)
        })?;
        if runs.is_empty() {
            return Ok(report);
        }
        let mut results = match exec_results(audit.path()) {
            Ok(results) => results,
            Err(why) => {
                tracing::warn!(%why, "the audit log cannot be used to reconcile the history");
                report.audit_unusable = Some(why);
                return Ok(report);
            }
        };
        let mut marks = Vec::with_capacity(runs.len());
        for run in runs {
            let mark = match (results.remove(&run.id), run.interrupted) {
                (Some(entry), true) => Mark::FromAudit(Box::new(entry)),
                (Some((_, result)), false) => {
                    if result.exit_code == run.exit_code {
                        Mark::Matches
                    } else {
                        Mark::Disagrees
                    }
                }
                (None, true) => Mark::Unknown,
                (None, false) => match audit.record(&from_history(&run)) {
                    Ok(_) => Mark::ToAudit,
                    Err(e) => {
                        report.audit_unusable = Some(format!("appending to it failed: {e}"));
                        break;
                    }
                },
            };
            marks.push((run.id, mark));
        }
        self.write(|tx| {
            for (id, mark) in &marks {
                let label = match mark {
                    Mark::Matches => "matches",
                    Mark::ToAudit => "to_audit",
                    Mark::Disagrees => "disagrees",
                    Mark::Unknown => "unknown",
                    Mark::FromAudit(entry) => {
                        let (ended_at, d) = entry.as_ref();
                        tx.execute(
                            "UPDATE executions SET interrupted = 0, ended_at = ?2, exit_code = ?3,
                                 duration_ms = ?4, peak_memory_bytes = ?5, timed_out = ?6,
                                 cancelled = ?7, oom_killed = ?8
                             WHERE id = ?1 AND interrupted = 1",
                            params![
                                id,
                                ended_at,
                                d.exit_code,
                                d.duration_ms.map(signed),
                                d.peak_memory_bytes.map(signed),
                                d.timed_out,
                                d.cancelled,
                                d.oom_killed,
                            ],
                        )?;
                        "from_audit"
                    }
                };
                tx.execute(
                    "UPDATE executions SET reconciled = ?2 WHERE id = ?1",
                    params![id, label],
                )?;
            }
            Ok(())
        })?;
        for (id, mark) in marks {
            match mark {
                Mark::FromAudit(_) => report.from_audit.push(id),
                Mark::ToAudit => report.to_audit.push(id),
                Mark::Disagrees => report.disagree.push(id),
                Mark::Matches | Mark::Unknown => {}
            }
        }
        if !report.is_empty() {
            tracing::warn!(%report, "history and audit log reconciled");
        }
        Ok(report)
    }
}

/// The audit log's `exec_result` entries by run, with when each was written, from a log whose
/// chain verifies.
fn exec_results(
    path: &Path,
) -> std::result::Result<HashMap<ExecutionId, (Timestamp, ExecResultRecord)>, String> {
    if !path.exists() {
        return Ok(HashMap::new());
    }
    let verified = verify(path).map_err(|e| e.to_string())?;
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut results = HashMap::new();
    // Only the lines the verification covered (a torn last line is not an entry).
    for line in BufReader::new(file).lines().take(verified.entries as usize) {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        let Ok(entry) = serde_json::from_str::<AuditEntry>(&line) else {
            continue;
        };
        if let Some(AuditRecord::ExecResult(result)) = entry.record() {
            results.insert(result.execution_id, (entry.ts, result));
        }
    }
    Ok(results)
}

/// An `exec_result` entry for a run only the history recorded.
fn from_history(run: &Execution) -> AuditRecord {
    AuditRecord::ExecResult(ExecResultRecord {
        approval_id: run.approval_id,
        execution_id: run.id,
        exit_code: run.exit_code,
        duration_ms: run.duration_ms,
        peak_memory_bytes: run.peak_memory_bytes,
        timed_out: run.timed_out,
        cancelled: run.cancelled,
        oom_killed: run.oom_killed,
        integrity: None,
        reconciled_from: Some("history".into()),
        ended_at: Some(run.ended_at.unwrap_or_else(Timestamp::now).0),
    })
}
