//! What a person waits for at the terminal: the whole `ironclaw exec` process, from fork to exit,
//! next to the whole `docker exec` process on the same container. Unlike the warm round trip,
//! this counts what every command pays before its first byte: starting the program, reaching the
//! engine, finding the session's container and attaching to it.
//!
//! Variants take turns, so background load falls on all alike. One of them forgets the engine
//! (`engine.json`) before each run, so what the engine cache saves is measured side by side.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::{container, Sandbox};

use crate::baseline::DockerCli;
use crate::report::{Outcome, Row, Section};
use crate::turns::{blocking, Series};

const SESSION: &str = "bench-cli";
const NEW_SESSION_PREFIX: &str = "bench-cli-new-";
/// The targets of issue 17: a whole `ironclaw exec` as a fraction of a whole `docker exec`.
const WARM_TARGET: f64 = 0.10;
const NEW_SESSION_TARGET: f64 = 0.25;

#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Timed rounds of the warm variants.
    pub rounds: usize,
    /// Timed runs in a new session (each creates and then removes a container).
    pub new_sessions: usize,
}

pub async fn section(
    sandbox: &Sandbox,
    cli: Option<&DockerCli>,
    cli_skip: &str,
    plan: Plan,
) -> Outcome {
    let title = "Whole process: `ironclaw exec` next to `docker exec`".to_string();
    match measure(sandbox, cli, cli_skip, plan).await {
        Ok(rows) => Outcome {
            section: Section {
                key: "whole_process",
                title,
                ratio_meaning: "IronClaw p50 ÷ `docker exec` CLI p50 (lower is better)",
                rows,
            },
            notes: Vec::new(),
            failure: None,
        },
        Err(e) => Outcome::failed(
            "whole_process",
            title,
            "`ironclaw exec 'print(1+1)'`, whole process",
            format!("≤ {WARM_TARGET}× `docker exec`"),
            &e,
        ),
    }
}

/// The `ironclaw` program the bench was installed beside.
fn ironclaw_program() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find this program's own path")?;
    let program = exe.with_file_name("ironclaw");
    if !program.is_file() {
        bail!(
            "{} is not there; build it beside ironclaw-bench (`cargo build --release -p ironclaw-cli`)",
            program.display()
        );
    }
    Ok(program)
}

#[derive(Clone)]
struct Exec {
    program: PathBuf,
    data_dir: PathBuf,
    config_dir: PathBuf,
    docker_host: Option<String>,
}

