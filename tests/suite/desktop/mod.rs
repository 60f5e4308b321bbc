//! The desktop app's core end to end: `ironclaw_desktop::Desktop` — what every Tauri command
//! calls — driving real sessions in the real sandbox, with real SQLite history, against a
//! scripted model. Events are collected from the same two places the app reads them: the
//! conversation's subscriber (the Tauri `Channel`) and the app-wide `EventSink` (`app.emit`).
//!
//! Nothing is timed: every wait has a guard that fails with what was seen so far.

mod attach;
mod changes;
mod disk_full;
mod flow;
mod host_reader;
mod host_reader_race;
mod lazy;
mod models;
mod notifications;
mod quit;
mod shell_config;
mod startup;
mod tray;
mod workspace;

use std::sync::Arc;

use ironclaw_desktop::notify::{Notifier, Silent};
use ironclaw_desktop::types::ConversationView;
use ironclaw_desktop::{AppEvent, Desktop, DesktopOptions, EventSink};
use ironclaw_llm::testing::{Reply, ScriptedServer};
use ironclaw_protocol::{AgentEvent, ApprovalRequest, ConversationId};
use ironclaw_tests::agent::{provider, Wire, EVENT_GUARD, MODEL};
use ironclaw_tests::TestEnv;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

/// The app-wide sink: every app event, in order.
struct Recorder(UnboundedSender<AppEvent>);

impl EventSink for Recorder {
    fn app_event(&self, event: &AppEvent) {
        let _ = self.0.send(event.clone());
    }
}

/// One installation with the desktop core open on it. Field order is drop order: the
/// [`TestEnv`] (which removes the containers by label) goes last.
pub struct App {
    pub desktop: Desktop,
    app_events: UnboundedReceiver<AppEvent>,
    pub app_seen: Vec<AppEvent>,
    events: Option<UnboundedReceiver<AgentEvent>>,
    pub seen: Vec<AgentEvent>,
    pub conversation: ConversationId,
    pub server: ScriptedServer,
    pub env: TestEnv,
}

impl App {
    /// A fresh installation, notifications off.
    pub async fn start() -> Self {
        Self::start_with(Arc::new(Silent)).await
    }

    pub async fn start_with(notifier: Arc<dyn Notifier>) -> Self {
        Self::start_in(TestEnv::new().await, notifier).await
    }

    /// On an installation made beforehand (a policy of its own, say).
    pub async fn start_in(env: TestEnv, notifier: Arc<dyn Notifier>) -> Self {
        let (server, base) = ScriptedServer::start()
            .await
            .expect("start the scripted LLM server");
        let (desktop, app_events) = open(&env, &base, notifier);
        let conversation = desktop.create_conversation().expect("create").id;
        Self {
            desktop,
            app_events,
            app_seen: Vec::new(),
            events: None,
            seen: Vec::new(),
            conversation,
            server,
            env,
        }
    }

    /// Closes the core and opens a new one on the same folders: the app restarted.
    pub async fn restart(&mut self) {
        self.desktop.close().await;
        let base = self.server.base_url();
        let (desktop, app_events) = open(&self.env, &base, Arc::new(Silent));
        self.desktop = desktop;
        self.app_events = app_events;
        self.events = None;
    }

    /// `open_conversation`: the view, and from now on its live events are collected.
    pub async fn open(&mut self) -> ConversationView {
        let (tx, rx) = unbounded_channel();
        let view = self
            .desktop
            .open_conversation(
                self.conversation,
                Arc::new(move |e: &AgentEvent| {
                    let _ = tx.send(e.clone());
                }),
            )
            .await
            .expect("open the conversation");
        self.events = Some(rx);
        view
    }

    pub fn push_all(&self, replies: impl IntoIterator<Item = Reply>) {
        self.server.push_all(replies);
    }

    pub async fn send(&self, text: &str) {
        self.desktop
            .send_message(self.conversation, text, Vec::new())
            .await
            .expect("send");
    }

