//! Runs of approved code: started (before the sandbox is asked) and finished (with outcome).

use std::collections::HashMap;

use rusqlite::{params, OptionalExtension, Transaction};

use super::approvals::get_approval;
use super::rows::{self, signed, EXECUTION_COLUMNS};
use super::History;
use crate::error::{Result, StoreError};
use crate::model::{ApprovalStatus, Execution, ExecutionOutcome};
use crate::time::Timestamp;
use ironclaw_protocol::{ApprovalId, ConversationId, ExecutionId};

impl History {
    /// Records that an approved request is about to run, and returns the run with the exact
    /// code to execute. The code comes from the approval, not the caller, so what runs is
    /// always what was approved (including the person's edits).
    ///
    /// Refuses an approval that is not `Approved` or that already has a run.
    pub fn start_execution(
        &self,
        approval_id: ApprovalId,
        log_path: Option<&str>,
    ) -> Result<Execution> {
        let id = ExecutionId::new();
        let now = Timestamp::now();
        let execution = self.write(|tx| {
            let approval = get_approval(tx, approval_id)?;
            match approval.status {
                ApprovalStatus::Approved => {}
                ApprovalStatus::Pending | ApprovalStatus::Denied | ApprovalStatus::Expired => {
                    return Err(StoreError::NotApproved {
                        id: approval_id.to_string(),
                        status: approval.status,
                    })
                }
            }
            let used: Option<ExecutionId> = tx
                .query_row(
                    "SELECT id FROM executions WHERE approval_id = ?1",
                    [approval_id],
                    |r| r.get(0),
                )
                .optional()?;
            if used.is_some() {
                return Err(StoreError::ApprovalUsed {
                    id: approval_id.to_string(),
                });
            }
            tx.execute(
                "INSERT INTO executions (id, conversation_id, approval_id, code, language, started_at, log_path)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    id,
                    approval.conversation_id,
                    approval_id,
                    approval.code,
                    approval.language,
                    now,
                    log_path
                ],
            )?;
            get_execution(tx, id)
        })?;
        tracing::info!(execution_id = %id, approval_id = %approval_id, "execution started");
        Ok(execution)
    }

    /// Records how a run ended. A run can be finished once; recovery finishes runs that were
    /// cut off by a crash as `interrupted`, and a late report for those is refused.
    pub fn finish_execution(
        &self,
        id: ExecutionId,
        outcome: &ExecutionOutcome,
    ) -> Result<Execution> {
        let now = Timestamp::now();
        let execution = self.write(|tx| {
            let changed = tx.execute(
                "UPDATE executions SET ended_at = ?2, exit_code = ?3, duration_ms = ?4,
                     peak_memory_bytes = ?5, timed_out = ?6, cancelled = ?7, oom_killed = ?8,
                     stdout_head = ?9, stdout_tail = ?10, stderr_head = ?11, stderr_tail = ?12,
                     log_path = coalesce(?13, log_path)
                 WHERE id = ?1 AND ended_at IS NULL",
                params![
                    id,
                    now,
                    outcome.exit_code,
                    signed(outcome.duration_ms),
                    outcome.peak_memory_bytes.map(signed),
                    outcome.timed_out,
                    outcome.cancelled,
                    outcome.oom_killed,
                    outcome.stdout.head,
                    outcome.stdout.tail,
                    outcome.stderr.head,
                    outcome.stderr.tail,
                    outcome.log_path
                ],
            )?;
            let execution = get_execution(tx, id)?;
            if changed == 0 {
                return Err(StoreError::ExecutionFinished { id: id.to_string() });
            }
            Ok(execution)
        })?;
        tracing::info!(
            execution_id = %id,
            exit_code = ?execution.exit_code,
            timed_out = execution.timed_out,
            oom_killed = execution.oom_killed,
            "execution finished"
        );
        Ok(execution)
    }

    /// One run.
    pub fn get_execution(&self, id: ExecutionId) -> Result<Execution> {
        self.read(|tx| get_execution(tx, id))
    }

    /// Records files a run wrote that the chat shows with it (paths relative to the
    /// workspace). Recording a path twice keeps one.
    pub fn record_execution_files(&self, id: ExecutionId, paths: &[String]) -> Result<()> {
        self.write(|tx| {
            get_execution(tx, id)?;
            let mut insert = tx.prepare(
                "INSERT OR IGNORE INTO execution_files (execution_id, path) VALUES (?1, ?2)",
            )?;
            for path in paths {
                insert.execute(params![id, path])?;
            }
            Ok(())
        })
    }

    /// The recorded files of every run in a conversation, by run, each run's in path order.
    pub fn execution_files(
        &self,
        conversation: ConversationId,
    ) -> Result<HashMap<ExecutionId, Vec<String>>> {
        self.read(|tx| {
            let mut query = tx.prepare(
                "SELECT f.execution_id, f.path FROM execution_files f
                 JOIN executions x ON x.id = f.execution_id
                 WHERE x.conversation_id = ?1 ORDER BY f.execution_id, f.path",
            )?;
            let rows = query.query_map([conversation], |r| {
                Ok((r.get::<_, ExecutionId>(0)?, r.get::<_, String>(1)?))
            })?;
            let mut files: HashMap<ExecutionId, Vec<String>> = HashMap::new();
            for row in rows {
                let (id, path) = row?;
                files.entry(id).or_default().push(path);
            }
            Ok(files)
        })
    }
}

fn get_execution(tx: &Transaction<'_>, id: ExecutionId) -> Result<Execution> {
    rows::one(
        tx,
        "execution",
        &format!("SELECT {EXECUTION_COLUMNS} FROM executions WHERE id = ?1"),
        &id,
        rows::execution,
    )
}
