//! The values the web UI receives and sends, camelCase on the wire. Times are milliseconds
//! since the Unix epoch (numbers); ids are UUID strings; code hashes 64 hex digits. TypeScript
//! twins are generated into `ui/src/bindings/` (see `bindings.rs`).

use ironclaw_protocol::{
    ApprovalId, ApprovalPolicy, ApprovalRequest, CodeHash, ConversationId, DecidedBy, ExecutionId,
    FetchReport, FileChange, Language, MessageId, ToolCallId,
};
use ironclaw_store::{MessageStatus, Timestamp};
use serde::{Deserialize, Serialize};

/// A row of the sidebar.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConversationSummary {
    pub id: ConversationId,
    pub title: String,
    pub updated_at: Timestamp,
    pub pending_approvals: u32,
    /// Search results only: text around the match, matched terms between « and ».
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub snippet: Option<String>,
}

/// State of a past approval as the chat shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum ApprovalState {
    Pending,
    Approved,
    Denied,
    Expired,
}

/// One thing to render in the chat, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum HistoryItem {
    User {
        id: MessageId,
        text: String,
        /// The pictures sent with it, as the model was sent them.
        images: Vec<SentImage>,
        at: Timestamp,
    },
    Assistant {
        id: MessageId,
        text: String,
        status: MessageStatus,
        at: Timestamp,
        /// The model that wrote it (`provider:model`), when the history knows.
        model: Option<String>,
    },
    /// A note from IronClaw itself (e.g. "this turn was interrupted"), not from the model.
    Note {
        id: MessageId,
        text: String,
        at: Timestamp,
    },
    /// Where the model's summary began standing in for the turns above it.
    Compacted {
        id: MessageId,
        summary: String,
        at: Timestamp,
    },
    Approval {
        request: ApprovalRequest,
        state: ApprovalState,
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        decided_by: Option<DecidedBy>,
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        reason: Option<String>,
        /// The person edited the code before approving; `request.code` is what ran.
        user_edited: bool,
    },
    Execution {
        execution_id: ExecutionId,
        /// The run's place in the conversation, from 1 ("run #3").
        number: u32,
        approval_id: ApprovalId,
        language: Language,
        code: String,
        /// Head and tail of the output as kept in the history; the full log is `logFile`.
        stdout: String,
        stderr: String,
        exit_code: Option<i64>,
        duration_ms: Option<u64>,
        timed_out: bool,
        cancelled: bool,
        oom_killed: bool,
        /// IronClaw stopped while this ran; the outcome is unknown.
        interrupted: bool,
        truncated: bool,
        log_file: Option<String>,
        /// Images the run wrote, as the history recorded them (relative to the workspace).
        /// Read each with `read_run_image`: it may have been deleted since.
        images: Vec<String>,
        /// What the run changed in the workspace.
        changes: Vec<FileChange>,
        /// `undo_run` can take it back (its checkpoint is recorded).
        undoable: bool,
        /// Why it can no longer be undone (its checkpoint was dropped for the size cap).
        not_undoable: Option<String>,
        /// It is undone now (`redo_run` puts it back).
        undone: bool,
        /// Why what it changed is not known: its changes could not be recorded when it ended
        /// (`undo_run` puts the workspace back as it was before it).
        changes_unknown: Option<String>,
    },
    /// A page the model fetched (`fetch_url`), as the person was shown it.
    Fetch {
        call_id: ToolCallId,
        report: FetchReport,
        at: Timestamp,
    },
    /// A picture in the workspace the model looked at (`view_image`), as it was sent, or why
    /// it could not be.
    Viewed {
        call_id: ToolCallId,
        path: String,
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        image: Option<SentImage>,
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        error: Option<String>,
        at: Timestamp,
    },
}

/// A picture as a model was sent it (already downscaled). The view lists it without its bytes,
/// so a conversation of many pictures opens at once; `read_message_image` loads each.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SentImage {
    pub message_id: MessageId,
    /// Its place among the message's pictures, from 0.
    pub ordinal: u32,
    pub name: String,
    pub width: u32,
    pub height: u32,
}

