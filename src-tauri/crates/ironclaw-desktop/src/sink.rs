//! Where the core's output goes. The Tauri layer implements [`EventSink`] with `app.emit`;
//! tests implement it with a channel. Live [`AgentEvent`]s of an opened conversation go to the
//! [`Subscriber`] given to `open_conversation` (a `tauri::ipc::Channel` in the app).

use std::sync::Arc;

use ironclaw_protocol::{AgentEvent, ApprovalId, ConversationId, ExecutionId};
use serde::Serialize;

use crate::types::{ConversationSummary, WorkspaceEntry};

/// Receives one conversation's live events, in order.
pub type Subscriber = Arc<dyn Fn(&AgentEvent) + Send + Sync>;

/// Payload of `pending-approvals`: how many approvals wait, across every conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PendingApprovalsEvent {
    pub count: u32,
}

/// Payload of `focus-approval`: the person clicked a notification; show this approval.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FocusApprovalEvent {
    pub conversation_id: ConversationId,
    pub approval_id: ApprovalId,
}

/// Payload of `execution-files`: files an execution created or modified in the workspace.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ExecutionFilesEvent {
    pub conversation_id: ConversationId,
    pub execution_id: ExecutionId,
    pub files: Vec<WorkspaceEntry>,
}

/// App-wide events: [`AppEvent::name`] is the Tauri event name, the inner value its payload
/// (`conversation-updated` carries a [`ConversationSummary`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum AppEvent {
    PendingApprovals(PendingApprovalsEvent),
    FocusApproval(FocusApprovalEvent),
    ExecutionFiles(ExecutionFilesEvent),
    ConversationUpdated(ConversationSummary),
    FilesDropped(crate::attachments::FilesDroppedEvent),
}

impl AppEvent {
    pub fn name(&self) -> &'static str {
        match self {
            AppEvent::PendingApprovals(_) => "pending-approvals",
            AppEvent::FocusApproval(_) => "focus-approval",
            AppEvent::ExecutionFiles(_) => "execution-files",
            AppEvent::ConversationUpdated(_) => "conversation-updated",
            AppEvent::FilesDropped(_) => "files-dropped",
        }
    }
}

pub trait EventSink: Send + Sync {
    fn app_event(&self, event: &AppEvent);

    /// Every live event of every conversation (whether or not one is open). Optional: the app
    /// only needs the per-conversation [`Subscriber`].
    fn agent_event(&self, _conversation: ConversationId, _event: &AgentEvent) {}
}

/// A sink that drops everything (a core with no front end attached, e.g. in a benchmark).
pub struct NullSink;

impl EventSink for NullSink {
    fn app_event(&self, _event: &AppEvent) {}
}
