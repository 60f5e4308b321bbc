//! What the history stores, as read back, and the inputs that create it.

use serde::{Deserialize, Serialize};

use super::enums::{ApprovalStatus, MessageRole, MessageStatus, RuleKind, TurnStatus, Verdict};
use crate::time::Timestamp;
use ironclaw_protocol::{
    ApprovalId, ApprovalPolicy, CodeHash, ConversationId, DecidedBy, DecisionScope, ExecutionId,
    Language, MessageId, RiskLevel, SessionRuleId, ToolCallId, TurnId,
};

/// A chat thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Conversation {
    pub id: ConversationId,
    pub title: String,
    /// The sandbox session (container) this conversation runs its code in, once it has one.
    pub session_name: Option<String>,
    pub approval_policy: ApprovalPolicy,
    pub created_at: Timestamp,
    /// Bumped by every message, so lists can show the most recently active first.
    pub updated_at: Timestamp,
}

/// A row in the conversation list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationSummary {
    #[serde(flatten)]
    pub conversation: Conversation,
    /// The start of the newest message's text, if there is one.
    pub last_message_preview: Option<String>,
    pub message_count: u64,
}

/// One agent turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    pub id: TurnId,
    pub conversation_id: ConversationId,
    pub status: TurnStatus,
    pub started_at: Timestamp,
    pub ended_at: Option<Timestamp>,
}

/// A message as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub id: MessageId,
    pub conversation_id: ConversationId,
    pub turn_id: Option<TurnId>,
    /// Position in the whole history; strictly increasing in insertion order.
    pub seq: i64,
    pub role: MessageRole,
    pub content: String,
    pub status: MessageStatus,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// The model that wrote an assistant message, as `provider:model` (`None` for the person's
    /// messages and for history from before this was kept).
    pub model: Option<String>,
}

/// What to store for a new message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMessage {
    pub conversation_id: ConversationId,
    pub turn_id: Option<TurnId>,
    pub role: MessageRole,
    pub content: String,
    /// `Streaming` for an assistant reply that is still arriving, otherwise `Complete`.
    pub status: MessageStatus,
    /// For an assistant message: the model writing it (`provider:model`).
    pub model: Option<String>,
}

/// A tool call the model made in an assistant message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub id: ToolCallId,
    pub message_id: MessageId,
    /// The provider's id for the call, echoed back with the result; format is the provider's.
    pub model_call_id: String,
    pub name: String,
    /// The arguments exactly as the model sent them, even when they are not valid JSON, so a
    /// malformed call can be shown and debugged.
    pub arguments: String,
    pub arguments_parsed: bool,
    pub created_at: Timestamp,
    /// Provider data owed back with the call (JSON text), see `ironclaw_llm::ToolCall::echo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub echo: Option<String>,
    /// What the call brought back when it is not a run (a fetch's report, JSON text), once
    /// it is over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
}

/// What to store for a new tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewToolCall {
    pub message_id: MessageId,
    pub model_call_id: String,
    pub name: String,
    pub arguments: String,
    pub arguments_parsed: bool,
    pub echo: Option<String>,
}

/// A request to run code, and the decision on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    pub id: ApprovalId,
    pub conversation_id: ConversationId,
    pub tool_call_id: Option<ToolCallId>,
    /// What was approved, exactly: the hash of `code`.
    pub code_hash: CodeHash,
    pub language: Language,
    /// The code that may run: the person's edited version if they edited it.
    pub code: String,
    pub risk: RiskLevel,
    pub reasons: Vec<String>,
    pub status: ApprovalStatus,
    pub scope: Option<DecisionScope>,
    pub decided_by: Option<DecidedBy>,
    /// Why, in the decider's words (the person's note, or the rule that matched).
    pub reason: Option<String>,
    pub user_edited: bool,
    /// The hash of the code as the model proposed it, when the person edited it.
    pub original_hash: Option<CodeHash>,
    pub requested_at: Timestamp,
    pub decided_at: Option<Timestamp>,
}

/// What to store when the agent asks to run code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewApproval {
    pub conversation_id: ConversationId,
    pub tool_call_id: Option<ToolCallId>,
    pub language: Language,
    pub code: String,
    pub risk: RiskLevel,
    pub reasons: Vec<String>,
}

/// A decision on a pending approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalDecision {
    pub verdict: Verdict,
    pub scope: DecisionScope,
    pub decided_by: DecidedBy,
    pub reason: Option<String>,
    /// The person's edited code, when they changed it before approving. It replaces the code
    /// (and hash) that may run; the model's version is remembered by hash.
    pub edited_code: Option<String>,
}

