//! Requests into a session. A session is a queue of [`Op`]s and a stream of
//! [`crate::AgentEvent`]s; every front end (the CLI, the desktop app, the tests) drives and
//! renders a session through exactly these two types, so they all share one code path.

use serde::{Deserialize, Serialize};

use crate::{ApprovalId, ApprovalPolicy, CodeHash, DecidedBy, Decision, ExecutionId, HostDecision};

/// A picture as the person gave it: any size, any of the formats the session decodes (PNG,
/// JPEG, GIF, WebP).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ImageInput {
    /// The file's name (`photo.jpg`), or what the front end calls a pasted one.
    pub name: String,
    /// The file's bytes, base64 (standard alphabet).
    pub data: String,
}

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
        /// Pictures for the model with the text: checked, downscaled and stored by the
        /// session; a model that reads no images gets a note instead.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageInput>,
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
    /// earlier runs left in it (see [`crate::ApprovalRequest::altered_session`]). Sent before the
    /// decision; it changes nothing once the approval is decided.
    FreshInterpreter {
        approval_id: ApprovalId,
    },
    /// Stops the running turn wherever it is: generation, an approval wait or an execution.
    Cancel,
    /// The model the conversation's next turns use (a running turn keeps its own). `provider`
    /// names one of the front end's configured providers (`openai`, `anthropic`, `ollama`, or a
    /// name from `provider.yaml`'s `more_models`). Answered by
    /// [`crate::AgentEvent::ModelChanged`], or an `error` event saying why not.
    UseModel {
        provider: String,
        model: String,
    },
    SetPolicy {
        policy: ApprovalPolicy,
    },
    RevokeRule {
        code_hash: CodeHash,
    },
    /// Takes back what a run changed in the workspace (never interpreter state). When later runs
    /// changed the same files nothing changes ([`crate::AgentEvent::UndoBlocked`]) unless
    /// `force`, which takes those back first.
    UndoRun {
        execution_id: ExecutionId,
        #[serde(default)]
        force: bool,
    },
    /// Puts back what an undone run had changed.
    RedoRun {
        execution_id: ExecutionId,
    },
    /// Puts the workspace's files back as they were right after this run: every later run is
    /// undone, newest first (each answered by [`crate::AgentEvent::RunUndone`], and each can be
    /// redone). Never interpreter state.
    RewindTo {
        execution_id: ExecutionId,
    },
    /// The answer to an [`crate::AgentEvent::NetworkBlocked`]: only a host that was refused in this
    /// conversation and not answered yet can be decided.
    #[serde(rename_all = "camelCase")]
    DecideHost {
        /// `host:port` exactly as the event named it.
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
    use crate::AgentEvent;

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
        let hash = CodeHash::of(
            crate::ConversationId::new(),
            crate::Language::Python,
            "print(1)",
        );
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
            serde_json::from_value(json!({"type": "setPolicy", "policy": "ask_unless_safe"}))
                .unwrap();
        assert_eq!(
            policy,
            Op::SetPolicy {
                policy: ApprovalPolicy::AskUnlessSafe
            }
        );
    }
}
