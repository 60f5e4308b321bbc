//! `ironclaw-bench`: IronClaw next to plain Docker on this machine, in one run. A crate of its
//! own so that what only measuring needs (the scripted model, the lab network) stays out of
//! the product's binaries.
//!
//! 1. Warm round trip of `print(1+1)`: [`Sandbox::exec`] on a warm session vs `docker exec` of
//!    `python3 -c` on the *same* container (Docker API and docker CLI).
//! 2. Cold start: no container → first output of `print(1)` vs `docker run --rm IMAGE true`.
//! 3. Streaming stdout: `head -c N /dev/zero` through IronClaw vs a raw `docker exec` of the same
//!    command, plus this process's peak RSS while IronClaw streams.
//! 4. Agent overhead per tool round trip: a real agent session driven by a scripted model, with
//!    the model's and the sandbox's own time taken out ([`agent`]).
//! 5. History search over a large synthetic history ([`search`]).
//! 6. Allowlist network mode: a download and fresh connections through the egress proxy vs a
//!    direct connection on the same private lab network ([`network`]).
//! 7. The workspace quota's watch: a run that writes nothing and a 1 GiB write, each with and
//!    without it ([`quota`]).
//!
//! Everything runs in a throw-away data directory (its own instance id), so the user's sessions
//! are never touched; its containers are removed by label at the end, also after an error or
//! Ctrl-C. Nothing is asserted: numbers are reported with their targets, met or missed.

mod agent;
mod baseline;
mod corpus;
mod ironclaw;
mod machine;
mod network;
mod quota;
mod report;
mod rss;
mod search;
mod stats;
mod writes;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use bollard::Docker;
use ironclaw_sandbox::image::{self, BuildOptions};
use ironclaw_sandbox::policy::Policy;
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::{container, docker, Paths, Sandbox};

use baseline::DockerCli;
use machine::Machine;
use report::{Report, Row, Section, Settings};

/// Targets (see the README's performance section).
const WARM_SPEEDUP_TARGET: f64 = 50.0;
const WARM_P50_TARGET_MS: f64 = 2.0;
const COLD_RATIO_TARGET: f64 = 1.5;
const STREAM_RATIO_TARGET: f64 = 0.8;
const STREAM_RSS_TARGET_MIB: f64 = 64.0;

const SESSION: &str = "bench";

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Timed warm round trips per variant [default: 200; --quick: 20].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    iterations: Option<u64>,
    /// Timed cold starts per variant [default: 5; --quick: 2].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    cold_runs: Option<u64>,
    /// MiB written to stdout by each stream [default: 100; --quick: 16].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4096))]
    stream_mb: Option<u64>,
    /// Timed streams per variant [default: 5; --quick: 2].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    stream_runs: Option<u64>,
    /// Agent rounds: each times a turn with a tool call, one without, the model alone and the
    /// sandbox alone [default: 200; --quick: 10].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    agent_rounds: Option<u64>,
    /// Messages in the synthetic history that is searched [default: 100000; --quick: 10000].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    search_messages: Option<u64>,
    /// Timed history searches [default: 300; --quick: 100].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    search_queries: Option<u64>,
    /// MiB downloaded per round in allowlist network mode, through the proxy and directly
    /// [default: 100; --quick: 16].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4096))]
    network_mb: Option<u64>,
    /// Alternating rounds (proxied, then direct) of the network benchmark [default: 5;
    /// --quick: 2].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    network_rounds: Option<u64>,
    /// Small numbers for a CI smoke run (options given explicitly still win).
    #[arg(long)]
    quick: bool,
    /// Leave out the docker CLI baselines even when the CLI is installed.
    #[arg(long)]
    no_cli: bool,
    /// Print one JSON object instead of the markdown table.
    #[arg(long)]
    json: bool,
}

/// Resolved run sizes.
#[derive(Debug, Clone, Copy)]
struct Plan {
    iterations: usize,
    round_trip_warmups: usize,
    cold_runs: usize,
    cold_warmups: usize,
    stream_bytes: u64,
    stream_runs: usize,
    stream_warmups: usize,
    agent: agent::Plan,
    search: search::Plan,
    network: network::Plan,
    quota: quota::Plan,
}

