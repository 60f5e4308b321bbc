//! Live sessions: one agent session per conversation in use, started on first need, and the
//! pump that reads each one's events — recording pending approvals, notifying, reporting the
//! files a run changed — before passing every event on to the window.

use std::sync::Arc;

use ironclaw_agent::{
    Deps, ResolveRuntime, Resolving, ResolvingModel, SessionConfig, SessionHandle,
};
use ironclaw_protocol::{
    AgentEvent, ApprovalId, ApprovalRequest, CodeHash, ConversationId, DecidedBy, Decision,
    ExecutionId, Op,
};
use ironclaw_sandbox::policy::Policy;
use ironclaw_sandbox::{docker, Sandbox};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::desktop::Core;
use crate::error::Result;
use crate::notify::{ApprovalNotice, NoticeAction};
use crate::sink::{AppEvent, ExecutionFilesEvent, FocusApprovalEvent, PendingApprovalsEvent};
use crate::types::PendingApproval;
use crate::workspace;

/// Finds the sandbox and model for a session's first turn. Weak: a session must not keep a
/// closed app's core alive.
struct Resolver {
    core: std::sync::Weak<Core>,
    conversation: ConversationId,
}

impl ResolveRuntime for Resolver {
    fn resolve(&self) -> Resolving<'_> {
        Box::pin(async move {
            let core = self.core.upgrade().ok_or("IronClaw is shutting down")?;
            let rt = core.runtime().await.map_err(|e| e.to_string())?;
            // From its first turn on, the conversation's sandbox is this app's to stop at quit.
            core.started_session(self.conversation);
            Ok(rt)
        })
    }

    fn resolve_model<'a>(&'a self, provider: &'a str, model: &'a str) -> ResolvingModel<'a> {
        Box::pin(async move {
            let core = self.core.upgrade().ok_or("IronClaw is shutting down")?;
            let config = core.settings.provider_config().map_err(|e| e.to_string())?;
            let current = core.chosen_model().await.map_err(|e| e.to_string())?;
            ironclaw_agent::models::resolve(
                config.as_ref(),
                (&current.provider, current.tool_mode),
                provider,
                model,
            )
            .await
        })
    }
}

impl Core {
    /// The sandbox, connected on first use (deleting a conversation needs it, a model not).
    pub(crate) async fn sandbox(&self) -> Result<Arc<Sandbox>> {
        let mut slot = self.sandbox.lock().await;
        if let Some(sandbox) = slot.as_ref() {
            return Ok(sandbox.clone());
        }
        let docker = docker::connect_client(&self.paths.engine_cache_file()).await?;
        let policy = Policy::load(&self.paths)?;
        let sandbox = Arc::new(Sandbox::new(docker, self.paths.clone(), policy));
        let defaults = self.settings.defaults()?;
        sandbox.use_undo_caps(defaults.undo_keep_bytes, defaults.undo_keep_total_bytes);
        *slot = Some(sandbox.clone());
        self.start_spare_keeper(&sandbox);
        Ok(sandbox)
    }

    /// What sessions share: the engine connection and the model, made on first use so the
    /// app opens (and the doctor runs) without Docker or a model.
    pub(crate) async fn runtime(&self) -> Result<ironclaw_agent::Runtime> {
        let sandbox = self.sandbox().await?;
        let mcp = ironclaw_mcp::McpConfig::load_or_report(&self.paths.config_dir);
        Ok(
            ironclaw_agent::Runtime::new(sandbox, self.chosen_model().await?)
                .with_mcp(Arc::new(mcp)),
        )
    }

    /// The model Settings name (or the one the embedding program fixed), resolved once until
    /// Settings change. Needs no Docker.
    pub(crate) async fn chosen_model(&self) -> Result<crate::desktop::ChosenModel> {
        let mut slot = self.model.lock().await;
        Ok(match (slot.as_ref(), &self.fixed_model) {
            (Some(chosen), _) => chosen.clone(),
            // A model fixed by the embedding program (the tests): the window from the
            // environment's setting, else what is known of the model. Asked once, like the
            // configured one (whether it reads pictures may be a request to the server).
            (None, Some((p, m))) => {
                let setting = std::env::var("IRONCLAW_CONTEXT_WINDOW")
                    .ok()
                    .and_then(|v| v.trim().parse().ok());
                let chosen = ironclaw_agent::ModelRuntime {
                    provider: p.clone(),
                    model: m.clone(),
                    context_window: ironclaw_llm::choose_window(setting, None, m),
                    tool_mode: ironclaw_llm::ToolMode::Auto,
                    images: ironclaw_llm::vision::reads_images(&**p, m).await,
                };
                *slot = Some(chosen.clone());
                chosen
            }
            (None, None) => {
                let resolved = self.settings.resolve().await?;
                let chosen = ironclaw_agent::ModelRuntime {
                    provider: Arc::from(resolved.provider),
                    model: resolved.model,
                    context_window: resolved.context_window,
                    tool_mode: resolved.tool_mode,
                    images: resolved.images,
                };
                *slot = Some(chosen.clone());
                chosen
            }
        })
    }

