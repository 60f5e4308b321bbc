//! A long conversation on a small context window. Two conversations run side by side, turn for
//! turn, on the same scripted model and the same sandbox: one on an 8,192-token window (the
//! transcript is fitted, and compacted when needed), one on a window large enough that nothing
//! is ever fitted. Every turn runs code whose output is a few KiB, then answers. The scripted
//! server enforces the small window with OpenAI's real error, so an overflow is a failed turn.
//!
//! Reported: whether every turn completed; whether the system prompt was in every request
//! (from the server's log); the time of a turn on each window, and of the turns that
//! compacted; the tokens sent per turn on each (the large window's is what the whole
//! transcript would cost).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use ironclaw_agent::{Runtime, SessionConfig, SessionHandle};
use ironclaw_llm::testing::{ContextLimit, Reply, ScriptedCall, ScriptedServer};
use ironclaw_llm::{choose_window, OpenAiCompatible, Provider};
use ironclaw_protocol::{AgentEvent, ApprovalPolicy, Op, TurnOutcome};
use ironclaw_sandbox::Sandbox;
use tokio::sync::mpsc::UnboundedReceiver;

use super::report::{Outcome, Row, Section};

const MODEL: &str = "scripted-model";
const SMALL: u32 = 8_192;
const LARGE: u32 = 1_000_000;
const GUARD: Duration = Duration::from_secs(120);

#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub turns: usize,
}

pub async fn section(sandbox: &Arc<Sandbox>, plan: Plan) -> Outcome {
    let title = format!("A {}-turn conversation on an 8k-token window", plan.turns);
    match measure(sandbox, plan).await {
        Ok((rows, notes)) => Outcome {
            section: Section {
                key: "context",
                title,
                ratio_meaning: "p50 on the 8k window ÷ p50 on a window that never fills",
                rows,
            },
            notes,
            failure: None,
        },
        Err(e) => Outcome::failed(
            "context",
            title,
            "a turn on an 8k window",
            "every turn completes".into(),
            &e,
        ),
    }
}

struct Conversation {
    session: SessionHandle,
    events: UnboundedReceiver<AgentEvent>,
    server: ScriptedServer,
}

#[derive(Default)]
struct Turn {
    took: Duration,
    compacted: bool,
    /// The estimate of the last request's prompt.
    sent_tokens: u64,
}

impl Conversation {
    async fn start(
        sandbox: &Arc<Sandbox>,
        window: u32,
        limit: Option<u64>,
    ) -> anyhow::Result<Self> {
        let (server, base) = ScriptedServer::start()
            .await
            .context("cannot start the scripted model server")?;
        if let Some(tokens) = limit {
            server.enforce_window(ContextLimit {
                tokens,
                bytes_per_token: 3.0,
            });
        }
        let provider: Arc<dyn Provider> =
            Arc::new(OpenAiCompatible::new(&format!("{base}/v1"), None)?);
        let (deps, _, _) = ironclaw_agent::state::open(Runtime {
            sandbox: Arc::clone(sandbox),
            provider,
            model: MODEL.into(),
            context_window: choose_window(Some(window), None, MODEL),
            tool_mode: ironclaw_llm::ToolMode::Native,
            images: false,
            mcp: Default::default(),
        })?;
        let conversation = deps
            .history
            .create_conversation("bench: context window", ApprovalPolicy::NeverAsk)?
            .id;
        let (session, events) =
            ironclaw_agent::start(deps, conversation, SessionConfig::default())?;
        Ok(Conversation {
            session,
            events,
            server,
        })
    }

    async fn turn(&mut self, n: usize) -> anyhow::Result<Turn> {
        // About 3 KiB of output and a paragraph of answer per turn.
        let code = format!("for i in range(50): print(f'row {n} {{i:03d}} ' + 'x' * 50)");
        self.server.push_all([
            Reply::tool_calls(vec![ScriptedCall::new(
                &format!("call_{n}"),
                "run_code",
                [serde_json::json!({"language": "python", "code": code}).to_string()],
            )]),
            Reply::text([format!(
                "Turn {n}: printed the rows. {}",
                "They look fine. ".repeat(20)
            )]),
        ]);
        self.server.push_toolless(Reply::text([format!(
            "Summary up to turn {n}: the user asked for rows of x; each turn printed 50 rows."
        )]));
        let t = Instant::now();
        self.session.send(Op::UserMessage {
            text: format!("turn {n}: print the rows and look at them"),
            images: Vec::new(),
        })?;
        let deadline = tokio::time::Instant::now() + GUARD;
        let mut turn = Turn::default();
        loop {
            let event = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .map_err(|_| anyhow!("turn {n} did not end within {GUARD:?}"))?
                .context("the agent session ended")?;
            match event {
                AgentEvent::TurnEnded { status, error, .. } => {
                    turn.took = t.elapsed();
                    return match status {
                        TurnOutcome::Done => Ok(turn),
                        other => Err(anyhow!(
                            "turn {n} ended {other:?}: {}",
                            error.unwrap_or_default()
                        )),
                    };
                }
                AgentEvent::Compacted { .. } => turn.compacted = true,
                AgentEvent::ContextUsage { used_tokens, .. } => turn.sent_tokens = used_tokens,
                AgentEvent::ApprovalRequested(r) => {
                    bail!(
                        "asked for approval of {:?} in a never-ask conversation",
                        r.code
                    )
                }
                _ => {}
            }
        }
    }

