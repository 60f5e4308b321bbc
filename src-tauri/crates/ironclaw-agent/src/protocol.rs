//! A session is a queue of requests ([`Op`]) and a stream of events ([`AgentEvent`]). Every
//! front end — the CLI now, the desktop app next, the tests — drives and renders a session
//! through exactly these two types, so they all share one code path.

use ironclaw_store::{
    ApprovalId, ConversationId, DecidedBy, ExecutionId, MessageId, RiskLevel, TurnId,
};
use serde::{Deserialize, Serialize};

use crate::approval::{ApprovalPolicy, CodeHash, Decision};

/// Requests into a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Op {
    /// Queued: turns run one at a time, in order.
    UserMessage {
        text: String,
    },
    /// A decision about one pending approval. It must carry that approval's id *and* code
    /// hash; `confirmed` is the second, deliberate confirmation destructive code needs.
    Decide {
        approval_id: ApprovalId,
        code_hash: CodeHash,
        decision: Decision,
        decided_by: DecidedBy,
        #[serde(default)]
        confirmed: bool,
    },
    /// The run a still-pending approval allows starts in a fresh interpreter, dropping what
    /// earlier runs left in it (see [`ApprovalRequest::altered_session`]). Sent before the
    /// decision; it changes nothing once the approval is decided.
    FreshInterpreter {
        approval_id: ApprovalId,
    },
    /// Stops the running turn wherever it is: generation, an approval wait or an execution.
    Cancel,
    SetPolicy {
        policy: ApprovalPolicy,
    },
    RevokeRule {
        code_hash: CodeHash,
    },
    /// The answer to an [`AgentEvent::NetworkBlocked`]: only a host that was refused in this
    /// conversation and not answered yet can be decided.
    #[serde(rename_all = "camelCase")]
    DecideHost {
        /// `host:port` exactly as the event named it.
        target: String,
        decision: HostDecision,
        decided_by: DecidedBy,
    },
}

/// What a person can answer when the network policy refused a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum HostDecision {
    /// The conversation's next execution may reach it.
    AllowOnce,
    /// Every execution of this conversation, while IronClaw runs.
    AllowForSession,
    /// Every session, from now on (kept in `network.yaml`).
    AllowAlways,
    /// Stays refused; later refusals of it are not asked about again.
    Deny,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RiskReason {
    pub level: RiskLevel,
    pub message: String,
    pub snippet: String,
    pub line: usize,
}