    /// The conversation's live session, started if it has none.
    pub(crate) async fn session(self: &Arc<Self>, id: ConversationId) -> Result<SessionHandle> {
        let mut sessions = self.sessions.lock().await;
        if let Some(handle) = sessions.get(&id) {
            return Ok(handle.clone());
        }
        self.history.get_conversation(id)?;
        // Only the history and the audit log: Docker and the model are found by the first turn,
        // so a decision, a policy or a rule never waits for them.
        let deps = Deps {
            history: self.history.clone(),
            audit: self.audit.clone(),
            runtime: Arc::new(Resolver {
                core: Arc::downgrade(self),
                conversation: id,
            }),
        };
        let config = SessionConfig {
            profile: self
                .settings
                .defaults()
                .ok()
                .and_then(|s| s.default_profile),
            ..SessionConfig::default()
        };
        let _ = self.runtime.set(tokio::runtime::Handle::current());
        let (handle, events) = ironclaw_agent::start(deps, id, config)?;
        sessions.insert(id, handle.clone());
        tokio::spawn(pump(self.clone(), id, events));
        Ok(handle)
    }

    /// The live session, if the conversation has one (no session is started for this).
    pub(crate) async fn live_session(&self, id: ConversationId) -> Option<SessionHandle> {
        self.sessions.lock().await.get(&id).cloned()
    }

    fn emit(&self, event: AppEvent) {
        self.sink.app_event(&event);
    }

    fn emit_pending_count(&self, count: u32) {
        self.emit(AppEvent::PendingApprovals(PendingApprovalsEvent { count }));
    }

    fn observe(self: &Arc<Self>, id: ConversationId, event: &AgentEvent) {
        match event {
            AgentEvent::TurnStarted { .. } => self.set_busy(id, true),
            AgentEvent::ApprovalRequested(request) => self.approval_requested(id, request),
            AgentEvent::ApprovalResolved { approval_id, .. }
            | AgentEvent::ApprovalExpired { approval_id, .. }
            | AgentEvent::DecisionRejected {
                approval_id,
                still_pending: false,
                ..
            } => self.approval_gone(*approval_id),
            AgentEvent::ExecutionEnded {
                execution_id,
                duration_ms,
                exit_code,
                changes,
                not_undoable,
                changes_unknown,
                ..
            } => {
                // The run's own changes when its checkpoint has them; else its time window.
                let exact = (not_undoable.is_none() && changes_unknown.is_none())
                    .then_some(changes.as_slice());
                self.execution_ended(id, *execution_id, *duration_ms, *exit_code, exact)
            }
            AgentEvent::FetchHostAsked { url, target, .. } => self.fetch_waits(id, url, target),
            AgentEvent::AssistantMessage { .. } => self.conversation_updated(id),
            AgentEvent::TurnEnded { .. } => {
                // What the turn still waited for arrived as `ApprovalExpired` before this.
                self.set_busy(id, false);
                self.conversation_updated(id);
            }
            _ => {}
        }
    }

    fn set_busy(&self, id: ConversationId, busy: bool) {
        if let Ok(mut set) = self.busy.lock() {
            if busy {
                set.insert(id);
            } else {
                set.remove(&id);
            }
        }
    }

    pub(crate) fn conversation_updated(&self, id: ConversationId) {
        if let Ok(summary) = crate::conversations::summary(&self.history, &self.pending, id) {
            self.emit(AppEvent::ConversationUpdated(summary));
        }
    }

    fn approval_requested(self: &Arc<Self>, id: ConversationId, request: &ApprovalRequest) {
        let title = self
            .history
            .get_conversation(id)
            .map(|c| c.title)
            .unwrap_or_default();
        let count = self.pending.add(id, title.clone(), request.clone());
        self.emit_pending_count(count);
        // Checked after it is pending: a blur in between then finds it and notifies instead,
        // and the claim lets exactly one of the two send it.
        if self.is_focused()
            || !self.notifications_on()
            || !self.pending.claim_notification(request.approval_id)
        {
            return;
        }
        self.notify_approval(PendingApproval {
            conversation_id: id,
            title,
            request: request.clone(),
        });
    }

    /// A fetch waits on a question about a host: with the window in the background, the person
    /// would not know the turn is stuck. The answer is given in the window (the question has
    /// four answers, and "always" is not a click to make on a notification).
    fn fetch_waits(&self, id: ConversationId, url: &str, target: &str) {
        if self.is_focused() || !self.notifications_on() {
            return;
        }
        use ironclaw_risk::visible::render_visible;
        let title = self
            .history
            .get_conversation(id)
            .map(|c| c.title)
            .unwrap_or_default();
        let mut shown: String = render_visible(url).chars().take(100).collect();
        if url.chars().count() > 100 {
            shown.push('…');
        }
        // The host is the model's word: it goes in the body, never the summary (see
        // `ApprovalNotice::summary`).
        self.notifier.info(
            "IronClaw waits for you: a fetch needs a host allowed".into(),
            format!(
                "From {}: {shown}\n— {}\nIt is not on the network list; answer in the window.",
                render_visible(target),
                render_visible(&title)
            ),
        );
    }