impl Plan {
    fn from_args(args: &BenchArgs) -> Self {
        let pick = |given: Option<u64>, normal: u64, quick: u64| {
            usize::try_from(given.unwrap_or(if args.quick { quick } else { normal }))
                .unwrap_or(usize::MAX)
        };
        let stream_mib = args.stream_mb.unwrap_or(if args.quick { 16 } else { 100 });
        Self {
            iterations: pick(args.iterations, 200, 20),
            round_trip_warmups: if args.quick { 3 } else { 10 },
            cold_runs: pick(args.cold_runs, 5, 2),
            cold_warmups: 1,
            stream_bytes: stream_mib << 20,
            stream_runs: pick(args.stream_runs, 5, 2),
            stream_warmups: 1,
            agent: agent::Plan {
                rounds: pick(args.agent_rounds, 200, 10),
                warmups: if args.quick { 2 } else { 3 },
            },
            search: search::Plan {
                messages: pick(args.search_messages, 100_000, 10_000),
                queries: pick(args.search_queries, 300, 100),
            },
            network: network::Plan {
                download_mib: args.network_mb.unwrap_or(if args.quick { 16 } else { 100 }),
                rounds: pick(args.network_rounds, 5, 2),
                requests: if args.quick { 10 } else { 50 },
            },
            quota: quota::Plan {
                noop_runs: pick(args.iterations, 200, 20),
                write_runs: pick(args.stream_runs, 5, 2),
            },
        }
    }
}

pub async fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let plan = Plan::from_args(&args);
    let engine = docker::connect().await?;
    let spec = image::ensure(&engine.docker, &BuildOptions::default(), &mut |p| {
        // Building the image takes minutes: say what is happening, not every log line.
        if let image::Progress::Phase { name, message } = p {
            eprintln!("[{name}] {message}");
        }
    })
    .await?;
    let cli = if args.no_cli {
        None
    } else {
        let endpoint = engine.endpoint.clone();
        tokio::task::spawn_blocking(move || DockerCli::detect(&endpoint)).await?
    };
    let mut machine = Machine::describe(&engine, cli.as_ref().map(|c| c.version.clone()));
    let cli_skip = if args.no_cli { CLI_LEFT_OUT } else { NO_CLI };

    // A data directory of our own: its own sessions, workspaces and instance id.
    let tmp = tempfile::Builder::new()
        .prefix("ironclaw-bench-")
        .tempdir()
        .context("cannot create a temporary data directory for the bench")?;
    let paths = Paths::at(tmp.path().join("data"), tmp.path().join("config"));
    for dir in [&paths.data_dir, &paths.config_dir] {
        // Before Sandbox::new: the instance id is derived from the canonical data dir.
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let policy = Policy::load(&paths)?;
    let (profile_name, profile) = {
        let (name, p) = policy.profile(None)?;
        (name.to_string(), p.clone())
    };
    // Shared: the agent benchmark hands it to a real agent session.
    let sandbox = Arc::new(Sandbox::new(engine.docker.clone(), paths, policy));
    let instance = sandbox.instance().to_string();
    progress(&format!(
        "data dir {} (instance {instance}); image {}",
        tmp.path().display(),
        spec.tag
    ));

    let stop = Arc::new(AtomicBool::new(false));
    let measured: anyhow::Result<Measured> = tokio::select! {
        r = measure(&sandbox, cli.as_ref(), cli_skip, &spec.tag, &plan, &stop) => r,
        _ = tokio::signal::ctrl_c() => Err(anyhow::anyhow!("interrupted")),
    };
    stop.store(true, Ordering::Relaxed);
    machine.load_end = machine::load_average();
    let cleaned = cleanup(&engine.docker, &instance).await;
    drop(sandbox);
    if let Err(e) = tmp.close() {
        eprintln!("ironclaw bench: could not delete the temporary data directory: {e}");
    }
    let Measured {
        sections,
        notes: extra_notes,
        failures,
    } = match (measured, cleaned) {
        (Ok(s), Ok(())) => s,
        (Err(e), Ok(())) => return Err(e),
        (Ok(_), Err(c)) => return Err(c),
        (Err(e), Err(c)) => {
            return Err(e.context(format!(
                "and removing the bench's containers (label {}={instance}) failed too: {c:#}",
                container::LABEL_INSTANCE
            )))
        }
    };

    let report = Report {
        ironclaw_version: ironclaw_sandbox::VERSION,
        build: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        date_utc: report::utc_date(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        ),
        notes: notes(&machine, &sections, args.quick, cli_skip, extra_notes),
        machine,
        settings: Settings {
            iterations: plan.iterations,
            round_trip_warmups: plan.round_trip_warmups,
            cold_runs: plan.cold_runs,
            stream_bytes: plan.stream_bytes,
            stream_runs: plan.stream_runs,
            agent_rounds: plan.agent.rounds,
            search_messages: plan.search.messages,
            search_queries: plan.search.queries,
            quick: args.quick,
            docker_cli: cli.is_some(),
            image: spec.tag.clone(),
            profile: profile_name,
            profile_cpus: profile.cpus,
            profile_memory_bytes: profile.memory_bytes,
        },
        sections,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.markdown());
    }
    if failures.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        for failure in &failures {
            eprintln!("ironclaw bench: {failure}");
        }
        Ok(ExitCode::FAILURE)
    }
}

