//! `ironclaw undo` / `ironclaw redo`: put a session's workspace back as it was before a run,
//! or put the run's changes back. Host-side file work only: Docker need not be running.

use std::process::ExitCode;

use ironclaw_sandbox::sandbox::checkpoints;
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::Paths;
use ironclaw_workspace::checkpoint::UndoOutcome;

use crate::terminal::inert;

/// Exit code when later runs changed the same files and nothing was changed.
const CONFLICT: u8 = 2;

pub async fn undo(
    session: String,
    run: Option<String>,
    force: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let paths = Paths::from_env()?;
    let name = SessionName::new(session)?;
    let (run, outcome) = checkpoints::undo(&paths, &name, run.as_deref(), force).await?;
    match outcome {
        UndoOutcome::Restored {
            changes,
            also_undone,
        } => {
            let restored = checkpoints::file_changes(&changes);
            if json {
                println!(
                    "{}",
                    serde_json::json!({
                        "run_id": run, "restored": true, "also_undone": also_undone,
                        "changes": restored,
                    })
                );
            } else {
                for later in &also_undone {
                    eprintln!("ironclaw: undid the later run {later} first");
                }
                eprintln!(
                    "ironclaw: undid run {run}: {} path(s) put back as they were before it. \
                     Interpreter state (variables, imports) is unchanged.",
                    restored.len()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        UndoOutcome::Conflicts { later_runs, paths } => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({
                        "run_id": run, "restored": false, "later_runs": later_runs,
                        "paths": paths,
                    })
                );
            } else {
                eprintln!(
                    "ironclaw: nothing changed: later runs ({}) changed the same files ({}). \
                     Undo them too with --force, or undo them first.",
                    later_runs.join(", "),
                    inert(&paths.join(", "))
                );
            }
            Ok(ExitCode::from(CONFLICT))
        }
    }
}

pub async fn redo(session: String, run: String, json: bool) -> anyhow::Result<ExitCode> {
    let paths = Paths::from_env()?;
    let name = SessionName::new(session)?;
    let changes = checkpoints::redo(&paths, &name, &run).await?;
    if json {
        println!(
            "{}",
            serde_json::json!({ "run_id": run, "restored": true, "changes": changes })
        );
    } else {
        eprintln!(
            "ironclaw: redid run {run}: {} path(s) changed again as the run had left them",
            changes.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}
