//! The performance targets (docs/benchmarks.md#the-sandbox-the-agent-and-the-history) for IronClaw
//! next to plain Docker, and the ratio maths that judges each of those sections against them.

use crate::report::Section;

/// Targets (see docs/benchmarks.md#the-sandbox-the-agent-and-the-history).
const WARM_SPEEDUP_TARGET: f64 = 50.0;
const WARM_P50_TARGET_MS: f64 = 2.0;
const COLD_RATIO_TARGET: f64 = 1.5;
/// Issue 17: a new conversation's first run, with the warm spare, in-process.
const SPARE_FIRST_OUTPUT_TARGET_MS: f64 = 10.0;
/// Issue 17: at least the rate of the engine's own `docker exec`.
const STREAM_RATIO_TARGET: f64 = 1.0;
const STREAM_RSS_TARGET_MIB: f64 = 64.0;

fn p50(section: &Section, key: &str) -> Option<f64> {
    section
        .rows
        .iter()
        .find(|r| r.key == key)
        .and_then(|r| r.p50)
}

pub fn judge_warm(s: &mut Section) {
    let ic = p50(s, "ironclaw");
    for row in &mut s.rows {
        if row.key == "ironclaw" {
            let met = row.p50.map(|v| v < WARM_P50_TARGET_MS);
            row.judge(format!("p50 < {WARM_P50_TARGET_MS} ms"), met);
            continue;
        }
        if !row.key.starts_with("docker_") {
            continue;
        }
        row.ratio = match (row.p50, ic) {
            (Some(base), Some(ic)) if ic > 0.0 => Some(base / ic),
            _ => None,
        };
        let met = row.ratio.map(|r| r >= WARM_SPEEDUP_TARGET);
        row.judge(format!("IronClaw ≥ {WARM_SPEEDUP_TARGET}× faster"), met);
    }
}

pub fn judge_cold(s: &mut Section) {
    let ic = p50(s, "ironclaw_first_output");
    for row in &mut s.rows {
        if row.key == "ironclaw_first_output_spare" {
            let met = row.p50.map(|v| v <= SPARE_FIRST_OUTPUT_TARGET_MS);
            row.judge(format!("p50 ≤ {SPARE_FIRST_OUTPUT_TARGET_MS} ms"), met);
            continue;
        }
        if !row.key.starts_with("docker_") {
            continue;
        }
        row.ratio = match (row.p50, ic) {
            (Some(base), Some(ic)) if base > 0.0 => Some(ic / base),
            _ => None,
        };
        let met = row.ratio.map(|r| r <= COLD_RATIO_TARGET);
        row.judge(format!("IronClaw ≤ {COLD_RATIO_TARGET}× docker run"), met);
    }
}

pub fn judge_stream(s: &mut Section) {
    let ic = p50(s, "ironclaw");
    let api = p50(s, "docker_exec_api");
    for row in &mut s.rows {
        match row.key {
            "docker_exec_api" | "docker_exec_cli" => {
                row.ratio = match (row.p50, ic) {
                    (Some(base), Some(ic)) if base > 0.0 => Some(ic / base),
                    _ => None,
                };
                let met = row.ratio.map(|r| r >= STREAM_RATIO_TARGET);
                row.judge(format!("IronClaw ≥ {STREAM_RATIO_TARGET}× raw"), met);
            }
            "ironclaw_attach" => {
                // What the output socket gains: this path's rate ÷ the raw API's (no target).
                row.ratio = match (row.p50, api) {
                    (Some(attach), Some(api)) if api > 0.0 => Some(attach / api),
                    _ => None,
                };
            }
            "ironclaw_peak_rss" => {
                let met = row.peak_mib.map(|p| p.max < STREAM_RSS_TARGET_MIB);
                row.judge(format!("< {STREAM_RSS_TARGET_MIB} MiB"), met);
            }
            _ => {}
        }
    }
}
