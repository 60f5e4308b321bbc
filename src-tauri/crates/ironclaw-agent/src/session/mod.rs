//! One conversation's live session: an actor that takes [`Op`]s, runs turns one at a time, and
//! emits [`AgentEvent`]s. Decisions are handled by the actor even while a turn waits for one, so
//! a turn can never approve itself: the only path from "pending" to "runs" is [`Op::Decide`]
//! carrying the right approval id and code hash (or the session's explicit policy/rules).

mod context;
mod decide;
mod fetch;
mod images;
mod leftovers;
mod mcp;
mod network;
mod notes;
mod orphan;
mod run_code;
mod runtime;
mod step;
mod transcript;
mod turn;
mod undo;
mod view_image;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use ironclaw_protocol::{AgentEvent, ApprovalId, AuditRecord, ConversationId, Language, Op};
use ironclaw_sandbox::protocol::Alteration;
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::SessionOptions;
use ironclaw_store::{AuditLog, History, MessageRole, MessageStatus, NewMessage};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::approval::{Gate, Resolution};
use crate::error::{Error, Result};
use crate::risk::RiskClassifier;

pub use runtime::{ModelRuntime, ResolveRuntime, Resolving, ResolvingModel, Runtime};

/// What a session needs from the rest of the app. Shared by every session.
#[derive(Clone)]
pub struct Deps {
    pub history: Arc<History>,
    pub audit: Arc<AuditLog>,
    /// The sandbox and the model, found on the first turn that needs them.
    pub runtime: Arc<dyn ResolveRuntime>,
}

#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// Model calls per turn before the agent stops and says so.
    pub max_steps: usize,
    /// Sandbox profile for this conversation (`None`: the policy's default).
    pub profile: Option<String>,
    /// Live output forwarded as events per execution; the rest is in the result and log file.
    pub live_output_cap: usize,
    /// Output the model sees per execution (head and tail).
    pub output_to_model: usize,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            max_steps: 20,
            profile: None,
            live_output_cap: 2 << 20,
            output_to_model: 16 << 10,
        }
    }
}

/// Handle to a running session. Dropping it (and every clone) ends the session.
#[derive(Clone)]
pub struct SessionHandle {
    ops: mpsc::UnboundedSender<(Op, Option<oneshot::Sender<()>>)>,
    pub conversation: ConversationId,
}

impl SessionHandle {
    /// Queues `op`; what it does arrives as events.
    pub fn send(&self, op: Op) -> Result<()> {
        self.ops.send((op, None)).map_err(|_| Error::SessionClosed)
    }

    /// Queues `op` and returns once the session has handled it (for a policy or a rule: once
    /// the history and the audit log say so), so a read right after sees the change.
    pub async fn apply(&self, op: Op) -> Result<()> {
        let (done, handled) = oneshot::channel();
        self.ops
            .send((op, Some(done)))
            .map_err(|_| Error::SessionClosed)?;
        handled.await.map_err(|_| Error::SessionClosed)
    }
}