/// A standing "allow this again" rule in one conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRule {
    pub id: SessionRuleId,
    pub conversation_id: ConversationId,
    pub kind: RuleKind,
    /// A code hash or a command line, per `kind`.
    pub pattern: String,
    /// The approval whose decision created the rule, if one did.
    pub approval_id: Option<ApprovalId>,
    pub created_at: Timestamp,
    pub revoked_at: Option<Timestamp>,
}

/// The first and last part of a stream, as kept in the history (the full output is in the log
/// file).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputExcerpt {
    pub head: String,
    /// Empty when `head` already holds everything.
    pub tail: String,
}

/// One run of approved code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Execution {
    pub id: ExecutionId,
    pub conversation_id: ConversationId,
    pub approval_id: ApprovalId,
    pub code: String,
    pub language: Language,
    pub started_at: Timestamp,
    pub ended_at: Option<Timestamp>,
    pub exit_code: Option<i64>,
    pub duration_ms: Option<u64>,
    pub peak_memory_bytes: Option<u64>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub oom_killed: bool,
    /// The process stopped while this ran; the outcome is unknown.
    pub interrupted: bool,
    pub stdout: OutputExcerpt,
    pub stderr: OutputExcerpt,
    pub log_path: Option<String>,
    /// The run's place in its conversation, from 1: how a person refers to it ("run #3").
    /// Derived from the order runs were recorded in, so it never needs storing (and exports
    /// made before it existed still read).
    #[serde(default)]
    pub number: u32,
    /// The history could not record how this run ended (a full disk, say); its exit code and
    /// flags were taken from the audit log at a later start. Its output excerpts are unknown.
    #[serde(default)]
    pub reconciled_from_audit: bool,
}

/// How a run ended, as reported by the sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecutionOutcome {
    pub exit_code: Option<i64>,
    pub duration_ms: u64,
    pub peak_memory_bytes: Option<u64>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub oom_killed: bool,
    pub stdout: OutputExcerpt,
    pub stderr: OutputExcerpt,
    pub log_path: Option<String>,
}

/// An approval with the run it allowed, if the run started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalEntry {
    #[serde(flatten)]
    pub approval: Approval,
    pub execution: Option<Execution>,
}

/// A tool call with the approvals it led to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallEntry {
    #[serde(flatten)]
    pub tool_call: ToolCall,
    pub approvals: Vec<ApprovalEntry>,
}

/// A message with the tool calls it made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageEntry {
    #[serde(flatten)]
    pub message: Message,
    pub tool_calls: Vec<ToolCallEntry>,
}

/// Everything recorded in one conversation, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FullConversation {
    pub conversation: Conversation,
    pub turns: Vec<Turn>,
    pub messages: Vec<MessageEntry>,
    /// Approvals not tied to a tool call (e.g. code run from the CLI), oldest first.
    pub standalone_approvals: Vec<ApprovalEntry>,
    pub session_rules: Vec<SessionRule>,
}

impl FullConversation {
    /// Every approval, those of tool calls first (in message order), then the standalone ones.
    pub fn approvals(&self) -> impl Iterator<Item = &ApprovalEntry> {
        self.messages
            .iter()
            .flat_map(|m| &m.tool_calls)
            .flat_map(|t| &t.approvals)
            .chain(&self.standalone_approvals)
    }

    /// Every execution, in the order of [`Self::approvals`].
    pub fn executions(&self) -> impl Iterator<Item = &Execution> {
        self.approvals().filter_map(|a| a.execution.as_ref())
    }
}

/// One full-text search result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub conversation_id: ConversationId,
    /// Set when the match is in a message.
    pub message_id: Option<MessageId>,
    /// Set when the match is in executed code.
    pub execution_id: Option<ExecutionId>,
    /// Text around the match, matched terms wrapped in [`crate::HIGHLIGHT_START`] and
    /// [`crate::HIGHLIGHT_END`].
    pub snippet: String,
    /// FTS5 bm25 rank: lower is a better match.
    pub rank: f64,
}

/// What [`crate::History::open`] found unfinished from a previous run and marked, so the UI can
/// show it as interrupted instead of silently dropping it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecoveryReport {
    pub interrupted_turns: Vec<TurnId>,
    /// Streaming messages now marked interrupted; their text so far is kept.
    pub interrupted_messages: Vec<MessageId>,
    pub expired_approvals: Vec<ApprovalId>,
    pub interrupted_executions: Vec<ExecutionId>,
    /// Recovery was skipped because another process has the history open; its unfinished
    /// work is live, not interrupted.
    pub skipped_in_use: bool,
}

impl RecoveryReport {
    /// True when nothing needed fixing.
    pub fn is_empty(&self) -> bool {
        self.interrupted_turns.is_empty()
            && self.interrupted_messages.is_empty()
            && self.expired_approvals.is_empty()
            && self.interrupted_executions.is_empty()
    }
}
