//! Fixtures for the agent suite: a real agent session (real history, real audit log, the real
//! sandbox of a [`TestEnv`]) talking to a [`ScriptedServer`] over loopback HTTP, in either wire
//! format. Tests push the model's replies, send messages and decisions, and wait for events;
//! every wait has a guard that fails the test with the events seen so far instead of hanging.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ironclaw_agent::{Deps, SessionConfig, SessionHandle};
use ironclaw_llm::testing::{RecordedRequest, Reply, ScriptedCall, ScriptedServer};
use ironclaw_llm::{Anthropic, ApiKey, OpenAiCompatible, Provider};
use ironclaw_protocol::{
    AgentEvent, ApprovalId, ApprovalPolicy, ApprovalRequest, CodeHash, ConversationId, DecidedBy,
    Decision, Op, TurnOutcome,
};
use ironclaw_store::{AuditEntry, FullConversation, RecoveryReport};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::{SessionName, TestEnv};

/// The longest wait for any one event. Generous: a cold container start on a loaded 2-core
/// machine is the slowest thing a test waits for.
pub const EVENT_GUARD: Duration = Duration::from_secs(60);

/// The model name the session asks for.
pub const MODEL: &str = "scripted-model";

/// The context window the tests' model has unless a test sets one: large, so that tests about
/// other things are not also about compaction.
pub const LARGE_WINDOW: u32 = 128_000;

/// Which of the scripted server's wire formats the provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
    /// Ollama's native API.
    Ollama,
}

/// The provider for `wire`, pointed at the scripted server at `base` (no trailing slash).
pub fn provider(wire: Wire, base: &str) -> Arc<dyn Provider> {
    match wire {
        Wire::OpenAi => Arc::new(
            OpenAiCompatible::new(&format!("{base}/v1"), None).expect("OpenAI-compatible provider"),
        ),
        Wire::Anthropic => Arc::new(
            Anthropic::with_base_url(base, ApiKey::new("sk-ant-test").expect("api key"))
                .expect("Anthropic provider"),
        ),
        Wire::Ollama => Arc::new(ironclaw_llm::Ollama::new(base).expect("Ollama provider")),
    }
}

/// One conversation with a live agent session.
///
/// Field order is drop order: the session goes first, the [`TestEnv`] (which removes the
/// containers by label) last.
pub struct Agent {
    pub session: SessionHandle,
    events: UnboundedReceiver<AgentEvent>,
    /// Every event received so far, in order (printed when a wait fails).
    pub seen: Vec<AgentEvent>,
    pub deps: Deps,
    /// The sandbox the session's runtime uses.
    pub sandbox: Arc<ironclaw_sandbox::Sandbox>,
    pub conversation: ConversationId,
    /// What opening the history found unfinished.
    pub recovery: RecoveryReport,
    pub server: ScriptedServer,
    /// The scripted server's base URL (`http://127.0.0.1:<port>`).
    pub base_url: String,
    pub wire: Wire,
    pub env: TestEnv,
}

impl Agent {
    /// A fresh installation and conversation under the default policy (ask for everything).
    pub async fn start(wire: Wire) -> Self {
        Self::start_with(TestEnv::new().await, wire, ApprovalPolicy::AskAlways).await
    }

    /// A new conversation with `policy` in `env`.
    pub async fn start_with(env: TestEnv, wire: Wire, policy: ApprovalPolicy) -> Self {
        Self::open(env, wire, Err(policy), LARGE_WINDOW).await
    }

    /// Like [`Agent::start_with`], on a model that reads no images.
    pub async fn start_text_only(env: TestEnv, wire: Wire, policy: ApprovalPolicy) -> Self {
        Self::open_with(env, wire, Err(policy), LARGE_WINDOW, false).await
    }

    /// A new conversation with `policy` in `env`, on a model whose context window is `window`
    /// tokens.
    pub async fn start_with_window(
        env: TestEnv,
        wire: Wire,
        policy: ApprovalPolicy,
        window: u32,
    ) -> Self {
        Self::open(env, wire, Err(policy), window).await
    }

    /// A new session on a conversation that is already in `env`'s history (IronClaw started
    /// again after it stopped).
    pub async fn resume(env: TestEnv, wire: Wire, conversation: ConversationId) -> Self {
        Self::open(env, wire, Ok(conversation), LARGE_WINDOW).await
    }

    /// Like [`Agent::resume`], on a model whose context window is `window` tokens.
    pub async fn resume_with_window(
        env: TestEnv,
        wire: Wire,
        conversation: ConversationId,
        window: u32,
    ) -> Self {
        Self::open(env, wire, Ok(conversation), window).await
    }

