pub mod bench;
pub mod chat;
pub mod doctor;
pub mod exec;
pub mod history;
pub mod image;
pub mod sandbox;

use ironclaw_sandbox::policy::Policy;
use ironclaw_sandbox::{docker, Paths, Sandbox};

/// Everything a command needs: where things live, the policy and a connected engine.
pub async fn open() -> anyhow::Result<(Sandbox, docker::Engine)> {
    let paths = Paths::from_env()?;
    let policy = Policy::load(&paths)?;
    let engine = docker::connect().await?;
    Ok((Sandbox::new(engine.docker.clone(), paths, policy), engine))
}
