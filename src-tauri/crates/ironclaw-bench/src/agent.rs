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

mod render;
mod scripted;

use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use ironclaw_agent::{Deps, Runtime, SessionConfig};
use ironclaw_llm::testing::ScriptedServer;
use ironclaw_llm::{OpenAiCompatible, Provider};
use ironclaw_protocol::ApprovalPolicy;
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::Sandbox;

use super::ironclaw;
use super::report::Outcome;
use super::writes::{RawSync, Replay};
use render::render;
use scripted::Bench;

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
            context_window: ironclaw_llm::choose_window(None, None, MODEL),
            tool_mode: ironclaw_llm::ToolMode::Native,
            images: false,
            mcp: Default::default(),
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