    /// A new conversation with `policy` in `env` whose runtime starts the MCP servers of `mcp`.
    pub async fn start_with_mcp(
        env: TestEnv,
        wire: Wire,
        policy: ApprovalPolicy,
        mcp: ironclaw_mcp::McpConfig,
    ) -> Self {
        Self::open_full(env, wire, Err(policy), LARGE_WINDOW, true, mcp).await
    }

    async fn open(
        env: TestEnv,
        wire: Wire,
        conversation: Result<ConversationId, ApprovalPolicy>,
        window: u32,
    ) -> Self {
        Self::open_with(env, wire, conversation, window, true).await
    }

    async fn open_with(
        env: TestEnv,
        wire: Wire,
        conversation: Result<ConversationId, ApprovalPolicy>,
        window: u32,
        images: bool,
    ) -> Self {
        Self::open_full(env, wire, conversation, window, images, Default::default()).await
    }

    async fn open_full(
        env: TestEnv,
        wire: Wire,
        conversation: Result<ConversationId, ApprovalPolicy>,
        window: u32,
        images: bool,
        mcp: ironclaw_mcp::McpConfig,
    ) -> Self {
        let (server, base_url) = ScriptedServer::start()
            .await
            .expect("start the scripted LLM server");
        // The same installation's sandbox: same folders, same instance label, so the env's
        // label cleanup removes this session's container too.
        let sandbox = Arc::new(env.second_client().await);
        let (deps, recovery, _reconciled) = ironclaw_agent::state::open(ironclaw_agent::Runtime {
            sandbox: sandbox.clone(),
            provider: provider(wire, &base_url),
            model: MODEL.into(),
            context_window: ironclaw_llm::choose_window(Some(window), None, MODEL),
            tool_mode: ironclaw_llm::ToolMode::Auto,
            images,
            mcp: Arc::new(mcp),
        })
        .expect("open state");
        let conversation = match conversation {
            Ok(id) => id,
            Err(policy) => {
                deps.history
                    .create_conversation("agent e2e", policy)
                    .expect("create conversation")
                    .id
            }
        };
        let (session, events) =
            ironclaw_agent::start(deps.clone(), conversation, SessionConfig::default())
                .expect("start the session");
        Self {
            session,
            events,
            seen: Vec::new(),
            deps,
            sandbox,
            conversation,
            recovery,
            server,
            base_url,
            wire,
            env,
        }
    }

    /// Ends this conversation's session (and stops its container) and opens a new
    /// conversation under `policy` on the same installation, model server and sandbox.
    pub async fn start_new_conversation(&mut self, policy: ApprovalPolicy) {
        let old = self.session_name();
        self.conversation = self
            .deps
            .history
            .create_conversation("agent e2e", policy)
            .expect("create conversation")
            .id;
        let (session, events) = ironclaw_agent::start(
            self.deps.clone(),
            self.conversation,
            SessionConfig::default(),
        )
        .expect("start the session");
        // The old handle goes: its actor ends once its channel closes.
        self.session = session;
        self.events = events;
        self.seen.clear();
        let _ = self.sandbox.stop(&old).await;
    }

    /// `docker kill` of this conversation's container (a fault injected mid-run).
    pub async fn kill_container(&self) {
        let id = self
            .env
            .container_id(&self.conversation.to_string())
            .await
            .expect("the session's container");
        self.env
            .docker()
            .kill_container(&id, None::<bollard::query_parameters::KillContainerOptions>)
            .await
            .expect("docker kill");
    }

    pub fn push(&self, reply: Reply) {
        self.server.push(reply);
    }

    pub fn push_all(&self, replies: impl IntoIterator<Item = Reply>) {
        self.server.push_all(replies);
    }

    pub fn op(&self, op: Op) {
        self.session.send(op).expect("the session is running");
    }

    /// Sends a user message with pictures (`(name, bytes)`).
    pub fn send_with_images(&self, text: &str, images: &[(&str, Vec<u8>)]) {
        use base64::Engine as _;
        self.op(Op::UserMessage {
            text: text.into(),
            images: images
                .iter()
                .map(|(name, bytes)| ironclaw_protocol::ImageInput {
                    name: (*name).into(),
                    data: base64::engine::general_purpose::STANDARD.encode(bytes),
                })
                .collect(),
        });
    }

