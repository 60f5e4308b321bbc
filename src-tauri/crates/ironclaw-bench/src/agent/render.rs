//! The agent section's table and notes: what IronClaw adds per tool round trip, the durable
//! writes' share of it, and the parts subtracted to get there.

use std::time::Duration;

use super::{Samples, TARGET_MS, TITLE, WRITES_DOMINATE};
use crate::report::{Outcome, Row, Section};
use crate::writes::{AUDIT_APPENDS, HISTORY_COMMITS};

fn p50(samples: &[Duration]) -> f64 {
    crate::stats::Summary::of(samples)
        .map(|s| s.p50)
        .unwrap_or(0.0)
}

pub(super) fn render(s: Samples) -> Outcome {
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
