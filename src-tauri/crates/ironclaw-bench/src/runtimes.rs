//! gVisor next to runc, side by side in one run: the same calls on two sessions of one data
//! folder, one under each runtime, taking turns so background load falls on both alike.

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use ironclaw_protocol::Language;
use ironclaw_sandbox::exec::ExecRequest;
use ironclaw_sandbox::policy::Runtime;
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::{container, Sandbox, SessionOptions};
use tokio_util::sync::CancellationToken;

use crate::report::{Outcome, Row, Section};
use crate::{ironclaw, progress};

/// Issue 53's targets for gVisor, as ratios to runc measured in the same run.
const WARM_RATIO_TARGET: f64 = 2.0;
const STREAM_RATIO_TARGET: f64 = 0.5;
const WRITE_BYTES: u64 = 1 << 30;

#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub round_trips: usize,
    pub warmups: usize,
    pub cold_runs: usize,
    pub stream_bytes: u64,
    pub stream_runs: usize,
    pub write_runs: usize,
}

pub async fn section(template: &Sandbox, plan: Plan, gvisor_registered: bool) -> Outcome {
    let title = "Runtimes: gVisor next to runc".to_string();
    if !gvisor_registered {
        let mut row = Row::time(
            "gvisor",
            "gVisor",
            Err("gVisor is not registered with this engine (set-up registers it)".into()),
        );
        row.judge("measured", None);
        return Outcome {
            section: Section {
                key: "runtimes",
                title,
                ratio_meaning: "gVisor p50 ÷ runc p50",
                rows: vec![row],
            },
            notes: Vec::new(),
            failure: None,
        };
    }
    match measure(template, plan).await {
        Ok(rows) => Outcome {
            section: Section {
                key: "runtimes",
                title,
                ratio_meaning:
                    "gVisor ÷ runc, p50 against p50 (times: lower is better; rates: higher)",
                rows,
            },
            notes: Vec::new(),
            failure: None,
        },
        Err(e) => Outcome::failed("runtimes", title, "gVisor", "measured".into(), &e),
    }
}

/// A client on the template's folders whose every profile asks for `runtime`.
fn client(template: &Sandbox, runtime: &str) -> anyhow::Result<Sandbox> {
    let mut policy = template.policy().clone();
    policy.override_runtime(runtime)?;
    Ok(Sandbox::new(
        template.docker().clone(),
        template.paths().clone(),
        policy,
    ))
}

struct Side {
    name: &'static str,
    sandbox: Sandbox,
    session: SessionName,
    warm: Vec<Duration>,
    cold: Vec<Duration>,
    stream: Vec<Duration>,
    /// The same bytes in 1 MiB writes: what the stream costs besides gVisor's per-call price.
    stream_big: Vec<Duration>,
    write: Vec<Duration>,
    idle_bytes: Vec<f64>,
}