/// What the person is asked to decide. `code` is exactly what will run if approved.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    pub approval_id: ApprovalId,
    pub code_hash: CodeHash,
    pub language: String,
    pub code: String,
    pub risk: RiskLevel,
    pub reasons: Vec<RiskReason>,
    /// Approving needs a second explicit confirmation.
    pub destructive: bool,
    /// What earlier runs left in the interpreter this code will run in (a live thread, a
    /// shadowing function, a changed PATH...): it can change what the code does. Each entry
    /// names the run that left it ("run #3 left: …"). Empty when nothing was found. Answer
    /// with [`Op::FreshInterpreter`] to start a clean one first.
    #[serde(default)]
    pub altered_session: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum OutputStream {
    Stdout,
    Stderr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum TurnStatus {
    Done,
    Cancelled,
    Failed,
}

/// Events out of a session. On the wire: `{"type": "executionOutput", "executionId": …}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum AgentEvent {
    TurnStarted {
        conversation_id: ConversationId,
        turn_id: TurnId,
    },
    TextDelta {
        message_id: MessageId,
        text: String,
    },
    /// The complete assistant message (after its last delta).
    AssistantMessage {
        message_id: MessageId,
        text: String,
    },
    ApprovalRequested(ApprovalRequest),
    /// A pending approval was decided (by a person or, with `auto`, by policy or rule).
    ApprovalResolved {
        approval_id: ApprovalId,
        approved: bool,
        decided_by: DecidedBy,
        user_edited: bool,
        auto: bool,
        reason: Option<String>,
    },
    /// A decision was refused (wrong hash, unknown or stale id, missing confirmation): nothing
    /// ran, and the approval — if still pending — is still pending.
    DecisionRejected {
        approval_id: ApprovalId,
        message: String,
        still_pending: bool,
    },
    ExecutionStarted {
        execution_id: ExecutionId,
        /// The run's place in the conversation, from 1: "run #3" in warnings refers to it.
        number: u32,
        approval_id: ApprovalId,
        language: String,
        code: String,
    },
    ExecutionOutput {
        execution_id: ExecutionId,
        stream: OutputStream,
        text: String,
    },
    ExecutionResources {
        execution_id: ExecutionId,
        cpu_percent: f64,
        memory_bytes: u64,
        pids: u64,
    },
    ExecutionEnded {
        execution_id: ExecutionId,
        exit_code: i32,
        duration_ms: f64,
        timed_out: bool,
        cancelled: bool,
        oom_killed: bool,
        peak_memory_bytes: u64,
        truncated: bool,
        log_file: Option<String>,
        /// Why the run was stopped by (or ended over) its workspace quota, for people to read;
        /// `None` when the quota was not passed.
        quota_exceeded: Option<String>,
    },
    TurnEnded {
        turn_id: TurnId,
        status: TurnStatus,
        error: Option<String>,
    },
    PolicyChanged {
        policy: ApprovalPolicy,
        flagged: bool,
    },
    /// Something went wrong outside a turn, or a turn could not start.
    Error {
        message: String,
    },
    /// The person's message could not be saved (the disk holding the history is full, say), so
    /// no turn started for it and none will: nothing waits for a `TurnEnded`. `text` is the
    /// message, to offer it again once the cause is fixed.
    MessageNotSaved {
        text: String,
        message: String,
    },
    /// Code in the sandbox tried to reach a host the network policy does not admit; it got
    /// "blocked by IronClaw network policy". Unless `alreadyDenied`, answer with
    /// [`Op::DecideHost`].
    #[serde(rename_all = "camelCase")]
    NetworkBlocked {
        execution_id: ExecutionId,
        /// `host:port`.
        target: String,
        reason: String,
        /// The person already said no to this host in this conversation.
        already_denied: bool,
    },
    /// The hosts one execution reached and was refused (allowlist mode only), shown with it.
    #[serde(rename_all = "camelCase")]
    ExecutionNetwork {
        execution_id: ExecutionId,
        allowed: Vec<String>,
        denied: Vec<String>,
    },
    /// A [`Op::DecideHost`] was applied.
    #[serde(rename_all = "camelCase")]
    NetworkDecided {
        target: String,
        decision: HostDecision,
        decided_by: DecidedBy,
    },
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn events_carry_camel_case_fields_for_the_web_ui() {
        let id = ApprovalId::new();
        let value = serde_json::to_value(AgentEvent::DecisionRejected {
            approval_id: id,
            message: "m".into(),
            still_pending: true,
        })
        .unwrap();
        assert_eq!(
            value,
            json!({"type": "decisionRejected", "approvalId": id.to_string(), "message": "m", "stillPending": true})
        );
    }

    #[test]
    fn decisions_are_read_from_camel_case_json() {
        let id = ApprovalId::new();
        let hash = CodeHash::of("s", "python", "print(1)");
        let op: Op = serde_json::from_value(json!({
            "type": "decide", "approvalId": id.to_string(), "codeHash": hash.to_hex(),
            "decision": {"type": "editAndApprove", "code": "print(2)"},
            "decidedBy": "notification", "confirmed": true,
        }))
        .unwrap();
        assert_eq!(
            op,
            Op::Decide {
                approval_id: id,
                code_hash: hash,
                decision: Decision::EditAndApprove {
                    code: "print(2)".into()
                },
                decided_by: DecidedBy::Notification,
                confirmed: true,
            }
        );
        let policy: Op =
            serde_json::from_value(json!({"type": "setPolicy", "policy": "askUnlessSafe"}))
                .unwrap();
        assert_eq!(
            policy,
            Op::SetPolicy {
                policy: ApprovalPolicy::AskUnlessSafe
            }
        );
    }
}