/// What the whole run measured.
struct Measured {
    sections: Vec<Section>,
    notes: Vec<String>,
    /// Measurements of IronClaw that failed; the report shows them, and the exit status is 1.
    failures: Vec<String>,
}

fn progress(message: &str) {
    eprintln!("bench: {message}");
}

/// Runs a blocking docker CLI loop off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    tokio::task::spawn_blocking(f).await?
}

fn reason(e: anyhow::Error) -> String {
    format!("{e:#}")
}

const NO_CLI: &str = "docker CLI not installed";
const CLI_LEFT_OUT: &str = "left out with --no-cli";

/// Who goes first in an interleaved round: 0 = IronClaw, 1 = Docker API, 2 = docker CLI.
fn rotation(round: usize) -> [usize; 3] {
    let r = round % 3;
    [r, (r + 1) % 3, (r + 2) % 3]
}

/// Timed runs of one variant; a baseline that fails once is dropped with its reason.
struct Series {
    samples: Vec<Duration>,
    failed: Option<String>,
}

impl Series {
    fn ok() -> Self {
        Self {
            samples: Vec::new(),
            failed: None,
        }
    }

    fn for_cli(cli: Option<&DockerCli>, skip: &str) -> Self {
        let mut s = Self::ok();
        if cli.is_none() {
            s.failed = Some(skip.to_string());
        }
        s
    }

    fn active(&self) -> bool {
        self.failed.is_none()
    }

    fn fail(&mut self, why: String) {
        self.failed.get_or_insert(why);
    }

    fn record(&mut self, timed: bool, r: anyhow::Result<Duration>) {
        match r {
            Ok(d) if timed => self.samples.push(d),
            Ok(_) => {}
            Err(e) => self.fail(reason(e)),
        }
    }

    fn done(self) -> Result<Vec<Duration>, String> {
        match self.failed {
            Some(why) => Err(why),
            None => Ok(self.samples),
        }
    }
}