async fn measure(template: &Sandbox, plan: Plan) -> anyhow::Result<Vec<Row>> {
    let mut sides = Vec::new();
    for (name, runtime) in [("runc", "runc"), ("gVisor", "runsc")] {
        sides.push(Side {
            name,
            sandbox: client(template, runtime)?,
            session: SessionName::new(format!("rt-{runtime}"))?,
            warm: Vec::new(),
            cold: Vec::new(),
            stream: Vec::new(),
            stream_big: Vec::new(),
            write: Vec::new(),
            idle_bytes: Vec::new(),
        });
    }
    progress(&format!(
        "runtimes: {} warm round trips, {} cold starts, {} streams of {} MiB and {} writes of 1 GiB, each under runc and gVisor in turns",
        plan.round_trips,
        plan.cold_runs,
        plan.stream_runs,
        plan.stream_bytes >> 20,
        plan.write_runs
    ));
    // Warm round trips in blocks of ten, the sides taking turns.
    let blocks = plan.round_trips.div_ceil(10).max(1);
    for block in 0..blocks {
        for i in order(block) {
            let s = &mut sides[i];
            let warmups = if block == 0 { plan.warmups } else { 0 };
            let n = (plan.round_trips - block * 10).min(10);
            let r = ironclaw::round_trips(&s.sandbox, &s.session, warmups, n)
                .await
                .with_context(|| format!("{} round trips", s.name))?;
            s.warm.extend(r.total);
        }
    }
    // The waiting sandbox's memory, now that both have run the same work.
    for s in &mut sides {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let c = s
            .sandbox
            .container_of(&s.session)
            .await?
            .context("the session has no container")?;
        check_runtime(s, &c)?;
        let bytes = ironclaw::memory_in_use(&s.sandbox, &c.id).await?;
        s.idle_bytes.push(bytes as f64 / f64::from(1u32 << 20));
    }
    for round in 0..plan.stream_runs + 1 {
        for i in order(round) {
            let s = &mut sides[i];
            let (dt, _) = ironclaw::stream_once(&s.sandbox, &s.session, plan.stream_bytes, false)
                .await
                .with_context(|| format!("{} stream", s.name))?;
            if round > 0 {
                s.stream.push(dt);
            }
            let mib = plan.stream_bytes >> 20;
            let big = format!("dd if=/dev/zero bs=1M count={mib} status=none");
            let (dt, _) = ironclaw::stream_with(&s.sandbox, &s.session, &big, mib << 20, false)
                .await
                .with_context(|| format!("{} stream in 1 MiB writes", s.name))?;
            if round > 0 {
                s.stream_big.push(dt);
            }
        }
    }
    let write = ExecRequest::new(
        Language::Shell,
        format!(
            "head -c {WRITE_BYTES} /dev/zero > runtime-bench.bin && rm runtime-bench.bin && echo 2"
        ),
    )
    .timeout(Duration::from_secs(600));
    for round in 0..plan.write_runs {
        for i in order(round) {
            let s = &mut sides[i];
            let t = Instant::now();
            let r = s
                .sandbox
                .exec(
                    &s.session,
                    &SessionOptions::default(),
                    &write,
                    &mut |_| {},
                    &CancellationToken::new(),
                )
                .await?;
            if r.exit_code != 0 {
                bail!("{}: writing 1 GiB failed: {}", s.name, r.stderr);
            }
            s.write.push(t.elapsed());
        }
    }
    for round in 0..plan.cold_runs {
        for i in order(round) {
            let s = &mut sides[i];
            let cold = ironclaw::cold_once(&s.sandbox, &s.session)
                .await
                .with_context(|| format!("{} cold start", s.name))?;
            s.cold.push(cold.first_output);
        }
    }
    for s in &sides {
        if let Some(c) = s.sandbox.container_of(&s.session).await? {
            container::remove(s.sandbox.docker(), &c.id).await?;
        }
    }

    let [runc, gvisor] = &sides[..] else {
        bail!("two sides");
    };
    let mib = plan.stream_bytes >> 20;
    let pair = |key_runc: &'static str,
                key_gvisor: &'static str,
                what: &str,
                make: &dyn Fn(&'static str, String, &Side) -> Row| {
        (
            make(key_runc, format!("{what}, runc"), runc),
            make(key_gvisor, format!("**{what}, gVisor**"), gvisor),
        )
    };
    let mut rows = Vec::new();
    let (a, mut b) = pair(
        "warm_runc",
        "warm_gvisor",
        "warm round trip `print(1+1)`",
        &|k, l, s| Row::time(k, l, Ok(s.warm.clone())),
    );
    ratio(&a, &mut b);
    judge(&mut b, format!("≤ {WARM_RATIO_TARGET}× runc"), |r| {
        r <= WARM_RATIO_TARGET
    });
    rows.extend([a, b]);
    let (a, mut b) = pair(
        "cold_runc",
        "cold_gvisor",
        "cold start, first output of `print(1)`",
        &|k, l, s| Row::time(k, l, Ok(s.cold.clone())),
    );
    ratio(&a, &mut b);
    rows.extend([a, b]);
    let (a, mut b) = pair(
        "stream_runc",
        "stream_gvisor",
        &format!("{mib} MiB of stdout"),
        &|k, l, s| Row::rate(k, l, plan.stream_bytes, Ok(s.stream.clone())),
    );
    ratio(&a, &mut b);
    judge(&mut b, format!("≥ {STREAM_RATIO_TARGET}× runc"), |r| {
        r >= STREAM_RATIO_TARGET
    });
    rows.extend([a, b]);
    // Where the stream's time goes under gVisor: every system call costs far more there (it
    // is caught and answered by gVisor's kernel), and `head` writes 8 KiB at a time.
    let (a, mut b) = pair(
        "stream_big_runc",
        "stream_big_gvisor",
        &format!("{mib} MiB of stdout in 1 MiB writes"),
        &|k, l, s| Row::rate(k, l, mib << 20, Ok(s.stream_big.clone())),
    );
    ratio(&a, &mut b);
    judge(&mut b, format!("≥ {STREAM_RATIO_TARGET}× runc"), |r| {
        r >= STREAM_RATIO_TARGET
    });
    rows.extend([a, b]);
    let (a, mut b) = pair(
        "write_runc",
        "write_gvisor",
        "1 GiB written to the workspace",
        &|k, l, s| Row::rate(k, l, WRITE_BYTES, Ok(s.write.clone())),
    );
    ratio(&a, &mut b);
    rows.extend([a, b]);
    let (a, mut b) = pair(
        "idle_runc",
        "idle_gvisor",
        "memory of a waiting sandbox (engine's count)",
        &|k, l, s| Row::mib(k, l, s.idle_bytes.clone()),
    );
    ratio(&a, &mut b);
    rows.extend([a, b]);
    Ok(rows)
}

/// Who goes first alternates.
fn order(round: usize) -> [usize; 2] {
    if round % 2 == 0 {
        [0, 1]
    } else {
        [1, 0]
    }
}

fn check_runtime(side: &Side, c: &container::ContainerInfo) -> anyhow::Result<()> {
    let want = if side.name == "runc" {
        Runtime::Runc
    } else {
        Runtime::Runsc
    };
    if c.runtime != want {
        bail!(
            "the {} session's container runs under {:?}",
            side.name,
            c.runtime
        );
    }
    Ok(())
}

/// gVisor's p50 over runc's, on gVisor's row (for a rate the same quotient, higher is better).
fn ratio(runc: &Row, gvisor: &mut Row) {
    gvisor.ratio = match (gvisor.p50, runc.p50) {
        (Some(g), Some(r)) if r > 0.0 => Some(g / r),
        _ => None,
    };
}

fn judge(row: &mut Row, target: String, met: impl Fn(f64) -> bool) {
    let m = row.ratio.map(met);
    row.judge(target, m);
}
