//! One live agent session driven by the scripted model, and the timed parts of a round that need
//! it: A (a turn with a tool call), B (the same turn without one) and C (the model alone).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use futures_util::StreamExt;
use ironclaw_agent::SessionHandle;
use ironclaw_llm::testing::{Reply, ScriptedCall, ScriptedServer};
use ironclaw_llm::{CancellationToken, ChatRequest, Message, Provider, ToolCall, TurnAccumulator};
use ironclaw_protocol::{AgentEvent, Op, OutputStream, TurnOutcome};
use tokio::sync::mpsc::UnboundedReceiver;

use super::{ANSWER, GUARD, MODEL, PROMPT, RESULT_NOTE};

/// One live session and its scripted model.
pub(super) struct Bench {
    pub(super) session: SessionHandle,
    pub(super) events: UnboundedReceiver<AgentEvent>,
    pub(super) server: ScriptedServer,
    pub(super) provider: Arc<dyn Provider>,
    /// What the agent's transcript holds so far, so the model-alone request has its size.
    pub(super) transcript: Vec<Message>,
    pub(super) system: String,
    pub(super) calls: usize,
}

impl Bench {
    fn tool_call_reply(&mut self) -> (Reply, ToolCall) {
        self.calls += 1;
        let id = format!("call_{}", self.calls);
        let args = [r#"{"language": "python", "#, r#""code": "print(1+1)"}"#];
        let call = ToolCall {
            id: id.clone(),
            name: "run_code".into(),
            arguments: args.concat(),
            echo: None,
        };
        let reply = Reply::tool_calls(vec![ScriptedCall::new(&id, "run_code", args)]);
        (reply, call)
    }

    /// A: user message → `TurnEnded` of a turn with one `run_code` call.
    pub(super) async fn tool_turn(&mut self) -> anyhow::Result<Duration> {
        let (reply, call) = self.tool_call_reply();
        self.server.push_all([reply, Reply::text(ANSWER)]);
        let (took, seen) = self.turn().await?;
        if seen.auto_approved != 1 || seen.exit_codes != [0] || seen.stdout != "2\n" {
            bail!(
                "the run did not go as scripted: {} automatic approvals, exit codes {:?}, stdout {:?}",
                seen.auto_approved,
                seen.exit_codes,
                seen.stdout
            );
        }
        self.check_answer(&seen)?;
        self.transcript.extend([
            Message::user(PROMPT),
            Message::assistant("", vec![call.clone()]),
            Message::tool_result(call.id, RESULT_NOTE, false),
            Message::assistant(ANSWER.concat(), Vec::new()),
        ]);
        Ok(took)
    }

    /// B: the same turn, answered without a tool call.
    pub(super) async fn text_turn(&mut self) -> anyhow::Result<Duration> {
        self.server.push(Reply::text(ANSWER));
        let (took, seen) = self.turn().await?;
        if !seen.exit_codes.is_empty() {
            bail!("a turn without a tool call ran code");
        }
        self.check_answer(&seen)?;
        self.transcript.extend([
            Message::user(PROMPT),
            Message::assistant(ANSWER.concat(), Vec::new()),
        ]);
        Ok(took)
    }

    fn check_answer(&self, seen: &Seen) -> anyhow::Result<()> {
        let left = self.server.remaining_replies();
        if seen.answer != ANSWER.concat() || left != 0 {
            bail!(
                "the turn ended with answer {:?} and {left} scripted replies unused",
                seen.answer
            );
        }
        Ok(())
    }

    async fn turn(&mut self) -> anyhow::Result<(Duration, Seen)> {
        let t = Instant::now();
        self.session.send(Op::UserMessage {
            text: PROMPT.into(),
            images: Vec::new(),
        })?;
        let deadline = tokio::time::Instant::now() + GUARD;
        let mut seen = Seen::default();
        loop {
            let event = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .map_err(|_| anyhow!("the turn did not end within {GUARD:?}"))?
                .context("the agent session ended")?;
            match event {
                AgentEvent::TurnEnded { status, error, .. } => {
                    let took = t.elapsed();
                    return match status {
                        TurnOutcome::Done => Ok((took, seen)),
                        TurnOutcome::Cancelled | TurnOutcome::Failed => Err(anyhow!(
                            "the turn ended {status:?}: {}",
                            error.unwrap_or_default()
                        )),
                    };
                }
                AgentEvent::ApprovalRequested(r) => bail!(
                    "the agent asked for approval of {:?} in a never-ask conversation",
                    r.code
                ),
                AgentEvent::ApprovalResolved {
                    approved: true,
                    auto: true,
                    ..
                } => seen.auto_approved += 1,
                AgentEvent::ExecutionOutput {
                    stream: OutputStream::Stdout,
                    text,
                    ..
                } => seen.stdout.push_str(&text),
                AgentEvent::ExecutionEnded { exit_code, .. } => seen.exit_codes.push(exit_code),
                AgentEvent::AssistantMessage { text, .. } => seen.answer = text,
                AgentEvent::Error { message } => bail!("the agent reported: {message}"),
                _ => {}
            }
        }
    }

    /// C: A's tool-call reply through the same provider, no agent: request out, SSE parsed,
    /// the answer folded into a turn.
    pub(super) async fn model_alone(&mut self) -> anyhow::Result<Duration> {
        let (reply, _) = self.tool_call_reply();
        self.server.push(reply);
        let mut messages = self.transcript.clone();
        messages.push(Message::user(PROMPT));
        let request = ChatRequest {
            model: MODEL.into(),
            system: self.system.clone(),
            messages,
            tools: ironclaw_agent::tools::specs(),
            max_tokens: None,
            temperature: None,
            context_window: None,
        };
        let t = Instant::now();
        let mut stream = self
            .provider
            .stream(&request, CancellationToken::new())
            .await?;
        let mut acc = TurnAccumulator::new();
        while let Some(event) = stream.next().await {
            acc.push(&event?);
        }
        let took = t.elapsed();
        let done = acc.is_done();
        let turn = acc.finish();
        if !done || turn.tool_calls.len() != 1 {
            bail!(
                "the scripted tool-call reply came back as {} tool calls (complete: {done})",
                turn.tool_calls.len()
            );
        }
        Ok(took)
    }
}

#[derive(Default)]
struct Seen {
    auto_approved: usize,
    stdout: String,
    exit_codes: Vec<i32>,
    answer: String,
}
