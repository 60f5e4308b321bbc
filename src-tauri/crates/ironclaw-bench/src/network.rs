//! Allowlist network mode: a download and fresh-connection requests from a sandbox through
//! IronClaw's relay and egress proxy, next to a plain container fetching the same from the same
//! private lab network directly (`ironclaw_sandbox::network::bench`, which alternates the two
//! sides round by round). The lab network, its servers, the session, relay and egress networks
//! are all removed afterwards; `cleanup` in `mod.rs` removes them too after an error.

use std::time::Duration;

use anyhow::Context;
use ironclaw_sandbox::network::bench::{
    self, BenchOptions, ADDED_LATENCY_TARGET_MS, THROUGHPUT_TARGET,
};
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::Sandbox;

use super::report::{Outcome, Row, Section};

const SESSION: &str = "bench-network";

#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub download_mib: u64,
    pub rounds: usize,
    pub requests: usize,
}

pub async fn section(sandbox: &Sandbox, plan: Plan) -> Outcome {
    let title = format!("Allowlist network: {} MiB download", plan.download_mib);
    match measure(sandbox, plan).await {
        Ok(section) => Outcome {
            section,
            notes: Vec::new(),
            failure: None,
        },
        Err(e) => Outcome::failed(
            "network",
            title,
            "**IronClaw** download through the egress proxy",
            format!("≥ {THROUGHPUT_TARGET}× direct"),
            &e,
        ),
    }
}

async fn measure(sandbox: &Sandbox, plan: Plan) -> anyhow::Result<Section> {
    let session = SessionName::new(SESSION)?;
    let options = BenchOptions {
        download_mib: plan.download_mib,
        runs: u32::try_from(plan.rounds).unwrap_or(u32::MAX),
        requests: u32::try_from(plan.requests).unwrap_or(u32::MAX),
    };
    let measured = bench::run(sandbox, &session, &options).await;
    // Torn down whatever happened: the session's container, then relay and networks.
    let removed = sandbox.remove(&session, true).await;
    let torn_down = sandbox.network().teardown().await;
    let report = measured.context("network benchmark")?;
    removed.context("removing the network benchmark's session")?;
    torn_down.context("removing the egress relay and networks")?;

    let bytes = plan.download_mib << 20;
    let as_durations = |rates: &[f64]| -> Vec<Duration> {
        rates
            .iter()
            .filter(|r| r.is_finite() && **r > 0.0)
            .map(|r| Duration::from_secs_f64(plan.download_mib as f64 / r))
            .collect()
    };
    let mut proxied = Row::rate(
        "network_proxied",
        "**IronClaw** allowlist sandbox, download through relay and egress proxy",
        bytes,
        Ok(as_durations(&report.samples.proxied_mib_s)),
    );
    proxied.ratio = Some(report.throughput_ratio);
    proxied.judge(
        format!("≥ {THROUGHPUT_TARGET}× direct"),
        Some(report.throughput_ratio >= THROUGHPUT_TARGET),
    );
    let direct = Row::rate(
        "network_direct",
        "plain container on the same lab network, direct download",
        bytes,
        Ok(as_durations(&report.samples.direct_mib_s)),
    );
    let mut proxied_request = Row::values(
        "network_proxied_request",
        "**IronClaw** small request on a fresh connection through the proxy",
        report.samples.proxied_request_ms.clone(),
    );
    proxied_request.note = Some(format!(
        "{:+.2} ms per new connection over direct (p50)",
        report.added_latency_ms
    ));
    proxied_request.judge(
        format!("≤ +{ADDED_LATENCY_TARGET_MS} ms"),
        Some(report.added_latency_ms <= ADDED_LATENCY_TARGET_MS),
    );
    let direct_request = Row::values(
        "network_direct_request",
        "plain container, small request on a fresh connection, direct",
        report.samples.direct_request_ms.clone(),
    );
    Ok(Section {
        key: "network",
        title: format!(
            "Allowlist network: {} MiB download, {} fresh-connection requests",
            plan.download_mib, plan.requests
        ),
        ratio_meaning: "median over alternating rounds of proxied ÷ direct download throughput",
        rows: vec![proxied, direct, proxied_request, direct_request],
    })
}
