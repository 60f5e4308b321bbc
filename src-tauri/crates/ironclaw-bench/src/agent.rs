//! Agent overhead per tool round trip: what IronClaw's agent adds around one `run_code` call,
//! beyond the model's own time and the sandbox's own time.
//!
//! A scripted model (real HTTP on loopback, OpenAI's wire format) drives a real agent session
//! (`ironclaw_agent::start`, the real history and audit log in the bench's data folder, the
//! bench's sandbox) in a conversation whose policy is `never-ask`, so approvals are granted by
//! the policy and nobody waits. Each round times four things, in a rotating order so drift and
//! background load fall on all of them alike:
//!
//! - A. a turn in which the model calls `run_code` with `print(1+1)`, then answers in text;
//! - B. a turn in which the model gives the same text answer at once;
//! - C. the model alone: A's tool-call reply streamed through the same provider, with a request
//!   of the same size, no agent;
//! - D. the sandbox alone: `Sandbox::exec` of `print(1+1)` on the agent's own warm session.
//!
//! A − B is one tool round trip end to end: the per-turn work (saving the person's message,
//! opening and closing the turn, the final answer) is in both and cancels out. A − B − C − D is
//! what IronClaw adds: decoding the call, the approval gate, the history rows and audit entries
//! (each one durably written), events, and the bookkeeping of the extra model request. Durable
//! writes are part of it on purpose; W replays them alone ([`super::writes`]) to show their
//! share on this disk.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use futures_util::StreamExt;
use ironclaw_agent::{Deps, Runtime, SessionConfig, SessionHandle};
use ironclaw_llm::testing::{Reply, ScriptedCall, ScriptedServer};
use ironclaw_llm::{
    CancellationToken, ChatRequest, Message, OpenAiCompatible, Provider, ToolCall, TurnAccumulator,
};
use ironclaw_protocol::{AgentEvent, ApprovalPolicy, Op, OutputStream, TurnOutcome};
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::Sandbox;
use tokio::sync::mpsc::UnboundedReceiver;

use super::ironclaw;
use super::report::{Outcome, Row, Section};
use super::writes::{RawSync, Replay, AUDIT_APPENDS, HISTORY_COMMITS};

pub const TARGET_MS: f64 = 5.0;
const MODEL: &str = "scripted-model";
const PROMPT: &str = "What is 1+1? Use Python.";
const ANSWER: [&str; 2] = ["1+1 is ", "2."];
/// What the agent tells the model after an automatically approved run (for same-size requests).
pub const RESULT_NOTE: &str =
    "This run was approved automatically by the session's policy.\nExit code: 0\nstdout:\n2\n";
/// Conversations are kept to chat-like lengths: the whole transcript goes out with every model
/// request, and the scripted server keeps every request it gets.
const ROUNDS_PER_CONVERSATION: usize = 25;
/// The longest wait for one turn (the first one starts the container).
const GUARD: Duration = Duration::from_secs(120);
/// Beyond this share of the overhead, durable writes get a note of their own.
const WRITES_DOMINATE: f64 = 0.5;

#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub rounds: usize,
    pub warmups: usize,
}

#[derive(Default)]
struct Samples {
    with_tool: Vec<Duration>,
    without_tool: Vec<Duration>,
    model: Vec<Duration>,
    exec: Vec<Duration>,
    /// W: the round trip's durable writes replayed alone.
    writes: Vec<Duration>,
    /// F: one raw append + fdatasync on the same disk.
    fdatasync: Vec<Duration>,
    /// A − B − C − D of each round, in ms.
    adds: Vec<f64>,
    /// Audit entries one tool round trip wrote (counted in the log).
    audit_per_round_trip: f64,
}

pub async fn section(sandbox: &Arc<Sandbox>, plan: Plan) -> Outcome {
    match measure(sandbox, plan).await {
        Ok(samples) => render(samples),
        Err(e) => Outcome::failed(
            "agent_round_trip",
            TITLE.into(),
            "**IronClaw adds per tool round trip**",
            format!("< {TARGET_MS} ms"),
            &e,
        ),
    }
}

const TITLE: &str = "Agent overhead per tool round trip";

/// One live session and its scripted model.
struct Bench {
    session: SessionHandle,
    events: UnboundedReceiver<AgentEvent>,
    server: ScriptedServer,
    provider: Arc<dyn Provider>,
    /// What the agent's transcript holds so far, so the model-alone request has its size.
    transcript: Vec<Message>,
    system: String,
    calls: usize,
}