async fn measure(
    sandbox: &Arc<Sandbox>,
    cli: Option<&DockerCli>,
    cli_skip: &'static str,
    image: &str,
    plan: &Plan,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<Measured> {
    let session = SessionName::new(SESSION)?;
    let docker = sandbox.docker();
    let instance = sandbox.instance().to_string();

    // -- 1. warm round trip -------------------------------------------------------------------
    progress(&format!(
        "warm round trip: IronClaw, {} runs (the first run creates the container)",
        plan.iterations
    ));
    let ic = ironclaw::round_trips(sandbox, &session, plan.round_trip_warmups, plan.iterations)
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
    for round in 0..plan.stream_warmups + plan.stream_runs {
        let timed = round >= plan.stream_warmups;
        for turn in rotation(round) {
            match turn {
                0 => {
                    let (dt, peak) = ironclaw::stream_once(sandbox, &session, bytes, timed)
                        .await
                        .context("IronClaw stream")?;
                    ic_stream.record(timed, Ok(dt));
                    ic_peaks.extend(peak);
                }
                1 if api_stream.active() => {
                    let watch = if timed { rss::Watch::start() } else { None };
                    let r = baseline::stream_api(docker, &id, bytes).await;
                    api_peaks.extend(watch.map(rss::Watch::finish).filter(|_| r.is_ok()));
                    api_stream.record(timed, r);
                }
                2 if cli_stream.active() => {
                    if let Some(cli) = cli {
                        let (cli, id) = (cli.clone(), id.clone());
                        let r = blocking(move || cli.stream(&id, bytes)).await;
                        cli_stream.record(timed, r);
                    }
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

    // -- 2. cold start (interleaved like the streams) -----------------------------------------
    progress(&format!(
        "cold start: {} runs per variant, interleaved (IronClaw's container is removed before each)",
        plan.cold_runs
    ));
    let mut ic_first = Series::ok();
    let mut ic_total = Series::ok();
    let mut api_run = Series::ok();
    let mut api_none = Series::ok();
    let mut cli_run = Series::for_cli(cli, cli_skip);
    for round in 0..plan.cold_warmups + plan.cold_runs {
        let timed = round >= plan.cold_warmups;
        for turn in rotation(round) {
            match turn {
                0 => {
                    let cold = ironclaw::cold_once(sandbox, &session)
                        .await
                        .context("IronClaw cold start")?;
                    ic_first.record(timed, Ok(cold.first_output));
                    ic_total.record(timed, Ok(cold.total));
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

    // -- 4. agent overhead per tool round trip ------------------------------------------------
    // After the streams: it leaves this process's heap larger, which their RSS row would count.
    progress(&format!(
        "agent: {} rounds of a turn with a tool call, one without, the model alone and the sandbox alone",
        plan.agent.rounds
    ));
    let agent = agent::section(sandbox, plan.agent).await;

    // -- 5. history search --------------------------------------------------------------------
    progress(&format!(
        "history search: loading {} messages, then {} searches",
        plan.search.messages, plan.search.queries
    ));
    let dir = sandbox.paths().data_dir.join("search-bench");
    let search = search::section(dir, plan.search, Arc::clone(stop)).await;

    // -- 6. allowlist network -----------------------------------------------------------------
    progress(&format!(
        "network: {} rounds of a {} MiB download and {} fresh connections, proxied then direct",
        plan.network.rounds, plan.network.download_mib, plan.network.requests
    ));
    let network = network::section(sandbox, plan.network).await;

    // -- 7. workspace quota watch -------------------------------------------------------------
    progress(&format!(
        "quota watch: {} runs writing nothing and {} writes of 1 GiB, with and without it",
        plan.quota.noop_runs, plan.quota.write_runs
    ));
    let quota = quota::section(sandbox, plan.quota).await;

    let mut measured = Measured {
        sections: vec![warm, cold, stream],
        notes: Vec::new(),
        failures: Vec::new(),
    };
    for outcome in [agent, search, network, quota] {
        measured.sections.push(outcome.section);
        measured.notes.extend(outcome.notes);
        measured.failures.extend(outcome.failure);
    }
    Ok(measured)
}

fn p50(section: &Section, key: &str) -> Option<f64> {
    section
        .rows
        .iter()
        .find(|r| r.key == key)
        .and_then(|r| r.p50)
}

fn judge_warm(s: &mut Section) {
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

fn judge_cold(s: &mut Section) {
    let ic = p50(s, "ironclaw_first_output");
    for row in &mut s.rows {
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

fn judge_stream(s: &mut Section) {
    let ic = p50(s, "ironclaw");
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
            "ironclaw_peak_rss" => {
                let met = row.peak_mib.map(|p| p.max < STREAM_RSS_TARGET_MIB);
                row.judge(format!("< {STREAM_RSS_TARGET_MIB} MiB"), met);
            }
            _ => {}
        }
    }
}

fn notes(
    machine: &Machine,
    sections: &[Section],
    quick: bool,
    cli_skip: &str,
    extra: Vec<String>,
) -> Vec<String> {
    let mut notes = Vec::new();
    if cfg!(debug_assertions) {
        notes.push(
            "Debug build: these numbers say little. Build with `cargo build --release -p ironclaw-cli -p ironclaw-bench`."
                .to_string(),
        );
    }
    if quick {
        notes.push("`--quick`: small samples for a smoke test, not for the README.".to_string());
    }
    if let Some(filter) = std::env::var_os("IRONCLAW_LOG") {
        notes.push(format!(
            "IRONCLAW_LOG={} was set: log output adds to IronClaw's times.",
            filter.to_string_lossy()
        ));
    }
    let busiest = machine
        .load_start
        .into_iter()
        .chain(machine.load_end)
        .fold(0.0, f64::max);
    if busiest > machine.logical_cpus as f64 * 0.5 {
        notes.push(format!(
            "The machine was busy with other work (load average up to {busiest:.1} on {} logical \
             CPUs): throughput and cold starts suffer most; compare the ratios rather than the \
             absolute numbers, or run again on a quiet machine.",
            machine.logical_cpus
        ));
    }
    if machine.docker_cli_version.is_none() {
        notes.push(format!("docker CLI baselines skipped: {cli_skip}."));
    }
    let missed: Vec<String> = sections
        .iter()
        .flat_map(|s| {
            s.rows
                .iter()
                .filter(|r| r.met == Some(false))
                .map(move |r| format!("{} / {}", s.title, r.key))
        })
        .collect();
    if !missed.is_empty() {
        notes.push(format!("Targets missed: {}.", missed.join(", ")));
    }
    notes.extend(extra);
    notes
}

/// Removes every container of the bench's instance (sessions, labelled baselines, the egress
/// relay and lab servers), then its egress and lab networks.
async fn cleanup(docker: &Docker, instance: &str) -> anyhow::Result<()> {
    remove_containers(docker, instance).await?;
    ironclaw_sandbox::network::engine::remove_all(docker, instance).await?;
    ironclaw_sandbox::network::lab::remove_all(docker, instance).await?;
    Ok(())
}

async fn remove_containers(docker: &Docker, instance: &str) -> anyhow::Result<()> {
    // A fresh listing each pass: a docker run baseline may still be removing itself.
    for attempt in 0..3 {
        let left = container::list(docker, instance).await?;
        if left.is_empty() {
            return Ok(());
        }
        for c in &left {
            container::remove(docker, &c.id).await?;
        }
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    let left = container::list(docker, instance).await?;
    anyhow::ensure!(
        left.is_empty(),
        "containers still present: {}",
        left.iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_leads_a_round_in_turn() {
        let firsts: Vec<usize> = (0..3).map(|r| rotation(r)[0]).collect();
        assert_eq!(firsts, vec![0, 1, 2]);
        for r in 0..6 {
            let mut turn = rotation(r);
            turn.sort_unstable();
            assert_eq!(turn, [0, 1, 2]);
        }
    }

    #[test]
    fn quick_shrinks_the_defaults_but_explicit_options_win() {
        let args = |quick, iterations| BenchArgs {
            iterations,
            cold_runs: None,
            stream_mb: None,
            stream_runs: None,
            agent_rounds: None,
            search_messages: None,
            search_queries: None,
            network_mb: None,
            network_rounds: None,
            quick,
            no_cli: false,
            json: false,
        };
        let normal = Plan::from_args(&args(false, None));
        assert_eq!(
            (normal.iterations, normal.cold_runs, normal.stream_bytes),
            (200, 5, 100 << 20)
        );
        let quick = Plan::from_args(&args(true, None));
        assert!(quick.iterations < normal.iterations && quick.stream_bytes < normal.stream_bytes);
        assert_eq!(Plan::from_args(&args(true, Some(7))).iterations, 7);
    }
}
