//! IronClaw next to plain Docker on the same machine: the warm round trip, streaming stdout and
//! the cold start, each variant timed in turns with the Docker API and docker CLI baselines.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context;
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::{container, Sandbox};

use crate::baseline::{self, DockerCli};
use crate::plan::Plan;
use crate::report::{Row, Section};
use crate::targets::{judge_cold, judge_stream, judge_warm};
use crate::turns::{blocking, reason, rotation, rotation_of, Series};
use crate::{ironclaw, progress, rss, SESSION};

/// The warm round trip; also returns the id of the session's container, which the stream
/// baselines reuse.
pub async fn warm_round_trip(
    sandbox: &Arc<Sandbox>,
    session: &SessionName,
    cli: Option<&DockerCli>,
    cli_skip: &'static str,
    plan: &Plan,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<(Section, String)> {
    let docker = sandbox.docker();
    let instance = sandbox.instance().to_string();

    // -- 1. warm round trip -------------------------------------------------------------------
    progress(&format!(
        "warm round trip: IronClaw, {} runs (the first run creates the container)",
        plan.iterations
    ));
    let ic = ironclaw::round_trips(sandbox, session, plan.round_trip_warmups, plan.iterations)
        .await
        .context("IronClaw round trips")?;
    let found = container::find(docker, &instance, SESSION)
        .await?
        .context("the bench session has no container")?;
    let id = found.id;
    progress("warm round trip: docker exec through the Docker API");
    let api = baseline::exec_round_trips_api(
        docker,
        &id,
        plan.round_trip_warmups.min(3),
        plan.iterations,
    )
    .await
    .map_err(reason);
    let cli_rt = match cli {
        Some(cli) => {
            progress("warm round trip: docker exec through the CLI");
            let (cli, id, stop, n) = (cli.clone(), id.clone(), stop.clone(), plan.iterations);
            let w = plan.round_trip_warmups.min(3);
            blocking(move || cli.exec_round_trips(&id, w, n, &stop))
                .await
                .map_err(reason)
        }
        None => Err(cli_skip.to_string()),
    };
    let mut warm = Section {
        key: "warm_round_trip",
        title: "Warm round trip `print(1+1)`".into(),
        ratio_meaning: "docker exec p50 ÷ IronClaw p50 (how many times faster IronClaw is)",
        rows: vec![
            Row::time(
                "ironclaw",
                "**IronClaw** `Sandbox::exec`, warm session",
                Ok(ic.total),
            ),
            Row::time(
                "ironclaw_in_container",
                "of which inside the container (the supervisor's own timing of the cell)",
                Ok(ic.in_container),
            ),
            Row::time(
                "docker_exec_api",
                "`docker exec C python3 -c 'print(1+1)'`, same container, Docker API (bollard: create/start/inspect exec)",
                api,
            ),
            Row::time(
                "docker_exec_cli",
                "`docker exec C python3 -c 'print(1+1)'`, same container, docker CLI",
                cli_rt,
            ),
        ],
    };
    judge_warm(&mut warm);

    Ok((warm, id))
}

/// Streaming stdout, on the warm container.
pub async fn stream(
    sandbox: &Arc<Sandbox>,
    session: &SessionName,
    id: &str,
    cli: Option<&DockerCli>,
    cli_skip: &'static str,
    plan: &Plan,
) -> anyhow::Result<Section> {
    let docker = sandbox.docker();

    // -- 3. streaming (before the cold starts, which remove the warm container) ---------------
    // Few, long runs whose speed swings with whatever else the machine does: the variants take
    // turns, in a rotating order, so background load falls on all of them alike.
    let mib = plan.stream_bytes >> 20;
    let bytes = plan.stream_bytes;
    progress(&format!(
        "stream: {} × {mib} MiB of stdout per variant, interleaved",
        plan.stream_runs
    ));
    let mut ic_stream = Series::ok();
    let mut ic_peaks = Vec::new();
    let mut api_stream = Series::ok();
    let mut api_peaks = Vec::new();
    let mut cli_stream = Series::for_cli(cli, cli_skip);
    let mut attach_stream = Series::ok();
    for round in 0..plan.stream_warmups + plan.stream_runs {
        let timed = round >= plan.stream_warmups;
        for turn in rotation_of(round, 4) {
            match turn {
                0 => {
                    let (dt, peak) = ironclaw::stream_once(sandbox, session, bytes, timed)
                        .await
                        .context("IronClaw stream")?;
                    ic_stream.record(timed, Ok(dt));
                    ic_peaks.extend(peak);
                }
                1 if api_stream.active() => {
                    let watch = if timed { rss::Watch::start() } else { None };
                    let r = baseline::stream_api(docker, id, bytes).await;
                    api_peaks.extend(watch.map(rss::Watch::finish).filter(|_| r.is_ok()));
                    api_stream.record(timed, r);
                }
                2 if cli_stream.active() => {
                    if let Some(cli) = cli {
                        let (cli, id) = (cli.clone(), id.to_string());
                        let r = blocking(move || cli.stream(&id, bytes)).await;
                        cli_stream.record(timed, r);
                    }
                }
                3 => {
                    // The path a container without the output socket takes: through the engine.
                    sandbox.set_direct_output(false);
                    let r = ironclaw::stream_once(sandbox, session, bytes, false).await;
                    sandbox.set_direct_output(true);
                    let (dt, _) = r.context("IronClaw stream over attach")?;
                    attach_stream.record(timed, Ok(dt));
                }
                _ => {}
            }
        }
    }
    let mut stream = Section {
        key: "stream",
        title: format!("Stream {mib} MiB of stdout"),
        ratio_meaning: "IronClaw throughput ÷ raw docker exec throughput (p50)",
        rows: vec![
            Row::rate(
                "ironclaw",
                format!("**IronClaw** shell `head -c {bytes} /dev/zero`, bytes counted from Stdout events"),
                bytes,
                ic_stream.done(),
            ),
            Row::rate(
                "ironclaw_attach",
                "IronClaw the same, its output through the engine's attach (a container without the output socket)".to_string(),
                bytes,
                attach_stream.done(),
            ),
            Row::rate(
                "docker_exec_api",
                format!("`docker exec C sh -c 'head -c {bytes} /dev/zero'`, Docker API (bollard), bytes counted and dropped"),
                bytes,
                api_stream.done(),
            ),
            Row::rate(
                "docker_exec_cli",
                format!("`docker exec C sh -c 'head -c {bytes} /dev/zero' > /dev/null`, docker CLI"),
                bytes,
                cli_stream.done(),
            ),
            Row::memory(
                "ironclaw_peak_rss",
                "**IronClaw** peak RSS of this process while streaming",
                &ic_peaks,
            ),
            Row::memory(
                "docker_exec_api_peak_rss",
                "Docker API (bollard) baseline: peak RSS of this process while streaming",
                &api_peaks,
            ),
        ],
    };
    judge_stream(&mut stream);

    Ok(stream)
}

/// The cold start.
pub async fn cold_start(
    sandbox: &Arc<Sandbox>,
    session: &SessionName,
    image: &str,
    cli: Option<&DockerCli>,
    cli_skip: &'static str,
    plan: &Plan,
) -> anyhow::Result<Section> {
    let docker = sandbox.docker();
    let instance = sandbox.instance().to_string();

    // -- 2. cold start (interleaved like the streams) -----------------------------------------
    progress(&format!(
        "cold start: {} runs per variant, interleaved (IronClaw's container is removed before each)",
        plan.cold_runs
    ));
    let mut ic_first = Series::ok();
    let mut ic_total = Series::ok();
    let mut spare_first = Series::ok();
    let mut spare_memory = Vec::new();
    let spares = ironclaw::with_spares(sandbox)?;
    let mut api_run = Series::ok();
    let mut api_none = Series::ok();
    let mut cli_run = Series::for_cli(cli, cli_skip);
    for round in 0..plan.cold_warmups + plan.cold_runs {
        let timed = round >= plan.cold_warmups;
        for turn in rotation(round) {
            match turn {
                0 => {
                    let cold = ironclaw::cold_once(sandbox, session)
                        .await
                        .context("IronClaw cold start")?;
                    ic_first.record(timed, Ok(cold.first_output));
                    ic_total.record(timed, Ok(cold.total));
                    if spare_first.active() {
                        let fresh = SessionName::new(format!("bench-spare-{round}"))?;
                        let r = ironclaw::spare_once(&spares, &fresh).await;
                        if let Ok(Some(bytes)) = r.as_ref().map(|c| c.idle_bytes) {
                            spare_memory.push(bytes as f64 / f64::from(1u32 << 20));
                        }
                        spare_first.record(timed, r.map(|c| c.first_output));
                    }
                }
                1 => {
                    if api_run.active() {
                        let r = baseline::run_rm_api(docker, image, &instance, false).await;
                        api_run.record(timed, r);
                    }
                    if api_none.active() {
                        let r = baseline::run_rm_api(docker, image, &instance, true).await;
                        api_none.record(timed, r);
                    }
                }
                2 if cli_run.active() => {
                    if let Some(cli) = cli {
                        let (cli, image, instance) =
                            (cli.clone(), image.to_string(), instance.clone());
                        let r = blocking(move || cli.run_rm(&image, &instance)).await;
                        cli_run.record(timed, r);
                    }
                }
                _ => {}
            }
        }
    }
    let mut cold = Section {
        key: "cold_start",
        title: "Cold start".into(),
        ratio_meaning: "IronClaw p50 ÷ docker run p50 (lower is better)",
        rows: vec![
            Row::time(
                "ironclaw_first_output",
                "**IronClaw** no container → first output of `print(1)` (create, attach, start, supervisor ready, run)",
                ic_first.done(),
            ),
            Row::time(
                "ironclaw_total",
                "IronClaw, until `exec` returned",
                ic_total.done(),
            ),
            Row::time(
                "ironclaw_first_output_spare",
                "**IronClaw** a new session → first output of `print(1)`, the warm spare ready (adopted: attach, run)",
                spare_first.done(),
            ),
            Row::mib(
                "ironclaw_spare_idle_memory",
                "the warm spare's memory while it waits (cgroup, without page cache, as `docker stats`)",
                spare_memory,
            ),
            Row::time(
                "docker_run_api",
                "`docker run --rm IMAGE true`, Docker API (bollard: create, start, wait, remove)",
                api_run.done(),
            ),
            Row::time(
                "docker_run_api_no_network",
                "`docker run --rm --network none IMAGE true`, Docker API (no network, like IronClaw's sandboxes)",
                api_none.done(),
            ),
            Row::time(
                "docker_run_cli",
                "`docker run --rm IMAGE true`, docker CLI",
                cli_run.done(),
            ),
        ],
    };
    judge_cold(&mut cold);
    spares.remove_spares().await?;

    Ok(cold)
}