async fn measure(sandbox: &Arc<Sandbox>, plan: Plan) -> anyhow::Result<Samples> {
    let (profile_name, profile) = sandbox.policy().profile(None)?;
    let system = ironclaw_agent::prompt::system_prompt(profile_name, profile);
    let audit_path = ironclaw_agent::state::audit_path(sandbox.paths());
    let mut raw = RawSync::new(&sandbox.paths().data_dir.join("bench-fdatasync.probe"))?;
    let mut shared: Option<(Deps, Replay)> = None;
    let mut s = Samples::default();
    let mut audit_entries = 0;
    let mut round = 0;
    while round < plan.rounds {
        let (server, base) = ScriptedServer::start()
            .await
            .context("cannot start the scripted model server")?;
        let provider: Arc<dyn Provider> =
            Arc::new(OpenAiCompatible::new(&format!("{base}/v1"), None)?);
        let runtime = Runtime {
            sandbox: Arc::clone(sandbox),
            provider: Arc::clone(&provider),
            model: MODEL.into(),
        };
        let deps = match &shared {
            Some((deps, _)) => Deps {
                runtime: Arc::new(runtime),
                ..deps.clone()
            },
            None => {
                let (deps, _, _) = ironclaw_agent::state::open(runtime)?;
                let replay = Replay::new(
                    Arc::clone(&deps.history),
                    &sandbox.paths().data_dir.join("bench-replay-audit.log"),
                )?;
                shared = Some((deps.clone(), replay));
                deps
            }
        };
        let Some((_, replay)) = &shared else {
            bail!("the agent's state is not open");
        };
        let conversation = deps
            .history
            .create_conversation("bench: agent overhead", ApprovalPolicy::NeverAsk)?
            .id;
        let (session, events) =
            ironclaw_agent::start(deps.clone(), conversation, SessionConfig::default())?;
        let mut bench = Bench {
            session,
            events,
            server,
            provider,
            transcript: Vec::new(),
            system: system.clone(),
            calls: 0,
        };
        // The agent's sandbox session is named after the conversation; D runs on the same one.
        let sandbox_session = SessionName::new(conversation.to_string())?;

        // The first tool turn starts the conversation's container.
        for _ in 0..plan.warmups {
            bench
                .tool_turn()
                .await
                .context("warm-up turn with a tool call")?;
            bench
                .text_turn()
                .await
                .context("warm-up turn without a tool call")?;
            bench.model_alone().await.context("warm-up model call")?;
            bare_exec(sandbox, &sandbox_session).await?;
        }
        let audit_before = count_lines(&audit_path)?;
        let end = plan.rounds.min(round + ROUNDS_PER_CONVERSATION);
        for r in round..end {
            let (mut a, mut b, mut c, mut d) = (None, None, None, None);
            for part in order(r) {
                match part {
                    0 => a = Some(bench.tool_turn().await.context("turn with a tool call")?),
                    1 => {
                        b = Some(
                            bench
                                .text_turn()
                                .await
                                .context("turn without a tool call")?,
                        )
                    }
                    2 => c = Some(bench.model_alone().await.context("the model alone")?),
                    _ => d = Some(bare_exec(sandbox, &sandbox_session).await?),
                }
            }
            let (Some(a), Some(b), Some(c), Some(d)) = (a, b, c, d) else {
                bail!("a round missed one of its parts");
            };
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            s.adds.push(ms(a) - ms(b) - ms(c) - ms(d));
            s.with_tool.push(a);
            s.without_tool.push(b);
            s.model.push(c);
            s.exec.push(d);
            s.writes
                .push(replay.once(r).context("replaying the writes")?);
            s.fdatasync.push(raw.once().context("fdatasync probe")?);
        }
        audit_entries += count_lines(&audit_path)?.saturating_sub(audit_before);
        round = end;
        // Ends the session; its container goes too, so idle ones do not pile up.
        drop(bench);
        ironclaw::remove_session_container(sandbox, &sandbox_session).await?;
    }
    s.audit_per_round_trip = audit_entries as f64 / plan.rounds.max(1) as f64;
    Ok(s)
}