pub(crate) struct Inner {
    pub deps: Deps,
    pub config: SessionConfig,
    pub conversation: ConversationId,
    pub sandbox_session: SessionName,
    pub sandbox_options: SessionOptions,
    pub events: mpsc::UnboundedSender<AgentEvent>,
    pub gate: Mutex<Gate>,
    /// The same classifier the gate asks, so each request's code is parsed once.
    pub classifier: Arc<RiskClassifier>,
    pub waiters: Mutex<HashMap<ApprovalId, oneshot::Sender<Resolution>>>,
    pub transcript: tokio::sync::Mutex<Vec<ironclaw_llm::Message>>,
    /// The summary standing in for the transcript's start, once it outgrew the window.
    pub compaction: tokio::sync::Mutex<Option<crate::context::Compaction>>,
    /// Token counts, corrected by what the provider reports.
    pub estimator: Mutex<crate::context::Estimator>,
    /// The instruction files last announced (none at first), so the person hears of each
    /// change once.
    instructions_seen: Mutex<Vec<ironclaw_protocol::InstructionFile>>,
    /// Whether the person was told the model's window is too small (once a session).
    pub window_warned: std::sync::atomic::AtomicBool,
    /// The model answered with code blocks instead of tool calls, so they are its run
    /// requests (kept in the history's settings, per conversation).
    pub code_blocks: std::sync::atomic::AtomicBool,
    /// Whether code ran in this conversation before: only then is a restarted sandbox news
    /// worth telling the model (its earlier variables are gone).
    pub ran_before: std::sync::atomic::AtomicBool,
    /// Refused hosts waiting for an answer, and those the person denied.
    pub blocked_hosts: Mutex<network::BlockedHosts>,
    /// What the last run in each interpreter (by language) left altered in it.
    pub altered: Mutex<HashMap<Language, Vec<Alteration>>>,
    /// The conversation's number of each run this session made, by the sandbox's sequence
    /// number for it, so a finding can name the run that left it.
    pub run_numbers: Mutex<HashMap<u32, u32>>,
    /// Whether the sandbox was asked what its interpreters carry from before this session.
    pub leftovers_learned: std::sync::atomic::AtomicBool,
    /// Pending approvals whose run should start in a fresh interpreter.
    pub fresh: Mutex<std::collections::HashSet<ApprovalId>>,
    /// Why the last audit append of this turn failed, if one did: no code runs while what
    /// led to it is missing from the audit log.
    pub unaudited: Mutex<Option<String>>,
    /// The sandbox and the model, once a turn needed them.
    runtime: tokio::sync::OnceCell<Runtime>,
    /// The model the person switched to (`Op::UseModel`), over the resolved runtime's, with
    /// the provider's name as the front end offered it (`local` for a `more_models` entry so
    /// named), which the history then labels its answers with.
    model_override: Mutex<Option<(String, ModelRuntime)>>,
    /// A switch made before the app last stopped, applied when a turn first needs the model.
    remembered_model: Mutex<Option<(String, String)>>,
    /// What IronClaw has to tell the model with the person's next message (an undone run).
    model_notes: Mutex<Vec<String>>,
    /// The conversation's MCP servers, started by the first turn that offers tools.
    pub mcp: tokio::sync::OnceCell<Arc<ironclaw_mcp::Servers>>,
}

/// Where the window a model's server named in a refusal is kept (all conversations share it).
pub fn learned_window_key(provider: &str, model: &str) -> String {
    format!("context_window_refused:{provider}:{model}")
}

impl Inner {
    /// The sandbox and the model, resolved on the first call; the model is the one the person
    /// switched to, if they did.
    pub(super) async fn runtime(&self) -> std::result::Result<Runtime, String> {
        let base = self
            .runtime
            .get_or_try_init(|| self.deps.runtime.resolve())
            .await?;
        let remembered = self.remembered_model.lock().ok().and_then(|mut m| m.take());
        if let Some((provider, model)) = remembered {
            // The conversation's own earlier choice (or its original's, for a branch): nothing
            // is switched now, so nothing is announced.
            self.use_model(&provider, &model, false).await;
        }
        Ok(self.with_learned_window(self.with_override(base)))
    }

    /// `rt` with the window its model's server named when it last refused a request as too
    /// long, when that is smaller than what IronClaw assumed: the server knows.
    fn with_learned_window(&self, mut rt: Runtime) -> Runtime {
        let key = learned_window_key(rt.provider.id(), &rt.model);
        if let Ok(Some(tokens)) = self.deps.history.get_setting::<u32>(&key) {
            if tokens < rt.context_window.tokens {
                rt.context_window =
                    ironclaw_llm::ContextWindow::new(tokens, ironclaw_llm::WindowSource::Refused);
            }
        }
        rt
    }