    /// Sends a user message (a new turn, queued behind the running one).
    pub fn send(&self, text: &str) {
        self.op(Op::UserMessage {
            text: text.into(),
            images: Vec::new(),
        });
    }

    pub fn cancel(&self) {
        self.op(Op::Cancel);
    }

    pub fn set_policy(&self, policy: ApprovalPolicy) {
        self.op(Op::SetPolicy { policy });
    }

    /// Waits for the next event `pred` accepts; the events before it are kept in `seen`.
    /// Panics (with everything seen so far) after [`EVENT_GUARD`] or if the session ends.
    pub async fn next_event_matching(
        &mut self,
        what: &str,
        mut pred: impl FnMut(&AgentEvent) -> bool,
    ) -> AgentEvent {
        let deadline = tokio::time::Instant::now() + EVENT_GUARD;
        loop {
            let next = tokio::time::timeout_at(deadline, self.events.recv()).await;
            match next {
                Ok(Some(event)) => {
                    self.seen.push(event.clone());
                    if pred(&event) {
                        return event;
                    }
                }
                Ok(None) => panic!(
                    "the session ended while waiting for {what}; events so far:\n{}",
                    self.dump()
                ),
                Err(_) => panic!(
                    "no {what} within {EVENT_GUARD:?}; events so far:\n{}",
                    self.dump()
                ),
            }
        }
    }