/// Who goes first in a round: A, B, C, D take turns.
fn order(round: usize) -> [usize; 4] {
    let r = round % 4;
    [r, (r + 1) % 4, (r + 2) % 4, (r + 3) % 4]
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
        };
        let reply = Reply::tool_calls(vec![ScriptedCall::new(&id, "run_code", args)]);
        (reply, call)
    }

    /// A: user message → `TurnEnded` of a turn with one `run_code` call.
    async fn tool_turn(&mut self) -> anyhow::Result<Duration> {
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
    async fn text_turn(&mut self) -> anyhow::Result<Duration> {
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
    async fn model_alone(&mut self) -> anyhow::Result<Duration> {
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

/// D: the sandbox alone, on the agent's warm session.
async fn bare_exec(sandbox: &Sandbox, session: &SessionName) -> anyhow::Result<Duration> {
    let rt = ironclaw::round_trips(sandbox, session, 0, 1)
        .await
        .context("bare sandbox run")?;
    rt.total.first().copied().context("no bare sandbox run")
}

fn count_lines(path: &std::path::Path) -> anyhow::Result<usize> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(bytes.iter().filter(|b| **b == b'\n').count()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(anyhow::Error::new(e).context(format!("cannot read {}", path.display()))),
    }
}

fn p50(samples: &[Duration]) -> f64 {
    super::stats::Summary::of(samples)
        .map(|s| s.p50)
        .unwrap_or(0.0)
}

fn render(s: Samples) -> Outcome {
    let from_p50s = p50(&s.with_tool) - p50(&s.without_tool) - p50(&s.model) - p50(&s.exec);
    let exec_p50 = p50(&s.exec);
    let writes_p50 = p50(&s.writes);
    let fdatasync_p50 = p50(&s.fdatasync);
    let rest: Vec<f64> = s
        .adds
        .iter()
        .zip(&s.writes)
        .map(|(a, w)| a - w.as_secs_f64() * 1e3)
        .collect();

    let mut adds = Row::values(
        "ironclaw_adds",
        "**IronClaw adds per tool round trip** = A − B − C − D, per round (A–D below); durable history and audit writes included",
        s.adds,
    );
    let met = adds.p50.map(|v| v < TARGET_MS);
    adds.judge(format!("p50 < {TARGET_MS} ms"), met);
    adds.ratio = adds.p50.filter(|_| exec_p50 > 0.0).map(|v| v / exec_p50);
    adds.note = Some(format!("A−B−C−D of the p50s: {from_p50s:.2} ms"));
    let total = adds.p50.unwrap_or(0.0);
    let mut writes = Row::time(
        "durable_writes",
        format!(
            "(W) of which durable writes: the {HISTORY_COMMITS} history commits (own transaction each; WAL, synchronous=NORMAL, or FULL with IRONCLAW_SYNC=full) and {AUDIT_APPENDS} audit appends (fdatasync each only with IRONCLAW_SYNC=full) of one tool round trip, replayed alone on the same files"
        ),
        Ok(s.writes),
    );
    if total > 0.0 {
        writes.note = Some(format!(
            "{:.0}% of what IronClaw adds (p50s)",
            100.0 * writes_p50 / total
        ));
    }
    let rows = vec![
        adds,
        writes,
        Row::values(
            "rest",
            "of which the rest, A−B−C−D−W per round: decoding the call, approval gate, risk check, events, transcript, HTTP bookkeeping (a difference of five timings: noisy)",
            rest,
        ),
        Row::time(
            "turn_with_tool",
            "(A) user message → `TurnEnded`, policy never-ask: model asks for `run_code` `print(1+1)`, the agent runs it, the model answers (2 model requests)",
            Ok(s.with_tool),
        ),
        Row::time(
            "turn_without_tool",
            "(B) user message → `TurnEnded`, the model answers at once (1 model request); subtracted",
            Ok(s.without_tool),
        ),
        Row::time(
            "model_alone",
            "(C) the scripted model alone: A's tool-call reply over loopback HTTP (SSE) through the same OpenAI-compatible provider, same request size, no agent; subtracted",
            Ok(s.model),
        ),
        Row::time(
            "bare_exec",
            "(D) `Sandbox::exec` of `print(1+1)` on the agent's own warm session; subtracted",
            Ok(s.exec),
        ),
        {
            let mut f = Row::time(
                "disk_fdatasync",
                "(F) the disk alone: one 128-byte append + `fdatasync` in the data folder, no IronClaw code; not subtracted",
                Ok(s.fdatasync),
            );
            f.note = Some(format!(
                "a tool round trip waits for {} of these",
                HISTORY_COMMITS + AUDIT_APPENDS
            ));
            f
        },
    ];
    let mut notes = Vec::new();
    if total > 0.0 && writes_p50 >= WRITES_DOMINATE * total {
        notes.push(format!(
            "Agent overhead: durable writes dominate. IronClaw adds {total:.2} ms per tool round trip (p50); replaying only its {HISTORY_COMMITS} SQLite commits and {AUDIT_APPENDS} audit-log appends (each synced to disk when IRONCLAW_SYNC=full) on the same files takes {writes_p50:.2} ms (W, p50; {}% of it). One bare fdatasync on this disk (F) takes {fdatasync_p50:.2} ms, and a round trip waits for {}: the figure follows the disk's sync latency.",
            (100.0 * writes_p50 / total).round(),
            HISTORY_COMMITS + AUDIT_APPENDS
        ));
    }
    if (s.audit_per_round_trip - AUDIT_APPENDS as f64).abs() > 0.01 {
        notes.push(format!(
            "Agent overhead: the agent wrote {:.2} audit entries per tool round trip, but W replays {AUDIT_APPENDS}: bench/writes.rs no longer mirrors the agent.",
            s.audit_per_round_trip
        ));
    }
    Outcome {
        section: Section {
            key: "agent_round_trip",
            title: TITLE.into(),
            ratio_meaning: "what IronClaw adds ÷ the bare sandbox run (D), p50",
            rows,
        },
        notes,
        failure: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_leads_a_round_in_turn() {
        let firsts: Vec<usize> = (0..4).map(|r| order(r)[0]).collect();
        assert_eq!(firsts, vec![0, 1, 2, 3]);
        for r in 0..8 {
            let mut parts = order(r);
            parts.sort_unstable();
            assert_eq!(parts, [0, 1, 2, 3]);
        }
    }
}
