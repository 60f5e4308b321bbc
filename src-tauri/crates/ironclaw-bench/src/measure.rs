//! The whole run: every scenario group in its order, gathered into the report's sections.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::Sandbox;

use crate::baseline::DockerCli;
use crate::plan::Plan;
use crate::report::Section;
use crate::{
    agent, checkpoint, context, network, processes, progress, quota, runtimes, search,
    versus_docker, SESSION,
};

/// What the whole run measured.
pub struct Measured {
    pub sections: Vec<Section>,
    pub notes: Vec<String>,
    /// Measurements of IronClaw that failed; the report shows them, and the exit status is 1.
    pub failures: Vec<String>,
}

pub async fn measure(
    sandbox: &Arc<Sandbox>,
    gvisor_registered: bool,
    cli: Option<&DockerCli>,
    cli_skip: &'static str,
    image: &str,
    plan: &Plan,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<Measured> {
    let session = SessionName::new(SESSION)?;
    let (warm, id) =
        versus_docker::warm_round_trip(sandbox, &session, cli, cli_skip, plan, stop).await?;
    // Before the cold starts, which remove the warm container.
    let stream = versus_docker::stream(sandbox, &session, &id, cli, cli_skip, plan).await?;
    let cold = versus_docker::cold_start(sandbox, &session, image, cli, cli_skip, plan).await?;

    // -- 3b. the whole CLI process ------------------------------------------------------------------
    progress(&format!(
        "whole process: {} rounds of `ironclaw exec` (engine cached / forgotten) and `docker exec`, then {} new sessions",
        plan.processes.rounds, plan.processes.new_sessions
    ));
    let processes = processes::section(sandbox, cli, cli_skip, plan.processes).await;

    // -- 4. agent overhead per tool round trip ------------------------------------------------
    // After the streams: it leaves this process's heap larger, which their RSS row would count.
    progress(&format!(
        "agent: {} rounds of a turn with a tool call, one without, the model alone and the sandbox alone",
        plan.agent.rounds
    ));
    let agent = agent::section(sandbox, plan.agent).await;

    // -- 4b. a long conversation on a small context window ---------------------------------------
    progress(&format!(
        "context: {} turns on an 8k window next to a window that never fills",
        plan.context.turns
    ));
    let context = context::section(sandbox, plan.context).await;

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

    // -- 8. run checkpoints (undo) --------------------------------------------------------------
    progress(&format!(
        "checkpoints: a {}-file / {} MiB workspace, {} runs changing nothing and {} rewrites of {} MiB",
        plan.checkpoint.files,
        plan.checkpoint.total_bytes >> 20,
        plan.checkpoint.noop_runs,
        plan.checkpoint.rewrite_runs,
        plan.checkpoint.rewrite_bytes >> 20
    ));
    let dir = sandbox.paths().data_dir.join("checkpoint-bench");
    let plan_cp = plan.checkpoint;
    let checkpoint =
        tokio::task::spawn_blocking(move || checkpoint::section(&dir, plan_cp)).await?;

    // -- 9. gVisor next to runc --------------------------------------------------------------
    let runtimes = runtimes::section(sandbox, plan.runtimes, gvisor_registered).await;

    let mut measured = Measured {
        sections: vec![warm, cold, stream],
        notes: Vec::new(),
        failures: Vec::new(),
    };
    for outcome in [
        processes, agent, context, search, network, quota, checkpoint, runtimes,
    ] {
        measured.sections.push(outcome.section);
        measured.notes.extend(outcome.notes);
        measured.failures.extend(outcome.failure);
    }
    Ok(measured)
}
