//! Column lists and row mappers, kept together so a SELECT and its mapper cannot drift apart.

use rusqlite::types::FromSqlError;
use rusqlite::{OptionalExtension, Row, Transaction};

use crate::error::{Result, StoreError};
use crate::model::{
    Approval, Conversation, Execution, Message, OutputExcerpt, SessionRule, ToolCall, Turn,
};

pub(super) const CONVERSATION_COLUMNS: &str =
    "id, title, session_name, approval_policy, created_at, updated_at";

pub(super) fn conversation(row: &Row<'_>) -> rusqlite::Result<Conversation> {
    Ok(Conversation {
        id: row.get(0)?,
        title: row.get(1)?,
        session_name: row.get(2)?,
        approval_policy: row.get(3)?,
        created_at: row.get(4)?,
        updated_at: row.get(5)?,
    })
}

pub(super) const TURN_COLUMNS: &str = "id, conversation_id, status, started_at, ended_at";

pub(super) fn turn(row: &Row<'_>) -> rusqlite::Result<Turn> {
    Ok(Turn {
        id: row.get(0)?,
        conversation_id: row.get(1)?,
        status: row.get(2)?,
        started_at: row.get(3)?,
        ended_at: row.get(4)?,
    })
}

pub(super) const MESSAGE_COLUMNS: &str =
    "id, conversation_id, turn_id, seq, role, content, status, created_at, updated_at, model";

pub(super) fn message(row: &Row<'_>) -> rusqlite::Result<Message> {
    Ok(Message {
        id: row.get(0)?,
        conversation_id: row.get(1)?,
        turn_id: row.get(2)?,
        seq: row.get(3)?,
        role: row.get(4)?,
        content: row.get(5)?,
        status: row.get(6)?,
        created_at: row.get(7)?,
        updated_at: row.get(8)?,
        model: row.get(9)?,
    })
}

pub(super) const TOOL_CALL_COLUMNS: &str =
    "id, message_id, model_call_id, name, arguments, arguments_parsed, created_at, echo, outcome";

pub(super) fn tool_call(row: &Row<'_>) -> rusqlite::Result<ToolCall> {
    Ok(ToolCall {
        id: row.get(0)?,
        message_id: row.get(1)?,
        model_call_id: row.get(2)?,
        name: row.get(3)?,
        arguments: row.get(4)?,
        arguments_parsed: row.get(5)?,
        created_at: row.get(6)?,
        echo: row.get(7)?,
        outcome: row.get(8)?,
    })
}

pub(super) const APPROVAL_COLUMNS: &str =
    "id, conversation_id, tool_call_id, code_hash, language, \
     code, risk, reasons, status, scope, decided_by, reason, user_edited, original_hash, \
     requested_at, decided_at";

pub(super) fn approval(row: &Row<'_>) -> rusqlite::Result<Approval> {
    let reasons: String = row.get(7)?;
    let reasons = serde_json::from_str(&reasons).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(7, rusqlite::types::Type::Text, Box::new(e))
    })?;
    Ok(Approval {
        id: row.get(0)?,
        conversation_id: row.get(1)?,
        tool_call_id: row.get(2)?,
        code_hash: row.get(3)?,
        language: row.get(4)?,
        code: row.get(5)?,
        risk: row.get(6)?,
        reasons,
        status: row.get(8)?,
        scope: row.get(9)?,
        decided_by: row.get(10)?,
        reason: row.get(11)?,
        user_edited: row.get(12)?,
        original_hash: row.get(13)?,
        requested_at: row.get(14)?,
        decided_at: row.get(15)?,
    })
}

pub(super) const SESSION_RULE_COLUMNS: &str =
    "id, conversation_id, kind, pattern, approval_id, created_at, revoked_at";

pub(super) fn session_rule(row: &Row<'_>) -> rusqlite::Result<SessionRule> {
    Ok(SessionRule {
        id: row.get(0)?,
        conversation_id: row.get(1)?,
        kind: row.get(2)?,
        pattern: row.get(3)?,
        approval_id: row.get(4)?,
        created_at: row.get(5)?,
        revoked_at: row.get(6)?,
    })
}

pub(super) const EXECUTION_COLUMNS: &str = "id, conversation_id, approval_id, code, language, \
     started_at, ended_at, exit_code, duration_ms, peak_memory_bytes, timed_out, cancelled, \
     oom_killed, interrupted, stdout_head, stdout_tail, stderr_head, stderr_tail, log_path, \
     reconciled, \
     (SELECT count(*) FROM executions AS earlier \
       WHERE earlier.conversation_id = executions.conversation_id AND earlier.seq <= executions.seq)";

pub(super) fn execution(row: &Row<'_>) -> rusqlite::Result<Execution> {
    Ok(Execution {
        id: row.get(0)?,
        conversation_id: row.get(1)?,
        approval_id: row.get(2)?,
        code: row.get(3)?,
        language: row.get(4)?,
        started_at: row.get(5)?,
        ended_at: row.get(6)?,
        exit_code: row.get(7)?,
        duration_ms: unsigned(row, 8)?,
        peak_memory_bytes: unsigned(row, 9)?,
        timed_out: row.get(10)?,
        cancelled: row.get(11)?,
        oom_killed: row.get(12)?,
        interrupted: row.get(13)?,
        stdout: OutputExcerpt {
            head: row.get(14)?,
            tail: row.get(15)?,
        },
        stderr: OutputExcerpt {
            head: row.get(16)?,
            tail: row.get(17)?,
        },
        log_path: row.get(18)?,
        reconciled_from_audit: row.get::<_, Option<String>>(19)?.as_deref() == Some("from_audit"),
        number: row.get(20)?,
    })
}

/// SQLite integers are signed; sizes and durations are stored as non-negative i64.
fn unsigned(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<u64>> {
    let value: Option<i64> = row.get(index)?;
    value
        .map(|v| {
            u64::try_from(v).map_err(|_| {
                rusqlite::Error::FromSqlConversionFailure(
                    index,
                    rusqlite::types::Type::Integer,
                    Box::new(FromSqlError::OutOfRange(v)),
                )
            })
        })
        .transpose()
}

/// Converts a size or duration for storage, saturating (no real value reaches 2^63).
pub(super) fn signed(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Reads one row by id, or `NotFound` naming what was looked for.
pub(super) fn one<T>(
    tx: &Transaction<'_>,
    what: &'static str,
    sql: &str,
    id: &(impl rusqlite::ToSql + std::fmt::Display),
    map: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<T> {
    tx.query_row(sql, [id], map)
        .optional()?
        .ok_or_else(|| StoreError::NotFound {
            what,
            id: id.to_string(),
        })
}