    /// Everything seen so far, one event per line.
    pub fn dump(&self) -> String {
        self.seen
            .iter()
            .map(|e| format!("  {e:?}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Waits for the next approval request.
    pub async fn approval_request(&mut self) -> ApprovalRequest {
        match self
            .next_event_matching("ApprovalRequested", |e| {
                matches!(e, AgentEvent::ApprovalRequested(_))
            })
            .await
        {
            AgentEvent::ApprovalRequested(req) => req,
            _ => unreachable!(),
        }
    }

    /// Waits for the next `DecisionRejected`; returns `(approval_id, message, still_pending)`.
    pub async fn decision_rejected(&mut self) -> (ApprovalId, String, bool) {
        match self
            .next_event_matching("DecisionRejected", |e| {
                matches!(e, AgentEvent::DecisionRejected { .. })
            })
            .await
        {
            AgentEvent::DecisionRejected {
                approval_id,
                message,
                still_pending,
            } => (approval_id, message, still_pending),
            _ => unreachable!(),
        }
    }

    /// Sends a decision naming `id` and `hash` exactly as given (right or wrong).
    pub fn decide_raw(&self, id: ApprovalId, hash: CodeHash, decision: Decision, confirmed: bool) {
        self.op(Op::Decide {
            approval_id: id,
            code_hash: hash,
            decision,
            decided_by: DecidedBy::UserDialog,
            confirmed,
        });
    }

    pub fn decide(&self, req: &ApprovalRequest, decision: Decision, confirmed: bool) {
        self.decide_raw(req.approval_id, req.code_hash, decision, confirmed);
    }

    pub fn approve(&self, req: &ApprovalRequest) {
        self.decide(req, Decision::ApproveOnce, false);
    }

    pub fn deny(&self, req: &ApprovalRequest, reason: &str) {
        self.decide(
            req,
            Decision::Deny {
                reason: Some(reason.into()),
            },
            false,
        );
    }

    pub fn edit(&self, req: &ApprovalRequest, code: &str) {
        self.decide(req, Decision::EditAndApprove { code: code.into() }, false);
    }

    pub fn always(&self, req: &ApprovalRequest) {
        self.decide(req, Decision::AlwaysAllowInSession, false);
    }

    /// The events from now up to and including the next `TurnEnded`.
    pub async fn collect_until_turn_end(&mut self) -> Vec<AgentEvent> {
        let start = self.seen.len();
        self.next_event_matching("TurnEnded", |e| matches!(e, AgentEvent::TurnEnded { .. }))
            .await;
        self.seen[start..].to_vec()
    }

    /// Waits for the end of the turn: its status and error.
    pub async fn turn_end(&mut self) -> (TurnOutcome, Option<String>) {
        match self
            .next_event_matching("TurnEnded", |e| matches!(e, AgentEvent::TurnEnded { .. }))
            .await
        {
            AgentEvent::TurnEnded { status, error, .. } => (status, error),
            _ => unreachable!(),
        }
    }

    /// Waits for the end of a turn that must finish normally.
    /// `Op::UndoRun` for `execution_id` (not forced), waiting until the run is undone.
    pub async fn undo_run(&mut self, execution_id: ironclaw_protocol::ExecutionId) {
        self.op(Op::UndoRun {
            execution_id,
            force: false,
        });
        self.next_event_matching("RunUndone", |e| matches!(e, AgentEvent::RunUndone { .. }))
            .await;
    }

    pub async fn turn_done(&mut self) {
        let (status, error) = self.turn_end().await;
        assert_eq!(
            status,
            TurnOutcome::Done,
            "turn did not finish: {error:?}\nevents:\n{}",
            self.dump()
        );
    }

    /// The chat requests the model received, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.server.chat_requests()
    }

    /// The tool results in the `n`th chat request (0-based).
    pub fn tool_results_in(&self, n: usize) -> Vec<String> {
        let requests = self.requests();
        let request = requests
            .get(n)
            .unwrap_or_else(|| panic!("no chat request #{n}; only {}", requests.len()));
        tool_results(request)
    }

    pub fn history(&self) -> FullConversation {
        self.deps
            .history
            .get_full_conversation(self.conversation)
            .expect("read the conversation")
    }

    /// The sandbox session this conversation runs its code in.
    pub fn session_name(&self) -> SessionName {
        SessionName::new(self.conversation.to_string()).expect("session name")
    }

    /// The host folder mounted at `/workspace` (the session must have run code).
    pub fn workspace(&self) -> PathBuf {
        self.sandbox
            .workspace(&self.session_name())
            .expect("the session has a workspace")
    }

    /// Whether a container was ever made for this conversation.
    pub async fn has_container(&self) -> bool {
        self.env
            .container_id(&self.conversation.to_string())
            .await
            .is_some()
    }

    pub fn audit_path(&self) -> PathBuf {
        ironclaw_agent::state::audit_path(&self.env.paths)
    }

    pub fn audit_entries(&self) -> Vec<AuditEntry> {
        audit_entries(&self.audit_path())
    }
}

/// The tool results in one recorded chat request, in either wire format: OpenAI `tool`
/// messages, or Anthropic `tool_result` blocks.
pub fn tool_results(request: &RecordedRequest) -> Vec<String> {
    let mut out = Vec::new();
    let Some(messages) = request.body.get("messages").and_then(Value::as_array) else {
        return out;
    };
    for m in messages {
        if m.get("role").and_then(Value::as_str) == Some("tool") {
            out.push(text_of(m.get("content")));
        }
        if let Some(blocks) = m.get("content").and_then(Value::as_array) {
            for b in blocks {
                if b.get("type").and_then(Value::as_str) == Some("tool_result") {
                    out.push(text_of(b.get("content")));
                }
            }
        }
    }
    out
}

fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// A `run_code` call whose arguments arrive in three pieces, as a streaming model sends them.
pub fn run_code(id: &str, language: &str, code: &str) -> ScriptedCall {
    let args = serde_json::json!({"language": language, "code": code}).to_string();
    let (a, rest) = args.split_at(args.len() / 3);
    let (b, c) = rest.split_at(rest.len() / 2);
    ScriptedCall::new(id, "run_code", [a, b, c])
}

/// A model turn that only asks to run `code`.
pub fn asks_to_run(id: &str, language: &str, code: &str) -> Reply {
    Reply::tool_calls(vec![run_code(id, language, code)])
}

pub fn says(text: &str) -> Reply {
    Reply::text([text])
}

/// Every entry of an audit log, parsed.
pub fn audit_entries(path: &Path) -> Vec<AuditEntry> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("audit line {l}: {e}")))
        .collect()
}

/// Files anywhere under `dir` named `name`.
pub fn find_files_named(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            } else if entry.file_name() == name {
                found.push(path);
            }
        }
    }
    found
}

/// The code of every `ExecutionStarted` among `events`, in order.
pub fn started_code(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ExecutionStarted { code, .. } => Some(code.clone()),
            _ => None,
        })
        .collect()
}

