use std::process::ExitCode;

use ironclaw_sandbox::session::{Registry, SessionName};
use ironclaw_sandbox::Paths;

use crate::terminal::inert;

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
    let spares = sandbox.spares().await?;
    if sessions.is_empty() {
        println!("no sessions yet: `ironclaw exec --session NAME CODE` creates one");
        print_spares(&spares);
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
        // A workspace folder's name is the person's to choose, and a profile's the config's:
        // shown, never obeyed, like everything else on this terminal.
        println!(
            "{}",
            inert(&format!(
                "{:<24} {:<10} {:<28} {}",
                s.name,
                s.profile,
                state,
                s.workspace.display()
            ))
        );
    }
    print_spares(&spares);
    Ok(ExitCode::SUCCESS)
}

fn print_spares(spares: &[(ironclaw_sandbox::container::ContainerInfo, bool)]) {
    for (c, usable) in spares {
        let state = format!("{:?}: {}", c.state, c.status).to_lowercase();
        let what = if *usable {
            "warm spare: the next new session starts in it"
        } else {
            "warm spare, stale: replaced by the next `ironclaw sandbox spare`"
        };
        println!(
            "{}",
            inert(&format!(
                "{:<24} {:<10} {:<28} ({what})",
                c.session, c.profile, state
            ))
        );
    }
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
    for name in sandbox.remove_spares().await? {
        println!("removed {name} (warm spare)");
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn spare() -> anyhow::Result<ExitCode> {
    use ironclaw_sandbox::sandbox::spare::SpareStatus;
    let sandbox = super::open().await?;
    match sandbox.ensure_spare().await? {
        SpareStatus::Ready { container, made } => println!(
            "warm spare ready: {container}{}",
            if made { " (made now)" } else { "" }
        ),
        SpareStatus::Off { reason } => println!("no warm spare: {reason}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// After a run that made or adopted a session's container: a detached `ironclaw sandbox spare`
/// makes the next spare, so this command exits now and the next new session finds one ready.
pub fn replenish_spare_in_background() {
    use std::os::unix::process::CommandExt;
    // `sandbox spare` is in `ironclaw-full`: started directly, not through the front's execve.
    let Ok(program) = crate::front::full_program().or_else(|_| std::env::current_exe()) else {
        return;
    };
    let spawned = std::process::Command::new(program)
        .args(["sandbox", "spare"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        // Its own process group: a Ctrl-C at the terminal is not for it.
        .process_group(0)
        .spawn();
    if let Err(e) = spawned {
        tracing::debug!(error = %e, "could not start making a warm spare");
    }
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
