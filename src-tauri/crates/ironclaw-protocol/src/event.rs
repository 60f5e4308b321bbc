//! Events out of a session: what every front end renders.

use serde::Serialize;

use crate::{
    ApprovalId, ApprovalPolicy, CodeHash, ConversationId, DecidedBy, DecisionChoice, ExecutionId,
    FileChange, HostDecision, Language, MessageId, RiskLevel, RiskReason, ToolCallId, TurnId,
};

/// What the person is asked to decide. `code` is exactly what will run if approved.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    pub approval_id: ApprovalId,
    pub code_hash: CodeHash,
    pub language: Language,
    pub code: String,
    pub risk: RiskLevel,
    pub reasons: Vec<RiskReason>,
    /// The classifier found the code destructive (shown as a warning; what that allows is in
    /// `choices`).
    pub destructive: bool,
    /// The answers the core accepts, in the order to offer them, each saying whether it needs
    /// the second confirmation. Front ends offer exactly these.
    pub choices: Vec<DecisionChoice>,
    /// What earlier runs left in the interpreter this code will run in (a live thread, a
    /// shadowing function, a changed PATH...): it can change what the code does. Each entry
    /// names the run that left it ("run #3 left: …"). Empty when nothing was found. Answer
    /// with [`Op::FreshInterpreter`] to start a clean one first.
    #[serde(default)]
    pub altered_session: Vec<String>,
    /// Why the conversation's policy did not let this run without asking, when it could have
    /// ("the workspace cannot be checkpointed: …"); `None` when the policy asks for every run.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub asked_because: Option<String>,
}

crate::text_enum!(
    /// Where an instruction file was found.
    InstructionScope {
        /// The person's config folder: theirs for every conversation.
        User => "user",
        /// The root of the conversation's workspace, which the sandboxed code can write too.
        Workspace => "workspace",
    }
);

/// An instruction file (`AGENTS.md`, `IRONCLAW.md`) in force for the turn, or found and not
/// read (`problem`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct InstructionFile {
    pub scope: InstructionScope,
    pub name: String,
    /// The host path, for people to open.
    pub path: String,
    /// The file's size; more than IronClaw reads when `cut`.
    pub bytes: u64,
    /// Only the first part was given to the model (see docs/user-guide.md#project-instructions-agentsmd for the cap).
    pub cut: bool,
    /// Why the file was not read (a link, a FIFO, not text); `None` when it was.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub problem: Option<String>,
}

/// What one `fetch_url` call brought back, for people to read. The page's text itself goes to
/// the model only, marked as untrusted content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FetchReport {
    /// What the model asked for.
    pub url: String,
    /// Where the page was in the end, after redirects; `None` when nothing was fetched.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub final_url: Option<String>,
    /// The HTTP status of the last response.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub status: Option<u16>,
    /// The page's `<title>`, when it had one.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub title: Option<String>,
    /// Bytes received (at most the cap).
    #[serde(default)]
    pub bytes: u64,
    /// The page was larger than IronClaw reads, or its text longer than the model is given.
    #[serde(default)]
    pub cut: bool,
    /// Text in the page that reads like instructions to an AI (a prompt injection attempt),
    /// quoted: shown to the person and told to the model.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Why nothing (usable) came back: a refused host, a failed connection, a binary type.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub error: Option<String>,
}

impl FetchReport {
    /// A fetch that brought nothing back, and why.
    pub fn failed(url: impl Into<String>, error: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            final_url: None,
            status: None,
            title: None,
            bytes: 0,
            cut: false,
            warnings: Vec::new(),
            error: Some(error.into()),
        }
    }
}

crate::text_enum!(
    /// Which of a run's two output streams text came from.
    OutputStream {
        Stdout => "stdout",
        Stderr => "stderr",
    }
);

