use std::process::ExitCode;

use ironclaw_sandbox::session::{Registry, SessionName};
use ironclaw_sandbox::Paths;

pub async fn ls(json: bool) -> anyhow::Result<ExitCode> {
    let sandbox = super::open().await?;
    // Listing is when people look: the moment to tidy containers whose session is gone.
    for name in sandbox.cleanup_orphans().await? {
        eprintln!("removed orphaned container {name}");
    }
    let sessions = sandbox.sessions().await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&sessions)?);
        return Ok(ExitCode::SUCCESS);
    }
    if sessions.is_empty() {
        println!("no sessions yet: `ironclaw exec --session NAME CODE` creates one");
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<24} {:<10} {:<28} WORKSPACE",
        "SESSION", "PROFILE", "CONTAINER"
    );
    for s in sessions {
        let state = s
            .container
            .map(|c| format!("{:?}: {}", c.state, c.status).to_lowercase())
            .unwrap_or_else(|| "none (created on next run)".into());
        println!(
            "{:<24} {:<10} {:<28} {}",
            s.name,
            s.profile,
            state,
            s.workspace.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn stop(name: &str) -> anyhow::Result<ExitCode> {
    let sandbox = super::open().await?;
    sandbox.stop(&SessionName::new(name)?).await?;
    Ok(ExitCode::SUCCESS)
}

pub async fn rm(name: &str, purge: bool) -> anyhow::Result<ExitCode> {
    let sandbox = super::open().await?;
    sandbox.remove(&SessionName::new(name)?, purge).await?;
    Ok(ExitCode::SUCCESS)
}

pub async fn prune() -> anyhow::Result<ExitCode> {
    let sandbox = super::open().await?;
    for name in sandbox.cleanup_orphans().await? {
        println!("removed {name}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Needs no engine: the workspace is a host folder.
pub fn workspace(name: &str) -> anyhow::Result<ExitCode> {
    let registry = Registry::new(Paths::from_env()?);
    let name = SessionName::new(name)?;
    match registry.get(&name)? {
        Some(r) => {
            println!("{}", r.workspace.display());
            Ok(ExitCode::SUCCESS)
        }
        None => Err(ironclaw_sandbox::Error::SessionNotFound {
            name: name.to_string(),
        }
        .into()),
    }
}
