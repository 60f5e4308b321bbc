//! Startup recovery: whatever a killed process left in flight is marked as interrupted (never
//! deleted), so the person sees exactly where things stopped.

use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::error::Result;
use crate::model::RecoveryReport;
use crate::time::Timestamp;

/// Shown as the reason on approvals that expired because nobody could answer them any more.
pub(crate) const EXPIRED_REASON: &str = "IronClaw stopped before a decision was made";

/// Marks running turns and runs as interrupted, streaming messages as interrupted (keeping
/// their text), and pending approvals as expired — in one transaction, so a kill during
/// recovery just means recovering again next time. Must only run when no other process has
/// the database open (see `ProcessLock`).
pub(super) fn recover(conn: &mut Connection) -> Result<RecoveryReport> {
    let now = Timestamp::now();
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let report = RecoveryReport {
        interrupted_turns: returning_ids(
            &tx,
            "UPDATE turns SET status = 'interrupted', ended_at = ?1
             WHERE status = 'running' RETURNING id",
            &[&now],
        )?,
        interrupted_messages: returning_ids(
            &tx,
            "UPDATE messages SET status = 'interrupted', updated_at = ?1
             WHERE status = 'streaming' RETURNING id",
            &[&now],
        )?,
        // An expired approval can never be approved later: a dialog answered after the restart
        // must not run code the agent is no longer waiting for.
        expired_approvals: returning_ids(
            &tx,
            "UPDATE approvals SET status = 'expired', decided_at = ?1, reason = ?2
             WHERE status = 'pending' RETURNING id",
            &[&now, &EXPIRED_REASON],
        )?,
        // The sandbox may or may not have finished these; the outcome was never recorded.
        interrupted_executions: returning_ids(
            &tx,
            "UPDATE executions SET ended_at = ?1, interrupted = 1
             WHERE ended_at IS NULL RETURNING id",
            &[&now],
        )?,
        skipped_in_use: false,
    };
    tx.commit()?;
    Ok(report)
}

/// Runs an `UPDATE ... RETURNING id` and returns the ids in creation order (UUID v7 sorts by
/// time; RETURNING's own order is unspecified).
fn returning_ids<T>(
    tx: &Transaction<'_>,
    sql: &str,
    params: &[&dyn rusqlite::ToSql],
) -> Result<Vec<T>>
where
    T: rusqlite::types::FromSql + Ord,
{
    let mut stmt = tx.prepare(sql)?;
    let mut ids = stmt
        .query_map(params, |row| row.get(0))?
        .collect::<rusqlite::Result<Vec<T>>>()?;
    ids.sort();
    Ok(ids)
}
