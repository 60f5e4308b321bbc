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
//! 8. Run checkpoints (undo): a run that changes nothing in a 10,000-file / 1 GiB workspace and
//!    a 100 MiB rewrite, next to a bare stat walk and a plain copy ([`checkpoint`]).
//!
//! Everything runs in a throw-away data directory (its own instance id), so the user's sessions
//! are never touched; its containers are removed by label at the end, also after an error or
//! Ctrl-C. Nothing is asserted: numbers are reported with their targets, met or missed.

mod agent;
mod baseline;
mod checkpoint;
mod cleanup;
mod context;
mod corpus;
mod ironclaw;
mod machine;
mod measure;
mod network;
mod notes;
mod plan;
mod processes;
mod quota;
mod report;
mod rss;
mod runtimes;
mod search;
mod stats;
mod targets;
mod turns;
mod versus_docker;
mod writes;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use ironclaw_sandbox::image::{self, BuildOptions};
use ironclaw_sandbox::policy::Policy;
use ironclaw_sandbox::{container, docker, Paths, Sandbox};

use baseline::DockerCli;
use cleanup::cleanup;
use machine::Machine;
use measure::{measure, Measured};
use notes::notes;
pub use plan::BenchArgs;
use plan::Plan;
use report::{Report, Settings};

const SESSION: &str = "bench";

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
    // No warm spare but in the rows that measure it (their own config folder, see
    // `ironclaw::with_spares`): a spare would make every new session's run a warm one.
    std::fs::write(paths.user_policy_file(), "warm_spare: false\n")
        .context("cannot write the bench's sandbox.yaml")?;
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
        r = measure(&sandbox, engine.has_runtime("runsc"), cli.as_ref(), cli_skip, &spec.tag, &plan, &stop) => r,
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

fn progress(message: &str) {
    eprintln!("bench: {message}");
}

const NO_CLI: &str = "docker CLI not installed";
const CLI_LEFT_OUT: &str = "left out with --no-cli";