/// An image a run wrote, read again for a reopened conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum RunImage {
    Shown {
        #[serde(rename = "dataUrl")]
        data_url: String,
    },
    /// The file is no longer in the workspace.
    Gone,
    /// It is there but is not shown (too large, no longer an image, leads outside the
    /// workspace): `reason` says which.
    Refused { reason: String },
}

/// One side of a file a run changed, as the run's checkpoint keeps it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ChangeSide {
    /// Nothing was there.
    Absent,
    Folder,
    Text {
        text: String,
    },
    Image {
        data_url: String,
    },
    /// Not text and not an image shown inline.
    Binary {
        bytes: u64,
    },
    /// A link, shown as its target (never followed).
    Link {
        target: String,
    },
    /// A FIFO, socket or device.
    Special,
    /// Larger than is shown inline.
    TooLarge {
        bytes: u64,
    },
}

/// One line of a text diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DiffLine {
    /// `same`, `added`, `removed`, or `gap` (unchanged lines left out; `text` says how many).
    pub kind: DiffKind,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum DiffKind {
    Same,
    Added,
    Removed,
    Gap,
}

/// A file a run changed: both sides, and a line diff when both are text.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChangeDetail {
    pub path: String,
    pub change: ironclaw_protocol::ChangeKind,
    pub before: ChangeSide,
    pub after: ChangeSide,
    pub diff: Vec<DiffLine>,
    /// Why the sides cannot be shown (the checkpoint was dropped for the cap…), if so.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub unavailable: Option<String>,
}

/// What `open_conversation` returns: everything to render, then live events follow.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConversationView {
    pub conversation: ConversationSummary,
    pub items: Vec<HistoryItem>,
    /// Approvals waiting for a decision right now (also among `items`).
    pub pending_approvals: Vec<ApprovalRequest>,
    pub policy: ApprovalPolicy,
    /// `neverAsk`: the UI must show a warning.
    pub policy_flagged: bool,
    /// A turn is running (generation, an approval wait or an execution).
    pub busy: bool,
    /// The instruction files the next turn will read (`AGENTS.md`, `IRONCLAW.md`), as they are
    /// on disk now; live changes come as `instructions` events.
    pub instructions: Vec<ironclaw_protocol::InstructionFile>,
    /// Files attached since the last message: the next one tells the model about them.
    pub attached: Vec<crate::attachments::AttachedItem>,
    /// The model the next turn uses.
    pub model: Option<crate::models::ModelOption>,
    /// How full the context was at the conversation's last request, so the meter is there
    /// from the moment it opens; `None` before its first turn.
    pub context: Option<ContextGauge>,
}

/// How much of the model's context window a conversation's last request took.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ContextGauge {
    pub model: String,
    pub used_tokens: u64,
    pub window_tokens: u32,
    /// Where the window's size comes from, for people to read.
    pub window_source: String,
}

impl ContextGauge {
    /// From what the agent keeps (`ironclaw_agent::session::context_usage_key`).
    pub fn from_kept(
        (model, used_tokens, window_tokens, window_source): (String, u64, u32, String),
    ) -> Self {
        ContextGauge {
            model,
            used_tokens,
            window_tokens,
            window_source,
        }
    }
}

/// An approval waiting somewhere, for the tray, the badge and the "pending" list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PendingApproval {
    pub conversation_id: ConversationId,
    pub title: String,
    pub request: ApprovalRequest,
}

/// A saved "always allow this exact code in this conversation" rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionRuleView {
    pub code_hash: CodeHash,
    pub language: Language,
    pub code: String,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum EntryKind {
    Dir,
    Image,
    Text,
    Binary,
    // Listed, never followed: it could point anywhere on the host.
    Symlink,
    // The special kinds are listed so the person sees them, and never opened (a FIFO with no
    // writer would block whoever opens it).
    Fifo,
    Socket,
    Device,
}

/// A file or folder in a conversation's workspace.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceEntry {
    /// Relative to the workspace, `/`-separated.
    pub path: String,
    pub size: u64,
    pub modified_ms: i64,
    pub kind: EntryKind,
    pub changed_by_last_run: bool,
}