    /// Keeps the window a refusal named for `rt`'s model (every conversation's, from now on)
    /// and tells the person. `false` when it teaches nothing new.
    pub(super) fn learn_refused_window(&self, rt: &Runtime, tokens: u32) -> bool {
        if tokens >= rt.context_window.tokens {
            return false;
        }
        let key = learned_window_key(rt.provider.id(), &rt.model);
        if let Err(e) = self.deps.history.set_setting(&key, &tokens) {
            tracing::warn!(error = %e, "could not keep the window the server named");
        }
        self.emit(AgentEvent::Note {
            text: format!(
                "{} refused the request as too long: its context window is {tokens} tokens, not \
                 the {} IronClaw assumed ({}). IronClaw keeps to {tokens} for this model from \
                 now on, and fitted the conversation again.",
                rt.model,
                rt.context_window.tokens,
                rt.context_window.source.describe()
            ),
        });
        true
    }

    fn with_override(&self, base: &Runtime) -> Runtime {
        match self.model_override.lock().ok().and_then(|m| m.clone()) {
            Some((_, m)) => base.clone().with_model(m),
            None => base.clone(),
        }
    }

    /// How the history names the model of an answer (`openai:gpt-4o`): by the provider's name
    /// in the model menu once the person switched, so the label matches what they picked.
    pub(super) fn model_label(&self, provider: &dyn ironclaw_llm::Provider, model: &str) -> String {
        let chosen = self
            .model_override
            .lock()
            .ok()
            .and_then(|m| m.as_ref().map(|(name, _)| name.clone()));
        format!("{}:{model}", chosen.as_deref().unwrap_or(provider.id()))
    }

    /// Whether the model's code blocks are its run requests.
    pub(super) fn uses_code_blocks(&self, rt: &Runtime) -> bool {
        match rt.tool_mode {
            ironclaw_llm::ToolMode::Native => false,
            ironclaw_llm::ToolMode::CodeBlocks => true,
            ironclaw_llm::ToolMode::Auto => {
                self.code_blocks.load(std::sync::atomic::Ordering::Relaxed)
            }
        }
    }

    /// The runtime, if a turn already resolved it.
    pub(super) fn runtime_now(&self) -> Option<Runtime> {
        self.runtime.get().map(|base| self.with_override(base))
    }

    /// `Op::UseModel`: resolves the model (no Docker needed) and makes it the next turns'.
    async fn use_model(&self, provider: &str, model: &str, announce: bool) {
        let span = tracing::info_span!("llm.switch", provider, model);
        let resolved = {
            let _g = span.enter();
            self.deps.runtime.resolve_model(provider, model)
        }
        .await;
        match resolved {
            Ok(m) => {
                if let Err(e) = self
                    .deps
                    .history
                    .set_setting(&model_key(self.conversation), &[provider, model])
                {
                    tracing::warn!(error = %e, "could not remember the conversation's model");
                }
                let (provider, model) = (provider.to_owned(), m.model.clone());
                if let Ok(mut slot) = self.model_override.lock() {
                    *slot = Some((provider.clone(), m));
                }
                // Learnt per model: the next one is asked for tool calls first again.
                self.code_blocks
                    .store(false, std::sync::atomic::Ordering::Relaxed);
                if announce {
                    self.emit(AgentEvent::ModelChanged { provider, model });
                }
            }
            Err(reason) => self.emit(AgentEvent::Error {
                message: format!("could not switch to {model}: {reason}"),
            }),
        }
    }

    pub fn emit(&self, event: AgentEvent) {
        // A front end that went away does not stop the work: history still records it.
        let _ = self.events.send(event);
    }

    /// Appends to the audit log; a failure is shown, never swallowed, and remembered so the
    /// turn runs no code until the log can be written again (see [`Inner::unaudited`]).
    pub(super) fn audit(&self, record: AuditRecord) {
        if let Err(message) = self.try_audit(record) {
            self.emit(AgentEvent::Error { message });
        }
    }