    pub async fn next_event(
        &mut self,
        what: &str,
        pred: impl Fn(&AgentEvent) -> bool,
    ) -> AgentEvent {
        let deadline = tokio::time::Instant::now() + EVENT_GUARD;
        let rx = self.events.as_mut().expect("open the conversation first");
        loop {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(e)) => {
                    self.seen.push(e.clone());
                    if pred(&e) {
                        return e;
                    }
                }
                Ok(None) => panic!("events ended while waiting for {what}:\n{:#?}", self.seen),
                Err(_) => panic!(
                    "no {what} within {EVENT_GUARD:?}; events:\n{:#?}",
                    self.seen
                ),
            }
        }
    }

    /// Like [`App::next_event`], but gives up (returning `None`) after `within`.
    pub async fn event_within(
        &mut self,
        within: std::time::Duration,
        pred: impl Fn(&AgentEvent) -> bool,
    ) -> Option<AgentEvent> {
        let deadline = tokio::time::Instant::now() + within;
        let rx = self.events.as_mut().expect("open the conversation first");
        loop {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(e)) => {
                    self.seen.push(e.clone());
                    if pred(&e) {
                        return Some(e);
                    }
                }
                Ok(None) | Err(_) => return None,
            }
        }
    }

    /// Waits for the next request and approves it as it is, with the second confirmation when
    /// the request needs one.
    pub async fn approve_next_request(&mut self) -> ApprovalRequest {
        let req = self.approval_request().await;
        let confirmed = req.choices.iter().any(|c| c.needs_confirmation);
        self.desktop
            .decide(
                self.conversation,
                req.approval_id,
                req.code_hash,
                ironclaw_protocol::Decision::ApproveOnce,
                confirmed,
            )
            .await
            .expect("decide");
        req
    }

    pub async fn approval_request(&mut self) -> ApprovalRequest {
        match self
            .next_event("approvalRequested", |e| {
                matches!(e, AgentEvent::ApprovalRequested(_))
            })
            .await
        {
            AgentEvent::ApprovalRequested(r) => r,
            _ => unreachable!(),
        }
    }

    pub async fn turn_end(&mut self) -> AgentEvent {
        self.next_event("turnEnded", |e| matches!(e, AgentEvent::TurnEnded { .. }))
            .await
    }

    pub async fn next_app_event(
        &mut self,
        what: &str,
        pred: impl Fn(&AppEvent) -> bool,
    ) -> AppEvent {
        let deadline = tokio::time::Instant::now() + EVENT_GUARD;
        loop {
            match tokio::time::timeout_at(deadline, self.app_events.recv()).await {
                Ok(Some(e)) => {
                    self.app_seen.push(e.clone());
                    if pred(&e) {
                        return e;
                    }
                }
                Ok(None) => panic!("app events ended while waiting for {what}"),
                Err(_) => panic!(
                    "no {what} within {EVENT_GUARD:?}; app events:\n{:#?}",
                    self.app_seen
                ),
            }
        }
    }

    /// Collects app events for up to `within` (into `app_seen`).
    pub async fn app_event_within(&mut self, within: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + within;
        while let Ok(Some(e)) = tokio::time::timeout_at(deadline, self.app_events.recv()).await {
            self.app_seen.push(e);
        }
    }

    /// Waits until the `pending-approvals` event says `count`.
    pub async fn pending_count_becomes(&mut self, count: u32) {
        self.next_app_event(
            &format!("pending-approvals = {count}"),
            |e| matches!(e, AppEvent::PendingApprovals(p) if p.count == count),
        )
        .await;
    }

    pub fn started_code(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ExecutionStarted { code, .. } => Some(code.clone()),
                _ => None,
            })
            .collect()
    }

    pub fn stdout(&self) -> String {
        ironclaw_tests::agent::stdout_of(&self.seen)
    }
}

fn open(
    env: &TestEnv,
    base: &str,
    notifier: Arc<dyn Notifier>,
) -> (Desktop, UnboundedReceiver<AppEvent>) {
    let (tx, rx) = unbounded_channel();
    let options = DesktopOptions {
        paths: env.paths.clone(),
        model: Some((provider(Wire::OpenAi, base), MODEL.to_string())),
        notifier: Some(notifier),
    };
    let desktop = Desktop::open(options, Arc::new(Recorder(tx))).expect("open the desktop core");
    (desktop, rx)
}