/// What "Open folder" did. The folder is always named, so when no file manager took it the
/// person can still open it by hand.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FolderOpening {
    /// The workspace folder, absolute.
    pub path: String,
    pub opened: bool,
    /// When not opened: what failed and what to do, in plain words.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub problem: Option<String>,
    /// When not opened: the launcher's own message, for a bug report.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub detail: Option<String>,
}

/// A page of an execution's full log.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LogChunk {
    /// Invalid UTF-8 shows as U+FFFD; a character cut by the page end moves to the next page.
    pub text: String,
    pub offset: u64,
    pub next_offset: u64,
    pub total_bytes: u64,
}

/// A sandbox profile as Settings lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProfileInfo {
    pub name: String,
    pub description: String,
    pub memory_bytes: u64,
    pub cpus: f64,
    pub pids: i64,
    pub timeout_ms: u64,
    /// `none` or `allowlist`.
    pub network: String,
    /// `runc`, `auto` (gVisor where the engine has it) or `runsc` (gVisor required).
    pub runtime: String,
    pub is_default: bool,
}

/// How the model asks to run code: its own tool calls, or fenced code blocks (models without
/// tool calling); `auto` finds out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum ToolModeName {
    #[default]
    Auto,
    Native,
    CodeBlocks,
}

/// Which kind of model service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum ProviderKindName {
    Openai,
    Anthropic,
    Ollama,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProviderSettings {
    pub kind: ProviderKindName,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub base_url: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub model: Option<String>,
    /// Read-only: whether a key for this kind is in the OS keyring. Keys are never sent to the UI.
    #[serde(default)]
    pub has_api_key: bool,
    /// The model's context window in tokens, when IronClaw's idea of it is wrong (`null`: ask
    /// the provider, else what is known of the model).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub context_window: Option<u32>,
    #[serde(default)]
    pub tool_mode: ToolModeName,
    /// Whether the model reads pictures (`null`: ask the server, else judge by the name).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub images: Option<bool>,
    /// Other models the chat's model menu offers, one per entry: `model` (this provider's) or
    /// `anthropic:claude-…` (another provider, its key from its variable or the keyring).
    #[serde(default)]
    pub more_models: Vec<String>,
}

/// Everything Settings edits. `provider: null` means "not configured yet": the environment or a
/// local Ollama is used, as the CLI does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    #[serde(default)]
    pub provider: Option<ProviderSettings>,
    /// Sandbox profile for new conversations (`null`: the policy's default).
    #[serde(default)]
    pub default_profile: Option<String>,
    /// Approval policy of new conversations.
    #[serde(default)]
    pub default_policy: ApprovalPolicy,
    /// Desktop notifications for approvals and long runs while the window is in the background.
    #[serde(default = "yes")]
    pub notifications: bool,
    /// Runs longer than this notify when they finish in the background.
    #[serde(default = "ten_seconds")]
    pub long_run_notify_ms: u64,
    /// Most bytes of copies one conversation's undo history keeps (`null`: `undo.keep` in
    /// sandbox.yaml).
    #[serde(default)]
    pub undo_keep_bytes: Option<u64>,
    /// Most bytes of copies all conversations' undo history keeps together (`null`:
    /// `undo.keep_total` in sandbox.yaml).
    #[serde(default)]
    pub undo_keep_total_bytes: Option<u64>,
}

/// What the undo history of every conversation holds now, and may hold.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UndoUsage {
    /// Bytes of file copies kept now, all conversations together.
    pub kept_bytes: u64,
    /// The caps in force: Settings', else sandbox.yaml's.
    pub keep_bytes: u64,
    pub keep_total_bytes: u64,
    /// sandbox.yaml's caps, which apply when Settings sets none.
    pub policy_keep_bytes: u64,
    pub policy_keep_total_bytes: u64,
}

fn yes() -> bool {
    true
}

fn ten_seconds() -> u64 {
    10_000
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            provider: None,
            default_profile: None,
            default_policy: ApprovalPolicy::default(),
            notifications: true,
            long_run_notify_ms: ten_seconds(),
            undo_keep_bytes: None,
            undo_keep_total_bytes: None,
        }
    }
}

/// Whether the configured model answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProviderCheck {
    pub ok: bool,
    pub model: Option<String>,
    pub message: String,
}
