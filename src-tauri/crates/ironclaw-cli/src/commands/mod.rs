pub mod bench;
pub mod chat;
pub mod doctor;
pub mod exec;
pub mod history;
pub mod image;
pub mod sandbox;
pub mod undo;

use ironclaw_sandbox::policy::Policy;
use ironclaw_sandbox::{docker, Paths, Sandbox};

/// Everything a command needs: where things live, the policy and a connected engine (as last
/// seen, when it is still the same one: a short command should not pay for a handshake).
pub async fn open() -> anyhow::Result<Sandbox> {
    let paths = Paths::from_env()?;
    let policy = Policy::load(&paths)?;
    let docker = docker::connect_client(&paths.engine_cache_file()).await?;
    Ok(Sandbox::new(docker, paths, policy))
}

/// [`open`] for `exec`: the engine's ping (when the engine is as last seen) is awaited by the
/// run itself, once its local work is done (`Sandbox::check_engine_before_use`).
pub async fn open_for_one_run() -> anyhow::Result<Sandbox> {
    let paths = Paths::from_env()?;
    let policy = Policy::load(&paths)?;
    let (docker, check) = docker::connect_client_deferred(&paths.engine_cache_file()).await?;
    let sandbox = Sandbox::new(docker, paths, policy);
    sandbox.check_engine_before_use(check);
    Ok(sandbox)
}

/// `--network`: applies the choice to the session and says what it did to a running sandbox.
pub async fn apply_network(
    sandbox: &Sandbox,
    name: &ironclaw_sandbox::session::SessionName,
    choice: &ironclaw_sandbox::network::NetworkChoice,
) -> anyhow::Result<()> {
    use ironclaw_sandbox::network::NetworkSwitch;
    let switch = sandbox
        .apply_network(name, choice)
        .await
        .map_err(|e| anyhow::anyhow!("--network {choice}: {e}"))?;
    if switch == NetworkSwitch::Restarted {
        eprintln!(
            "ironclaw: network {choice}: the sandbox restarts to join the network (the workspace \
             is kept; interpreter state is not)"
        );
    }
    Ok(())
}