    /// [`Inner::audit`] for callers that stop on a failure themselves: the error is returned,
    /// not shown.
    pub(super) fn try_audit(&self, record: AuditRecord) -> Result<(), String> {
        match self.deps.audit.record(&record) {
            Ok(_) => Ok(()),
            Err(e) => {
                tracing::debug!(error = %e, kind = record.kind(), "audit append failed");
                let message = format!("could not write the audit log: {e}");
                if let Ok(mut unaudited) = self.unaudited.lock() {
                    *unaudited = Some(message.clone());
                }
                Err(message)
            }
        }
    }
}

/// Starts the session for an existing conversation (see [`ironclaw_store::History::create_conversation`]).
pub fn start(
    deps: Deps,
    conversation: ConversationId,
    config: SessionConfig,
) -> Result<(SessionHandle, mpsc::UnboundedReceiver<AgentEvent>)> {
    let record = deps.history.get_conversation(conversation)?;
    let code_blocks = deps
        .history
        .get_setting::<bool>(&code_blocks_key(conversation))
        .ok()
        .flatten()
        .unwrap_or(false);
    let remembered_model = deps
        .history
        .get_setting::<(String, String)>(&model_key(conversation))
        .ok()
        .flatten();
    let sandbox_session = SessionName::new(conversation.to_string())?;
    let classifier = Arc::new(RiskClassifier::default());
    let mut gate = Gate::new(conversation, record.approval_policy, classifier.clone());
    // Saved "always allow" rules survive restarts: the history is their source of truth.
    for (_, a) in deps.history.active_rules(conversation)? {
        gate.add_rule(a.language, &a.code);
    }
    let transcript::Rebuilt {
        messages: transcript,
        compaction,
    } = transcript::rebuild(&deps.history, conversation)?;
    let ran_before = transcript
        .iter()
        .any(|m| matches!(m, ironclaw_llm::Message::Tool { .. }));
    let (ops_tx, ops_rx) = mpsc::unbounded_channel();
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let inner = Arc::new(Inner {
        sandbox_options: SessionOptions {
            profile: config.profile.clone(),
            workspace: None,
        },
        deps,
        config,
        conversation,
        sandbox_session,
        events: events_tx,
        gate: Mutex::new(gate),
        classifier,
        waiters: Mutex::default(),
        transcript: tokio::sync::Mutex::new(transcript),
        compaction: tokio::sync::Mutex::new(compaction),
        estimator: Mutex::new(crate::context::Estimator::default()),
        instructions_seen: Mutex::default(),
        window_warned: std::sync::atomic::AtomicBool::new(false),
        code_blocks: std::sync::atomic::AtomicBool::new(code_blocks),
        ran_before: ran_before.into(),
        blocked_hosts: Mutex::default(),
        altered: Mutex::default(),
        run_numbers: Mutex::default(),
        leftovers_learned: false.into(),
        fresh: Mutex::default(),
        unaudited: Mutex::default(),
        runtime: tokio::sync::OnceCell::new(),
        model_override: Mutex::new(None),
        remembered_model: Mutex::new(remembered_model),
        model_notes: Mutex::default(),
        mcp: tokio::sync::OnceCell::new(),
    });
    tokio::spawn(actor(inner, ops_rx));
    Ok((
        SessionHandle {
            ops: ops_tx,
            conversation,
        },
        events_rx,
    ))
}

struct Running {
    task: tokio::task::JoinHandle<()>,
    cancel: CancellationToken,
}