    /// The window went to the background: every approval already waiting that has not been
    /// notified is notified now, once.
    pub(crate) fn window_left(self: &Arc<Self>) {
        if !self.notifications_on() {
            return;
        }
        for waiting in self.pending.claim_unnotified() {
            self.notify_approval(waiting);
        }
    }

    fn notify_approval(self: &Arc<Self>, waiting: PendingApproval) {
        // Focus changes arrive on the UI thread, outside the runtime; sessions (and so
        // approvals) only exist once the runtime was seen.
        let Some(rt) = tokio::runtime::Handle::try_current()
            .ok()
            .or_else(|| self.runtime.get().cloned())
        else {
            tracing::warn!("no async runtime yet: cannot notify an approval");
            return;
        };
        let id = waiting.conversation_id;
        let request = waiting.request;
        let notice = ApprovalNotice {
            conversation: id,
            conversation_title: waiting.title,
            approval_id: request.approval_id,
            code_hash: request.code_hash,
            language: request.language,
            code: request.code,
            risk: request.risk,
            choices: request.choices,
            altered_session: request.altered_session,
        };
        // Weak: a notification left on screen must not keep a closed app's core alive.
        let core = Arc::downgrade(self);
        let (approval_id, code_hash) = (request.approval_id, request.code_hash);
        self.notifier.approval(
            notice,
            Box::new(move |action| {
                if let Some(core) = core.upgrade() {
                    rt.spawn(core.notification_action(id, approval_id, code_hash, action));
                }
            }),
        );
    }

    /// A notification's button: the same `Op::Decide` as the dialog's, bound to the id and hash
    /// the notification was made for. If that approval was decided meanwhile, the gate refuses
    /// it (`decisionRejected`) and nothing runs.
    async fn notification_action(
        self: Arc<Self>,
        id: ConversationId,
        approval_id: ApprovalId,
        code_hash: CodeHash,
        action: NoticeAction,
    ) {
        let decision = match action {
            NoticeAction::Approve => Decision::ApproveOnce,
            NoticeAction::Deny => Decision::Deny {
                reason: Some("denied from a desktop notification".into()),
            },
            NoticeAction::Focus => {
                self.emit(AppEvent::FocusApproval(FocusApprovalEvent {
                    conversation_id: id,
                    approval_id,
                }));
                return;
            }
            NoticeAction::Dismissed => return,
        };
        let sent = match self.live_session(id).await {
            Some(session) => session.send(Op::Decide {
                approval_id,
                code_hash,
                decision,
                decided_by: DecidedBy::Notification,
                confirmed: false,
            }),
            None => return,
        };
        if let Err(e) = sent {
            tracing::warn!(error = %e, "a notification decision could not reach its session");
        }
    }

    fn approval_gone(&self, approval_id: ApprovalId) {
        self.notifier.resolved(approval_id);
        if let Some(count) = self.pending.remove(approval_id) {
            self.emit_pending_count(count);
        }
    }

    fn execution_ended(
        &self,
        id: ConversationId,
        execution: ExecutionId,
        duration_ms: f64,
        exit_code: i32,
        changes: Option<&[ironclaw_protocol::FileChange]>,
    ) {
        let started = self
            .history
            .get_execution(execution)
            .map(|x| x.started_at.as_millis());
        if let (Ok(since), Ok(root)) = (started, workspace::dir(&self.paths, id)) {
            let last = workspace::LastRun::of(
                changes,
                workspace::RunWindow {
                    start_ms: since,
                    end_ms: None,
                },
            );
            let files = workspace::changed_by(&root, &last);
            // So the images come back with the conversation, not only with this event.
            let images = crate::run_images::to_record(&files);
            if !images.is_empty() {
                if let Err(e) = self.history.record_execution_files(execution, &images) {
                    tracing::warn!(error = %e, "could not record the images a run wrote");
                }
            }
            self.emit(AppEvent::ExecutionFiles(ExecutionFilesEvent {
                conversation_id: id,
                execution_id: execution,
                files,
            }));
        }
        let threshold = self
            .settings
            .defaults()
            .map(|s| s.long_run_notify_ms)
            .unwrap_or(10_000);
        if duration_ms >= threshold as f64 && !self.is_focused() && self.notifications_on() {
            let title = self
                .history
                .get_conversation(id)
                .map(|c| c.title)
                .unwrap_or_default();
            self.notifier.info(
                format!("Run finished (exit {exit_code})"),
                format!("after {:.1} s — {title}", duration_ms / 1000.0),
            );
        }
    }
}

async fn pump(core: Arc<Core>, id: ConversationId, mut events: UnboundedReceiver<AgentEvent>) {
    while let Some(event) = events.recv().await {
        core.observe(id, &event);
        let subscriber = core
            .subscribers
            .lock()
            .ok()
            .and_then(|s| s.get(&id).cloned());
        if let Some(subscriber) = subscriber {
            subscriber(&event);
        }
        core.sink.agent_event(id, &event);
    }
    core.set_busy(id, false);
}