crate::text_enum!(
    /// How a turn ended.
    TurnOutcome {
        /// The agent finished its reply.
        Done => "done",
        /// The person stopped it.
        Cancelled => "cancelled",
        /// A model or sandbox failure ended it.
        Failed => "failed",
    }
);

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
    /// The next piece of the model's visible thinking before (or between) its answer's text.
    /// Shown folded and apart from the answer; not sent back to the model, not kept in history.
    ReasoningDelta {
        message_id: MessageId,
        text: String,
    },
    /// Something IronClaw tells the person about the turn in its own voice: an answer cut off
    /// at the model's output limit, a refusal, an empty answer. Kept in history as a note.
    Note {
        text: String,
    },
    /// How full the model's context window is for the request about to be sent (estimated;
    /// see docs/user-guide.md#the-context-window for how tokens are counted).
    ContextUsage {
        model: String,
        used_tokens: u64,
        window_tokens: u32,
        /// Where the window size comes from, for people to read ("known for this model").
        window_source: String,
    },
    /// The conversation's next turns use this model (after an `Op::UseModel`). The history
    /// records, for each answer, the model that wrote it.
    ModelChanged {
        provider: String,
        model: String,
    },
    /// The instruction files in force from this turn on, sent when they differ from what the
    /// session last said (at first: none), before the turn's first request. Empty: none now.
    Instructions {
        files: Vec<InstructionFile>,
    },
    /// The turns before the current one no longer fit the context window: the model summarised
    /// them, and the summary stands in for them from now on (it is kept in history).
    Compacted {
        summary: String,
        tokens_before: u64,
        tokens_after: u64,
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
    /// A pending approval can no longer be decided (its turn was cancelled). Front ends drop
    /// its dialog and notification.
    ApprovalExpired {
        approval_id: ApprovalId,
        reason: String,
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
        language: Language,
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
        /// What the run changed in the workspace.
        changes: Vec<FileChange>,
        /// Why the run cannot be undone (its workspace could not be checkpointed); `None` when
        /// [`Op::UndoRun`] can take it back.
        not_undoable: Option<String>,
        /// Why what the run changed could not be recorded when it ended: `changes` is then not
        /// its list of changes, and [`Op::UndoRun`] puts the workspace back as it was before
        /// the run (it cannot be redone). `None` when the changes were recorded.
        #[serde(default)]
        changes_unknown: Option<String>,
    },
    /// A run's workspace changes were taken back ([`Op::UndoRun`]): the files are as they were
    /// before it, and before each run in `also_undone` (later runs taken back with it).
    /// Interpreter state is unchanged.
    RunUndone {
        execution_id: ExecutionId,
        restored: Vec<FileChange>,
        also_undone: Vec<ExecutionId>,
    },
    /// Later runs changed the same files, so nothing was undone; undo with `force` to take them
    /// back too.
    UndoBlocked {
        execution_id: ExecutionId,
        later_runs: Vec<ExecutionId>,
        paths: Vec<String>,
    },
    /// An undone run's changes were put back ([`Op::RedoRun`]).
    RunRedone {
        execution_id: ExecutionId,
        changes: Vec<FileChange>,
    },
    /// The answer to [`Op::RewindTo`], after a [`AgentEvent::RunUndone`] for each run it undid
    /// (`undone`, newest first; empty when no later run was left to undo).
    Rewound {
        execution_id: ExecutionId,
        undone: Vec<ExecutionId>,
    },
    TurnEnded {
        turn_id: TurnId,
        status: TurnOutcome,
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
    /// The model asked to fetch a web page (`fetch_url`).
    #[serde(rename_all = "camelCase")]
    FetchStarted {
        call_id: ToolCallId,
        url: String,
    },
    /// The page's host (or a redirect's) is not on the network list: the fetch waits for an
    /// [`Op::DecideHost`] about `target`, as a run's refused host would be answered.
    #[serde(rename_all = "camelCase")]
    FetchHostAsked {
        call_id: ToolCallId,
        url: String,
        /// `host:port`.
        target: String,
        reason: String,
    },
    /// The fetch is over, fetched or not.
    #[serde(rename_all = "camelCase")]
    FetchEnded {
        call_id: ToolCallId,
        report: FetchReport,
    },
    /// The model asked to look at a picture in the workspace (`view_image`): shown to it at
    /// `width`×`height`, or not, and why.
    #[serde(rename_all = "camelCase")]
    ImageViewed {
        call_id: ToolCallId,
        path: String,
        width: u32,
        height: u32,
        error: Option<String>,
    },
    /// The person's message was saved (before its turn starts): its id, by which it can be
    /// edited into a branch later.
    #[serde(rename_all = "camelCase")]
    UserMessageSaved {
        message_id: MessageId,
    },
    /// A [`Op::DecideHost`] was applied.
    #[serde(rename_all = "camelCase")]
    NetworkDecided {
        target: String,
        decision: HostDecision,
        decided_by: DecidedBy,
    },
}
