//! Reading a whole conversation as one nested, ordered value (for the UI and exports).

use std::collections::HashMap;

use rusqlite::Transaction;

use super::approvals::list_rules;
use super::conversations;
use super::rows::{
    self, APPROVAL_COLUMNS, EXECUTION_COLUMNS, MESSAGE_COLUMNS, TOOL_CALL_COLUMNS, TURN_COLUMNS,
};
use super::History;
use crate::error::Result;
use crate::model::{
    ApprovalEntry, Execution, FullConversation, MessageEntry, ToolCall, ToolCallEntry,
};
use ironclaw_protocol::{ApprovalId, ConversationId, MessageId, ToolCallId};

impl History {
    /// Everything in a conversation: turns, and messages (in order) with their tool calls,
    /// each tool call's approvals (oldest first) and each approval's run. Read as one snapshot.
    pub fn get_full_conversation(&self, id: ConversationId) -> Result<FullConversation> {
        self.read(|tx| load(tx, id))
    }
}

fn load(tx: &Transaction<'_>, id: ConversationId) -> Result<FullConversation> {
    let conversation = conversations::get(tx, id)?;
    let turns = all(
        tx,
        &format!(
            "SELECT {TURN_COLUMNS} FROM turns WHERE conversation_id = ?1 ORDER BY started_at, id"
        ),
        id,
        rows::turn,
    )?;
    let messages = all(
        tx,
        &format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ?1 ORDER BY seq"),
        id,
        rows::message,
    )?;
    let qualified_tool_call_columns = TOOL_CALL_COLUMNS
        .split(", ")
        .map(|c| format!("t.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let tool_calls = all(
        tx,
        &format!(
            "SELECT {qualified_tool_call_columns} FROM tool_calls t
             JOIN messages m ON m.id = t.message_id
             WHERE m.conversation_id = ?1 ORDER BY t.rowid"
        ),
        id,
        rows::tool_call,
    )?;
    let approvals = all(
        tx,
        &format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE conversation_id = ?1
             ORDER BY requested_at, id"
        ),
        id,
        rows::approval,
    )?;
    let executions = all(
        tx,
        &format!(
            "SELECT {EXECUTION_COLUMNS} FROM executions WHERE conversation_id = ?1 ORDER BY seq"
        ),
        id,
        rows::execution,
    )?;
    let session_rules = list_rules(tx, id, true)?;

    let mut execution_by_approval: HashMap<ApprovalId, Execution> =
        executions.into_iter().map(|e| (e.approval_id, e)).collect();
    let mut approvals_by_call: HashMap<ToolCallId, Vec<ApprovalEntry>> = HashMap::new();
    let mut standalone_approvals = Vec::new();
    for approval in approvals {
        let entry = ApprovalEntry {
            execution: execution_by_approval.remove(&approval.id),
            approval,
        };
        match entry.approval.tool_call_id {
            Some(call) => approvals_by_call.entry(call).or_default().push(entry),
            None => standalone_approvals.push(entry),
        }
    }
    let mut calls_by_message: HashMap<MessageId, Vec<ToolCallEntry>> = HashMap::new();
    for tool_call in tool_calls {
        let entry = call_entry(tool_call, &mut approvals_by_call);
        calls_by_message
            .entry(entry.tool_call.message_id)
            .or_default()
            .push(entry);
    }
    // A tool call id from another conversation would be a caller bug; keep such approvals
    // visible rather than dropping them from the view.
    let mut orphans: Vec<ApprovalEntry> = approvals_by_call.into_values().flatten().collect();
    if !orphans.is_empty() {
        standalone_approvals.append(&mut orphans);
        standalone_approvals.sort_by_key(|e| (e.approval.requested_at, e.approval.id));
    }
    let messages = messages
        .into_iter()
        .map(|message| MessageEntry {
            tool_calls: calls_by_message.remove(&message.id).unwrap_or_default(),
            message,
        })
        .collect();
    Ok(FullConversation {
        conversation,
        turns,
        messages,
        standalone_approvals,
        session_rules,
    })
}

fn call_entry(
    tool_call: ToolCall,
    approvals_by_call: &mut HashMap<ToolCallId, Vec<ApprovalEntry>>,
) -> ToolCallEntry {
    ToolCallEntry {
        approvals: approvals_by_call.remove(&tool_call.id).unwrap_or_default(),
        tool_call,
    }
}

fn all<T>(
    tx: &Transaction<'_>,
    sql: &str,
    id: ConversationId,
    map: fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>> {
    let mut stmt = tx.prepare(sql)?;
    let rows = stmt.query_map([id], map)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
