//! Behaviour tests for the history, against real database files in temporary folders.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approvals;
mod checkpoints;
mod corrupt;
mod export;
mod kill;
mod lifecycle;
mod read_only;
mod rebuild;
mod reconcile;
mod recovery;
mod search;

use std::path::PathBuf;

use tempfile::TempDir;

use super::History;
use crate::model::{
    ApprovalDecision, Execution, ExecutionOutcome, MessageRole, MessageStatus, NewApproval,
    NewMessage, NewToolCall, OutputExcerpt, Verdict,
};
use ironclaw_protocol::{
    ApprovalPolicy, ConversationId, DecidedBy, DecisionScope, Language, RiskLevel, TurnId,
};

/// A fresh history in its own folder (kept alive by the returned `TempDir`).
fn temp_history() -> (TempDir, PathBuf, History) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    let (history, report) = History::open(&path).unwrap();
    assert!(report.is_empty());
    (dir, path, history)
}

fn message(
    conversation_id: ConversationId,
    turn_id: Option<TurnId>,
    role: MessageRole,
    content: &str,
) -> NewMessage {
    NewMessage {
        conversation_id,
        turn_id,
        role,
        content: content.to_owned(),
        status: MessageStatus::Complete,
        model: None,
    }
}

fn approve_once() -> ApprovalDecision {
    ApprovalDecision {
        verdict: Verdict::Approve,
        scope: DecisionScope::Once,
        decided_by: DecidedBy::UserDialog,
        reason: Some("looks fine".to_owned()),
        edited_code: None,
    }
}

/// One complete exchange: the person asks, the assistant calls a tool with `code`, the person
/// approves, and the run prints `stdout`.
fn run_code_exchange(
    history: &History,
    conversation_id: ConversationId,
    code: &str,
    stdout: &str,
) -> Execution {
    let turn = history.begin_turn(conversation_id).unwrap();
    history
        .add_message(&message(
            conversation_id,
            Some(turn.id),
            MessageRole::User,
            "please run it",
        ))
        .unwrap();
    let reply = history
        .add_message(&message(
            conversation_id,
            Some(turn.id),
            MessageRole::Assistant,
            "Running the code now.",
        ))
        .unwrap();
    let call = history
        .record_tool_call(&NewToolCall {
            message_id: reply.id,
            model_call_id: "call_1".to_owned(),
            name: "run_code".to_owned(),
            arguments: serde_json::json!({ "language": "python", "code": code }).to_string(),
            arguments_parsed: true,
            echo: None,
        })
        .unwrap();
    let approval = history
        .request_approval(&NewApproval {
            conversation_id,
            tool_call_id: Some(call.id),
            language: Language::Python,
            code: code.to_owned(),
            risk: RiskLevel::ReadOnly,
            reasons: vec!["prints only".to_owned()],
        })
        .unwrap();
    history
        .decide_approval(approval.id, &approve_once())
        .unwrap();
    let execution = history.start_execution(approval.id, None).unwrap();
    let finished = history
        .finish_execution(
            execution.id,
            &ExecutionOutcome {
                exit_code: Some(0),
                duration_ms: 42,
                peak_memory_bytes: Some(1 << 20),
                stdout: OutputExcerpt {
                    head: stdout.to_owned(),
                    tail: String::new(),
                },
                ..ExecutionOutcome::default()
            },
        )
        .unwrap();
    history
        .add_message(&message(
            conversation_id,
            Some(turn.id),
            MessageRole::Tool,
            stdout,
        ))
        .unwrap();
    history
        .end_turn(turn.id, ironclaw_protocol::TurnOutcome::Done)
        .unwrap();
    finished
}

fn new_conversation(history: &History, title: &str) -> ConversationId {
    history
        .create_conversation(title, ApprovalPolicy::default())
        .unwrap()
        .id
}
