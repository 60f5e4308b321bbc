//! The durable writes of one tool round trip, replayed on their own through the stores' public
//! APIs, so the agent benchmark can say how much of IronClaw's overhead is the disk.
//!
//! The sequence mirrors `ironclaw-agent`'s `session/turn.rs` and `session/run_code.rs` for a
//! `run_code` call approved by the `never-ask` policy: 8 history commits (each its own
//! transaction; WAL, synchronous=NORMAL by default) and 3 audit appends; with
//! `IRONCLAW_SYNC=full` each is also synced to disk. The turn's own writes (the person's message, opening and closing the turn, the first
//! answer) are not in it: a turn without a tool call makes them too.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ironclaw_protocol::{
    ApprovalPolicy, AuditRecord, ConversationId, DecidedBy, DecisionRecord, DecisionScope,
    ExecResultRecord, Language, MessageId, RiskLevel,
};
use ironclaw_store::{
    ApprovalDecision, AuditLog, ExecutionOutcome, History, MessageRole, MessageStatus, NewApproval,
    NewMessage, NewToolCall, OutputExcerpt, Verdict,
};

pub const HISTORY_COMMITS: usize = 8;
pub const AUDIT_APPENDS: usize = 3;

pub struct Replay {
    history: Arc<History>,
    audit: AuditLog,
    conversation: ConversationId,
    /// The answer the tool calls belong to (written once: it is the turn's, not the trip's).
    answer: MessageId,
}

impl Replay {
    /// In `history` (the agent's own database file), with an audit log of its own at
    /// `audit_path` (next to the agent's, on the same disk).
    pub fn new(history: Arc<History>, audit_path: &Path) -> anyhow::Result<Self> {
        let conversation = history
            .create_conversation("bench: replayed writes", ApprovalPolicy::NeverAsk)?
            .id;
        let answer = history
            .add_message(&NewMessage {
                conversation_id: conversation,
                turn_id: None,
                role: MessageRole::Assistant,
                content: String::new(),
                status: MessageStatus::Complete,
                model: None,
            })?
            .id;
        let (audit, _) = AuditLog::open(audit_path)?;
        Ok(Self {
            history,
            audit,
            conversation,
            answer,
        })
    }

    /// Writes what one tool round trip writes; returns how long it took.
    pub fn once(&self, n: usize) -> anyhow::Result<Duration> {
        let h = &self.history;
        let code = "print(1+1)";
        let t = Instant::now();
        let call = h.record_tool_call(&NewToolCall {
            message_id: self.answer,
            model_call_id: format!("replay_{n}"),
            name: "run_code".into(),
            arguments: r#"{"language": "python", "code": "print(1+1)"}"#.into(),
            arguments_parsed: true,
            echo: None,
        })?;
        let approval = h.request_approval(&NewApproval {
            conversation_id: self.conversation,
            tool_call_id: Some(call.id),
            language: Language::Python,
            code: code.into(),
            risk: RiskLevel::ReadOnly,
            reasons: Vec::new(),
        })?;
        self.audit.record(&AuditRecord::ExecRequested {
            approval_id: approval.id,
            conversation_id: self.conversation,
            language: Language::Python,
            code_hash: approval.code_hash,
            risk: RiskLevel::ReadOnly,
        })?;
        h.decide_approval(
            approval.id,
            &ApprovalDecision {
                verdict: Verdict::Approve,
                scope: DecisionScope::PolicyAuto,
                decided_by: DecidedBy::Policy,
                reason: Some("the conversation's never_ask policy".into()),
                edited_code: None,
            },
        )?;
        self.audit
            .record(&AuditRecord::Decision(DecisionRecord::automatic(
                approval.id,
                DecisionScope::PolicyAuto,
                approval.code_hash,
                "the conversation's never_ask policy",
            )))?;
        let execution = h.start_execution(approval.id, None)?;
        h.finish_execution(
            execution.id,
            &ExecutionOutcome {
                exit_code: Some(0),
                duration_ms: 1,
                peak_memory_bytes: Some(8 << 20),
                timed_out: false,
                cancelled: false,
                oom_killed: false,
                stdout: OutputExcerpt {
                    head: "2\n".into(),
                    tail: String::new(),
                },
                stderr: OutputExcerpt::default(),
                log_path: None,
            },
        )?;
        self.audit
            .record(&AuditRecord::ExecResult(ExecResultRecord {
                approval_id: approval.id,
                execution_id: execution.id,
                exit_code: Some(0),
                duration_ms: Some(1),
                peak_memory_bytes: Some(8 << 20),
                timed_out: false,
                cancelled: false,
                oom_killed: false,
                integrity: None,
                reconciled_from: None,
                ended_at: None,
            }))?;
        let message = |role, content: &str, status| NewMessage {
            conversation_id: self.conversation,
            turn_id: None,
            role,
            content: content.into(),
            status,
            model: None,
        };
        h.add_message(&message(
            MessageRole::Tool,
            super::agent::RESULT_NOTE,
            MessageStatus::Complete,
        ))?;
        let next = h.add_message(&message(
            MessageRole::Assistant,
            "",
            MessageStatus::Streaming,
        ))?;
        h.complete_message(next.id, "1+1 is 2.")?;
        Ok(t.elapsed())
    }
}

/// The disk's own price for one durable write, with no IronClaw code in the way: a small append
/// then `fdatasync`, as the audit log does.
pub struct RawSync(File);

impl RawSync {
    pub fn new(path: &Path) -> anyhow::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Self(file))
    }

    pub fn once(&mut self) -> anyhow::Result<Duration> {
        let line = [b'x'; 128];
        let t = Instant::now();
        self.0.write_all(&line)?;
        self.0.sync_data()?;
        Ok(t.elapsed())
    }
}