async fn actor(
    inner: Arc<Inner>,
    mut ops: mpsc::UnboundedReceiver<(Op, Option<oneshot::Sender<()>>)>,
) {
    let mut queue: VecDeque<images::Queued> = VecDeque::new();
    let mut running: Option<Running> = None;
    loop {
        let finished = async {
            match running.as_mut() {
                Some(r) => {
                    let _ = (&mut r.task).await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            op = ops.recv() => {
                let Some((op, done)) = op else { break };
                match op {
                    Op::UserMessage { text, images } => {
                        let (images, refused) = images::prepare(images).await;
                        // Recorded on arrival, so a queued message survives a crash.
                        let stored = inner.deps.history.add_message_with_images(&NewMessage {
                            conversation_id: inner.conversation,
                            turn_id: None,
                            role: MessageRole::User,
                            content: text.clone(),
                            status: MessageStatus::Complete,
                            model: None,
                        }, &images);
                        match stored {
                            Ok(m) => {
                                inner.emit(AgentEvent::UserMessageSaved { message_id: m.id });
                                queue.push_back(images::Queued { text, images, refused });
                            }
                            Err(e) => {
                                tracing::debug!(error = %e, "the person's message could not be saved; no turn starts");
                                inner.emit(AgentEvent::MessageNotSaved {
                                    text,
                                    message: format!("could not save your message, so it was not sent: {e}"),
                                });
                            }
                        }
                    }
                    Op::Decide { approval_id, code_hash, decision, decided_by, confirmed } => {
                        decide::apply(&inner, approval_id, &code_hash, decision, decided_by, confirmed);
                    }
                    Op::FreshInterpreter { approval_id } => {
                        let pending = inner.waiters.lock().is_ok_and(|w| w.contains_key(&approval_id));
                        if pending {
                            if let Ok(mut fresh) = inner.fresh.lock() {
                                fresh.insert(approval_id);
                            }
                        }
                    }
                    Op::Cancel => {
                        queue.clear();
                        if let Some(r) = &running {
                            r.cancel.cancel();
                        }
                        // At once, in the actor: a decision that arrives after the cancel but
                        // before the turn notices it must find nothing left to approve.
                        decide::expire_pending(&inner);
                    }
                    Op::SetPolicy { policy } => decide::set_policy(&inner, policy),
                    // In the actor, in order: a message sent right after the switch is answered
                    // by the new model.
                    Op::UseModel { provider, model } => {
                        // The person's choice now wins over one remembered from before.
                        if let Ok(mut remembered) = inner.remembered_model.lock() {
                            remembered.take();
                        }
                        inner.use_model(&provider, &model, true).await;
                    }
                    Op::RevokeRule { code_hash } => decide::revoke_rule(&inner, &code_hash),
                    // Off the actor: restoring files takes as long as they are big.
                    Op::UndoRun { execution_id, force } => {
                        tokio::spawn(undo::undo(inner.clone(), execution_id, force));
                    }
                    Op::RedoRun { execution_id } => {
                        tokio::spawn(undo::redo(inner.clone(), execution_id));
                    }
                    Op::RewindTo { execution_id } => {
                        tokio::spawn(undo::rewind(inner.clone(), execution_id));
                    }
                    Op::DecideHost { target, decision, decided_by } => {
                        // Off the actor: "always" writes a file; other ops need not wait.
                        tokio::spawn(network::decide(inner.clone(), target, decision, decided_by));
                    }
                }
                if let Some(done) = done {
                    let _ = done.send(());
                }
            }
            _ = finished => { running = None; }
        }
        if running.is_none() {
            if let Some(queued) = queue.pop_front() {
                let cancel = CancellationToken::new();
                let task = tokio::spawn(turn::run(inner.clone(), queued, cancel.clone()));
                running = Some(Running { task, cancel });
            }
        }
    }
    if let Some(r) = running {
        r.cancel.cancel();
        let _ = r.task.await;
    }
    // The servers' containers go with the session.
    if let Some(servers) = inner.mcp.get() {
        servers.stop().await;
    }
}

/// The history setting that keeps a conversation's last [`AgentEvent::ContextUsage`] (as
/// `(model, used_tokens, window_tokens, window_source)`), so a reopened conversation shows its
/// meter before its next turn.
pub fn context_usage_key(conversation: ConversationId) -> String {
    format!("context_usage:{conversation}")
}

/// The history setting that remembers the model a conversation switched to.
pub fn model_key(conversation: ConversationId) -> String {
    format!("model:{conversation}")
}

/// The history setting that remembers a conversation's model writes code blocks.
pub(crate) fn code_blocks_key(conversation: ConversationId) -> String {
    format!("code_blocks:{conversation}")
}