/// Everything the executions among `events` printed on stdout, concatenated.
pub fn stdout_of(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ExecutionOutput {
                stream: ironclaw_protocol::OutputStream::Stdout,
                text,
                ..
            } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

pub fn approval_requests(events: &[AgentEvent]) -> Vec<ApprovalRequest> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ApprovalRequested(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// The text of every complete assistant message among `events`.
pub fn assistant_texts(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::AssistantMessage { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// Tool calls in a recorded chat request that no tool result answers (both wire formats).
pub fn unanswered_tool_calls(request: &RecordedRequest) -> Vec<String> {
    let mut asked = Vec::new();
    let mut answered = Vec::new();
    let messages = request
        .body
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let id = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    for m in &messages {
        for call in m
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            asked.extend(id(call, "id"));
        }
        answered.extend(id(m, "tool_call_id"));
        for block in m
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match block.get("type").and_then(Value::as_str) {
                Some("tool_use") => asked.extend(id(block, "id")),
                Some("tool_result") => answered.extend(id(block, "tool_use_id")),
                _ => {}
            }
        }
    }
    asked.retain(|a| !answered.contains(a));
    asked
}

/// Each `ExecutionEnded`: the run, what it changed, and why it cannot be undone (if so).
pub fn ended_runs(
    events: &[AgentEvent],
) -> Vec<(
    ironclaw_protocol::ExecutionId,
    Vec<ironclaw_protocol::FileChange>,
    Option<String>,
)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ExecutionEnded {
                execution_id,
                changes,
                not_undoable,
                ..
            } => Some((*execution_id, changes.clone(), not_undoable.clone())),
            _ => None,
        })
        .collect()
}

/// Each `ExecutionEnded` whose changes could not be recorded: the run, and why.
pub fn unrecorded_runs(events: &[AgentEvent]) -> Vec<(ironclaw_protocol::ExecutionId, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ExecutionEnded {
                execution_id,
                changes_unknown: Some(why),
                ..
            } => Some((*execution_id, why.clone())),
            _ => None,
        })
        .collect()
}

/// `ironclaw chat` as a real process in `env`: `args` after `chat`, stdin closed. Returns its
/// stdout and stderr once it has exited, which it must do successfully within
/// [`EVENT_GUARD`].
pub async fn chat_cli(env: &TestEnv, args: &[&str]) -> (String, String) {
    let (status, stdout, stderr) = chat_cli_status(env, args).await;
    assert!(status.success(), "stdout: {stdout}\nstderr: {stderr}");
    (stdout, stderr)
}

/// [`chat_cli`] for a chat that may fail: its exit status too.
pub async fn chat_cli_status(
    env: &TestEnv,
    args: &[&str],
) -> (std::process::ExitStatus, String, String) {
    let mut cmd = env.cli();
    cmd.arg("chat")
        .args(args)
        .stdin(std::process::Stdio::null());
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(true);
    let out = tokio::time::timeout(EVENT_GUARD, cmd.output())
        .await
        .expect("ironclaw chat finished")
        .expect("run ironclaw chat");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status, stdout, stderr)
}

/// A model turn that only asks to look at the workspace picture `path`.
pub fn asks_to_view(id: &str, path: &str) -> Reply {
    let args = serde_json::json!({ "path": path }).to_string();
    Reply::tool_calls(vec![ScriptedCall::new(id, "view_image", [args.as_str()])])
}

/// A model turn that only calls the MCP tool the model knows as `name` with `arguments`.
pub fn asks_mcp(id: &str, name: &str, arguments: serde_json::Value) -> Reply {
    let args = arguments.to_string();
    Reply::tool_calls(vec![ScriptedCall::new(id, name, [args.as_str()])])
}

/// Where scripts/mcp-test-servers.sh installed the real MCP server `name` (from PyPI), whose
/// Python module is `module`.
pub fn mcp_test_server(name: &str, module: &str) -> PathBuf {
    let dir = std::env::var_os("IRONCLAW_TEST_MCP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME").unwrap_or_default();
            PathBuf::from(home).join(".cache/ironclaw/mcp-test-servers")
        });
    let packages = dir.join(name);
    assert!(
        packages.join(module).is_dir(),
        "{} has no {module}: run scripts/mcp-test-servers.sh (scripts/test.sh does)",
        packages.display()
    );
    packages
}

/// The real `mcp-server-time` as a server of `mcp.yaml`, run with Python in its sandbox
/// container.
pub fn time_server() -> ironclaw_mcp::McpConfig {
    let packages = mcp_test_server("time", "mcp_server_time");
    let yaml = format!(
        "servers:\n  time:\n    command: [python3, -m, mcp_server_time, --local-timezone, Etc/UTC]\n    packages: {}\n",
        packages.display()
    );
    ironclaw_mcp::McpConfig::parse(&yaml, Path::new("/test/mcp.yaml")).expect("the test's mcp.yaml")
}

/// A model turn that only asks to fetch `url`.
pub fn asks_to_fetch(id: &str, url: &str) -> Reply {
    let args = serde_json::json!({ "url": url }).to_string();
    Reply::tool_calls(vec![ScriptedCall::new(id, "fetch_url", [args.as_str()])])
}
