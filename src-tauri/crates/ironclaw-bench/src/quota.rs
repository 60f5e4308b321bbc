//! What the workspace quota's watch costs: the same runs with it and without it, taking turns so
//! background load falls on both alike. A run that writes nothing pays one `statvfs()` before
//! and after plus a timer task; a 1 GiB write pays a sample every 20 ms and, near no limit, no
//! walk at all.

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use ironclaw_protocol::Language;
use ironclaw_sandbox::exec::ExecRequest;
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::{Sandbox, SessionOptions};
use tokio_util::sync::CancellationToken;

use super::report::{Outcome, Row, Section};

const SESSION: &str = "bench-quota";
const WRITE_BYTES: u64 = 1 << 30;

#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Timed runs that write nothing, per variant.
    pub noop_runs: usize,
    /// Timed 1 GiB writes, per variant.
    pub write_runs: usize,
}

pub async fn section(sandbox: &Sandbox, plan: Plan) -> Outcome {
    let title = "Workspace quota watch".to_string();
    let measured = measure(sandbox, plan).await;
    // Whatever happened, later sections get the watch back.
    sandbox.set_quota_watch_for_bench(true);
    match measured {
        Ok(rows) => Outcome {
            section: Section {
                key: "quota",
                title,
                ratio_meaning: "p50 with the watch ÷ p50 without it (1.00 = no cost)",
                rows,
            },
            notes: Vec::new(),
            failure: None,
        },
        Err(e) => Outcome::failed(
            "quota",
            title,
            "a run with the quota watch",
            "measured".into(),
            &e,
        ),
    }
}

async fn measure(sandbox: &Sandbox, plan: Plan) -> anyhow::Result<Vec<Row>> {
    let session = SessionName::new(SESSION)?;
    let noop = ExecRequest::new(Language::Python, "print(1+1)");
    // The file goes at once, so the workspace never holds more than one of them.
    let write = ExecRequest::new(
        Language::Shell,
        format!(
            "head -c {WRITE_BYTES} /dev/zero > quota-bench.bin && rm quota-bench.bin && echo 2"
        ),
    )
    .timeout(Duration::from_secs(600));
    let mut times = [const { Vec::new() }; 4];
    for (request, runs, warmups, slots) in [
        (&noop, plan.noop_runs, 3, (0, 1)),
        (&write, plan.write_runs, 1, (2, 3)),
    ] {
        for round in 0..warmups + runs {
            // Who goes first alternates.
            for watched in [round % 2 == 0, round % 2 == 1] {
                sandbox.set_quota_watch_for_bench(watched);
                let dt = once(sandbox, &session, request).await?;
                if round >= warmups {
                    times[if watched { slots.0 } else { slots.1 }].push(dt);
                }
            }
        }
    }
    let [noop_on, noop_off, write_on, write_off] = times;
    let mut rows = vec![
        Row::time(
            "noop_watched",
            "**IronClaw** `print(1+1)`, warm session, with the quota watch (as shipped)",
            Ok(noop_on),
        ),
        Row::time("noop_unwatched", "the same without the watch", Ok(noop_off)),
        Row::time(
            "write_1g_watched",
            "**IronClaw** shell writes 1 GiB to the workspace (`head -c 1G /dev/zero > f`, page cache, then `rm`), with the watch",
            Ok(write_on),
        ),
        Row::time("write_1g_unwatched", "the same without the watch", Ok(write_off)),
    ];
    for (watched, unwatched) in [(0, 1), (2, 3)] {
        let ratio = match (rows[watched].p50, rows[unwatched].p50) {
            (Some(on), Some(off)) if off > 0.0 => Some(on / off),
            _ => None,
        };
        rows[watched].ratio = ratio;
    }
    Ok(rows)
}

async fn once(
    sandbox: &Sandbox,
    session: &SessionName,
    request: &ExecRequest,
) -> anyhow::Result<Duration> {
    let cancel = CancellationToken::new();
    let t = Instant::now();
    let result = sandbox
        .exec(
            session,
            &SessionOptions::default(),
            request,
            &mut |_| {},
            &cancel,
        )
        .await
        .context("quota bench run")?;
    let dt = t.elapsed();
    if result.exit_code != 0 || result.stdout.trim() != "2" || result.quota_exceeded.is_some() {
        bail!(
            "the run gave exit code {}, stdout {:?}, stderr {:?}",
            result.exit_code,
            result.stdout,
            result.stderr
        );
    }
    Ok(dt)
}