    /// How many chat requests the server got, and how many carried the system prompt.
    fn system_prompt_kept(&self) -> (usize, usize) {
        let requests = self.server.chat_requests();
        let with_tools: Vec<_> = requests
            .iter()
            .filter(|r| r.body["tools"].as_array().is_some_and(|t| !t.is_empty()))
            .collect();
        let kept = with_tools
            .iter()
            .filter(|r| {
                r.body["messages"][0]["content"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("You are IronClaw"))
            })
            .count();
        (with_tools.len(), kept)
    }
}

async fn measure(sandbox: &Arc<Sandbox>, plan: Plan) -> anyhow::Result<(Vec<Row>, Vec<String>)> {
    let mut small = Conversation::start(sandbox, SMALL, Some(u64::from(SMALL))).await?;
    let mut large = Conversation::start(sandbox, LARGE, None).await?;
    let mut small_turns = Vec::with_capacity(plan.turns);
    let mut large_turns = Vec::with_capacity(plan.turns);
    for n in 0..plan.turns {
        // Who goes first alternates, so drift and load fall on both.
        if n % 2 == 0 {
            small_turns.push(small.turn(n).await.context("on the 8k window")?);
            large_turns.push(large.turn(n).await.context("on the large window")?);
        } else {
            large_turns.push(large.turn(n).await.context("on the large window")?);
            small_turns.push(small.turn(n).await.context("on the 8k window")?);
        }
    }
    let (requests, kept) = small.system_prompt_kept();
    let compactions = small_turns.iter().filter(|t| t.compacted).count();
    let times = |turns: &[Turn], which: fn(&Turn) -> bool| -> Vec<Duration> {
        turns.iter().filter(|t| which(t)).map(|t| t.took).collect()
    };
    let tokens =
        |turns: &[Turn]| -> Vec<f64> { turns.iter().map(|t| t.sent_tokens as f64).collect() };
    let mut rows = vec![
        Row::time(
            "context_turn_small",
            "**IronClaw** a turn with a run, on an 8k window (fitted, compacted when full)",
            Ok(times(&small_turns, |_| true)),
        ),
        Row::time(
            "context_turn_large",
            "the same turn on a window that never fills",
            Ok(times(&large_turns, |_| true)),
        ),
        Row::time(
            "context_turn_compacting",
            "the 8k window's turns that compacted (the model's summary included)",
            Ok(times(&small_turns, |t| t.compacted)),
        ),
        Row::tokens(
            "context_tokens_small",
            "prompt tokens sent per turn on the 8k window (estimated)",
            tokens(&small_turns),
        ),
        Row::tokens(
            "context_tokens_large",
            "prompt tokens per turn with nothing fitted (the whole transcript)",
            tokens(&large_turns),
        ),
    ];
    for (a, b) in [(0, 1), (3, 4)] {
        rows[a].ratio = match (rows[a].p50, rows[b].p50) {
            (Some(x), Some(y)) if y > 0.0 => Some(x / y),
            _ => None,
        };
    }
    rows[0].judge(
        format!("{} of {} turns complete", plan.turns, plan.turns),
        Some(small_turns.len() == plan.turns),
    );
    rows[3].judge(
        format!("system prompt in every request ({kept} of {requests})"),
        Some(kept == requests && requests > 0),
    );
    let last_large = large_turns.last().map_or(0, |t| t.sent_tokens);
    let notes = vec![format!(
        "Context window: {} turns on 8,192 tokens, {compactions} compactions; the last turn sent \
         about {} tokens there and {last_large} with nothing fitted.",
        plan.turns,
        small_turns.last().map_or(0, |t| t.sent_tokens),
    )];
    Ok((rows, notes))
}