impl Exec {
    /// One whole `ironclaw exec --session NAME 'print(1+1)'`. Blocking.
    fn once(&self, session: &str) -> anyhow::Result<Duration> {
        let mut cmd = Command::new(&self.program);
        cmd.args(["exec", "--session", session, "print(1+1)"])
            .env("IRONCLAW_DATA_DIR", &self.data_dir)
            .env("IRONCLAW_CONFIG_DIR", &self.config_dir)
            .env_remove("IRONCLAW_LOG")
            .stdin(Stdio::null());
        if let Some(host) = &self.docker_host {
            cmd.env("DOCKER_HOST", host);
        }
        let t = Instant::now();
        let out = cmd.output().context("running ironclaw exec")?;
        let dt = t.elapsed();
        if !out.status.success() || out.stdout != b"2\n" {
            bail!(
                "ironclaw exec failed ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout).trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(dt)
    }

    fn engine_cache(&self) -> PathBuf {
        self.data_dir.join("engine.json")
    }
}

async fn measure(
    sandbox: &Sandbox,
    cli: Option<&DockerCli>,
    cli_skip: &str,
    plan: Plan,
) -> anyhow::Result<Vec<Row>> {
    let paths = sandbox.paths();
    let exec = Exec {
        program: ironclaw_program()?,
        data_dir: paths.data_dir.clone(),
        config_dir: paths.config_dir.clone(),
        docker_host: cli.and_then(DockerCli::docker_host),
    };
    // Creates the session's container and the engine cache.
    {
        let exec = exec.clone();
        blocking(move || exec.once(SESSION)).await?;
    }
    let docker = sandbox.docker();
    let instance = sandbox.instance().to_string();
    let id = container::find(docker, &instance, SESSION)
        .await?
        .context("the CLI bench session has no container")?
        .id;

    let warmups = 2;
    let mut cached = Series::ok();
    let mut handshake = Series::ok();
    let mut docker_cli = Series::for_cli(cli, cli_skip);
    for round in 0..warmups + plan.rounds {
        let timed = round >= warmups;
        for turn in crate::turns::rotation(round) {
            match turn {
                0 => {
                    let exec = exec.clone();
                    cached.record(timed, blocking(move || exec.once(SESSION)).await);
                }
                1 => {
                    let exec = exec.clone();
                    let r = blocking(move || {
                        ironclaw_sandbox::docker::known::forget(&exec.engine_cache());
                        exec.once(SESSION)
                    })
                    .await;
                    handshake.record(timed, r);
                }
                2 if docker_cli.active() => {
                    if let Some(cli) = cli {
                        let (cli, id) = (cli.clone(), id.clone());
                        let r = blocking(move || one_docker_exec(&cli, &id)).await;
                        docker_cli.record(timed, r);
                    }
                }
                _ => {}
            }
        }
    }

    // A new session: no container yet. Each is removed before the next, so none waits warm.
    // In turns: without a spare (the bench's policy), and with the warm spare ready (the
    // shipped policy, from a config folder of its own), which the run must adopt.
    let spares = crate::ironclaw::with_spares(sandbox)?;
    let spare_exec = Exec {
        config_dir: crate::ironclaw::spare_config_dir(sandbox),
        ..exec.clone()
    };
    let mut fresh = Series::ok();
    let mut adopted = Series::ok();
    for n in 0..1 + plan.new_sessions {
        let timed = n >= 1;
        let name = format!("{NEW_SESSION_PREFIX}{n}");
        let r = {
            let (exec, name) = (exec.clone(), name.clone());
            blocking(move || exec.once(&name)).await
        };
        fresh.record(timed, r);
        sandbox.remove(&SessionName::new(name)?, true).await?;
        if adopted.active() {
            let name = SessionName::new(format!("{NEW_SESSION_PREFIX}spare-{n}"))?;
            let r = match crate::ironclaw::spare_ready(&spares).await {
                Ok(_) => {
                    let before = crate::ironclaw::spare_ids(&spares).await?;
                    let (exec, session) = (spare_exec.clone(), name.to_string());
                    let r = blocking(move || exec.once(&session)).await;
                    let took = crate::ironclaw::adopted_a_spare(&spares, &name, &before).await?;
                    match r {
                        Ok(_) if !took => Err(anyhow::anyhow!(
                            "the new session did not adopt the warm spare"
                        )),
                        r => r,
                    }
                }
                Err(e) => Err(e),
            };
            adopted.record(timed, r);
            spares.remove(&name, true).await?;
        }
    }
    // The last run's detached maker finishes its spare; then it goes.
    let _ = crate::ironclaw::spare_ready(&spares).await;
    spares.remove_spares().await?;

    let mut rows = vec![
        Row::time(
            "ironclaw_exec_warm",
            "**IronClaw** `ironclaw exec 'print(1+1)'`, whole process, warm session (as shipped: the engine as last seen)",
            cached.done(),
        ),
        Row::time(
            "ironclaw_exec_warm_handshake",
            "the same, with the engine forgotten before each run (a full handshake)",
            handshake.done(),
        ),
        Row::time(
            "ironclaw_exec_new_session",
            "**IronClaw** `ironclaw exec --session NEW 'print(1+1)'`, whole process, no container yet, no warm spare",
            fresh.done(),
        ),
        Row::time(
            "ironclaw_exec_new_session_spare",
            "**IronClaw** the same, the warm spare ready (as shipped: the new session adopts it)",
            adopted.done(),
        ),
        Row::time(
            "docker_exec_cli",
            "`docker exec C python3 -c 'print(1+1)'`, whole process, same container as the warm runs",
            docker_cli.done(),
        ),
    ];
    judge(&mut rows);
    Ok(rows)
}

fn one_docker_exec(cli: &DockerCli, id: &str) -> anyhow::Result<Duration> {
    let samples = cli.exec_round_trips(id, 0, 1, &std::sync::atomic::AtomicBool::new(false))?;
    samples
        .first()
        .copied()
        .context("docker exec gave no timing")
}

fn judge(rows: &mut [Row]) {
    let base = rows
        .iter()
        .find(|r| r.key == "docker_exec_cli")
        .and_then(|r| r.p50);
    for row in rows.iter_mut() {
        let target = match row.key {
            "ironclaw_exec_warm" | "ironclaw_exec_warm_handshake" => WARM_TARGET,
            // As shipped a new session adopts the warm spare; the row without one is context.
            "ironclaw_exec_new_session_spare" => NEW_SESSION_TARGET,
            "ironclaw_exec_new_session" => {
                row.ratio = match (row.p50, base) {
                    (Some(ic), Some(base)) if base > 0.0 => Some(ic / base),
                    _ => None,
                };
                continue;
            }
            _ => continue,
        };
        row.ratio = match (row.p50, base) {
            (Some(ic), Some(base)) if base > 0.0 => Some(ic / base),
            _ => None,
        };
        let met = row.ratio.map(|r| r <= target);
        if row.key != "ironclaw_exec_warm_handshake" {
            row.judge(format!("≤ {target}× `docker exec`"), met);
        }
    }
}
