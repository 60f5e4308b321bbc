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

/// What [`open`] reads from files, read before anything is asked of the engine, so that
/// `exec` can decide on it first ([`OneRun::open`]).
pub struct OneRun {
    pub paths: Paths,
    pub policy: Policy,
    /// Where the engine is; an error here is reported by [`OneRun::open`], as [`open`] would.
    pub endpoint: ironclaw_sandbox::Result<docker::Endpoint>,
}

impl OneRun {
    pub fn read() -> anyhow::Result<Self> {
        let paths = Paths::from_env()?;
        let policy = Policy::load(&paths)?;
        let endpoint = docker::resolve_endpoint(&docker::EnvSnapshot::from_process());
        Ok(Self {
            paths,
            policy,
            endpoint,
        })
    }

    /// [`open`] for `exec`: the engine's ping (when the engine is as last seen) is awaited by
    /// the run itself, once its local work is done (`Sandbox::check_engine_before_use`).
    pub async fn open(self) -> anyhow::Result<Sandbox> {
        let cache = self.paths.engine_cache_file();
        let (docker, check) = docker::connect_client_deferred(self.endpoint?, &cache).await?;
        let sandbox = Sandbox::new(docker, self.paths, self.policy);
        sandbox.check_engine_before_use(check);
        Ok(sandbox)
    }
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
