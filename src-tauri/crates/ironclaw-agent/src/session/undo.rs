//! Undoing a run: what each run changed in the workspace is recorded with it, and
//! [`Op::UndoRun`](ironclaw_protocol::Op::UndoRun) puts the files back as they were (never the
//! interpreter's state). The person sees it in the thread; the model is told with the person's
//! next message, so it does not build on files that are gone.

use std::sync::Arc;

use ironclaw_protocol::{AgentEvent, AuditRecord, ExecutionId, FileChange};
use ironclaw_sandbox::exec::ExecResult;
use ironclaw_store::{MessageRole, MessageStatus, NewMessage};
use ironclaw_workspace::checkpoint::UndoOutcome;

use super::Inner;

/// The run's checkpoint, taken right before it starts (unless the policy took it already, to
/// prove the run undoable) and linked to the execution at once: a run that ends in an error, or
/// whose app is killed mid-way, can still be undone from its cell. `None` when it cannot be
/// taken; the run then tries again itself and says why it cannot be undone.
pub(super) async fn prepare(
    inner: &Inner,
    sandbox: &ironclaw_sandbox::Sandbox,
    execution_id: ExecutionId,
    taken: Option<String>,
) -> Option<String> {
    let run = match taken {
        Some(run) => run,
        None => sandbox
            .prepare_checkpoint(&inner.sandbox_session, &inner.sandbox_options)
            .await
            .map_err(|e| tracing::warn!(error = %e, "the run's checkpoint could not be taken"))
            .ok()?,
    };
    if let Err(e) = inner
        .deps
        .history
        .record_run_checkpoint(execution_id, &run, &[])
    {
        tracing::warn!(error = %e, "could not link the run's checkpoint to its execution");
    }
    Some(run)
}

/// What became of a finished run's checkpoint.
pub(super) struct Recorded {
    /// What the run changed (empty when unknown).
    pub changes: Vec<FileChange>,
    /// Why the run cannot be undone.
    pub not_undoable: Option<String>,
    /// Why its changes are not known; it can still be put back as before it.
    pub changes_unknown: Option<String>,
}

/// Keeps a finished run's checkpoint with it; returns what the run changed and, when it
/// cannot be undone, why. A run that failed is checkpointed here (`prepared`).
pub(super) async fn record<E: std::fmt::Display>(
    inner: &Inner,
    sandbox: &ironclaw_sandbox::Sandbox,
    execution_id: ExecutionId,
    result: &Result<ExecResult, E>,
    prepared: Option<&str>,
) -> Recorded {
    let not_undoable = |changes: Vec<FileChange>, why: String| Recorded {
        changes,
        not_undoable: Some(why),
        changes_unknown: None,
    };
    let (run_id, changes) = match result {
        Ok(r) => match (&r.run_id, &r.changes_unknown) {
            // Linked to its before-state already (`prepare`): Undo puts that back.
            (Some(_), Some(why)) => {
                return Recorded {
                    changes: Vec::new(),
                    not_undoable: None,
                    changes_unknown: Some(why.clone()),
                }
            }
            (Some(run), None) => (run.clone(), r.changes.clone()),
            (None, _) => {
                let why = r
                    .checkpoint_error
                    .clone()
                    .unwrap_or_else(|| "its changes were not recorded".into());
                return not_undoable(r.changes.clone(), why);
            }
        },
        Err(_) => {
            let Some(run) = prepared else {
                return not_undoable(
                    Vec::new(),
                    "the run failed before its changes could be recorded".into(),
                );
            };
            match sandbox.finish_checkpoint(&inner.sandbox_session, run).await {
                Ok(changes) => (run.to_owned(), changes),
                // The store keeps the run linked to its before-state (`Store::after_run`).
                Err(e) => {
                    return Recorded {
                        changes: Vec::new(),
                        not_undoable: None,
                        changes_unknown: Some(e.to_string()),
                    }
                }
            }
        }
    };
    if let Err(e) = inner
        .deps
        .history
        .record_run_checkpoint(execution_id, &run_id, &changes)
    {
        tracing::warn!(error = %e, "could not keep the run's checkpoint in the history");
        return not_undoable(
            changes,
            format!("the history could not keep its checkpoint: {e}"),
        );
    }
    Recorded {
        changes,
        not_undoable: None,
        changes_unknown: None,
    }
}

/// Handles `Op::UndoRun`; `redo` handles `Op::RedoRun`. Off the actor: restoring files takes
/// as long as the files are big.
pub(super) async fn undo(inner: Arc<Inner>, execution_id: ExecutionId, force: bool) {
    if let Err(message) = try_undo(&inner, execution_id, force).await {
        inner.emit(AgentEvent::Error {
            message: format!("could not undo that run: {message}"),
        });
    }
}

pub(super) async fn redo(inner: Arc<Inner>, execution_id: ExecutionId) {
    if let Err(message) = try_redo(&inner, execution_id).await {
        inner.emit(AgentEvent::Error {
            message: format!("could not redo that run: {message}"),
        });
    }
}

/// Handles `Op::RewindTo`: every later run undone, newest first, each reported as its own
/// `RunUndone` (so each cell offers Redo) and audited; the model is told once.
pub(super) async fn rewind(inner: Arc<Inner>, execution_id: ExecutionId) {
    if let Err(message) = try_rewind(&inner, execution_id).await {
        inner.emit(AgentEvent::Error {
            message: format!("could not rewind to that run: {message}"),
        });
    }
}

async fn try_rewind(inner: &Inner, execution_id: ExecutionId) -> Result<(), String> {
    let run_id = run_of(inner, execution_id)?;
    let sandbox = inner.runtime().await?.sandbox.clone();
    let rewound = sandbox
        .rewind(&inner.sandbox_session, &run_id)
        .await
        .map_err(|e| e.to_string())?;
    let mut named = Vec::new();
    let mut all_restored = Vec::new();
    for (run, changes) in &rewound.undone {
        let restored = ironclaw_sandbox::sandbox::checkpoints::file_changes(changes);
        // Runs of other front ends (`ironclaw exec`) have no execution here: their files are
        // back all the same, and said so in the note.
        let Some(id) = executions_of(inner, std::slice::from_ref(run)).pop() else {
            all_restored.extend(restored);
            continue;
        };
        if let Err(e) = inner.deps.history.set_run_undone(id, true) {
            tracing::warn!(error = %e, "could not mark a run undone in the history");
        }
        inner.audit(AuditRecord::RunUndone {
            conversation_id: inner.conversation,
            execution_id: id,
            run_id: run.clone(),
            redone: false,
            paths: restored.iter().map(|c| c.path.clone()).collect(),
            also_undone: Vec::new(),
        });
        inner.emit(AgentEvent::RunUndone {
            execution_id: id,
            restored: restored.clone(),
            also_undone: Vec::new(),
        });
        named.push(id);
        all_restored.extend(restored);
    }
    if !rewound.undone.is_empty() {
        let runs = named
            .iter()
            .map(|id| runs_named(inner, *id, &[]))
            .collect::<Vec<_>>()
            .join(", ");
        note(
            inner,
            &format!(
                "The user rewound the workspace to how it was right after {}: {} were undone \
                 and the files they changed are back ({}). Variables in the interpreters are \
                 unchanged. Do not assume those files still hold what the undone runs left.",
                runs_named(inner, execution_id, &[]),
                if runs.is_empty() {
                    "later runs".to_owned()
                } else {
                    runs
                },
                listed(&all_restored)
            ),
        );
    }
    inner.emit(AgentEvent::Rewound {
        execution_id,
        undone: named,
    });
    match rewound.stopped {
        Some(why) => Err(format!("stopped before reaching it: {why}")),
        None => Ok(()),
    }
}

async fn try_undo(inner: &Inner, execution_id: ExecutionId, force: bool) -> Result<(), String> {
    let run_id = run_of(inner, execution_id)?;
    let sandbox = inner.runtime().await?.sandbox.clone();
    let (_, outcome) = sandbox
        .undo(&inner.sandbox_session, Some(&run_id), force)
        .await
        .map_err(|e| e.to_string())?;
    match outcome {
        UndoOutcome::Conflicts { later_runs, paths } => {
            inner.emit(AgentEvent::UndoBlocked {
                execution_id,
                later_runs: executions_of(inner, &later_runs),
                paths,
            });
        }
        UndoOutcome::Restored {
            changes,
            also_undone,
        } => {
            let also = executions_of(inner, &also_undone);
            for id in also.iter().chain(std::iter::once(&execution_id)) {
                if let Err(e) = inner.deps.history.set_run_undone(*id, true) {
                    tracing::warn!(error = %e, "could not mark a run undone in the history");
                }
            }
            let restored = ironclaw_sandbox::sandbox::checkpoints::file_changes(&changes);
            inner.audit(AuditRecord::RunUndone {
                conversation_id: inner.conversation,
                execution_id,
                run_id,
                redone: false,
                paths: restored.iter().map(|c| c.path.clone()).collect(),
                also_undone: also.clone(),
            });
            note(
                inner,
                &format!(
                    "The user undid {}: the workspace files it changed are back as they were \
                     before it ({}). Variables in the interpreters are unchanged. Do not assume \
                     those files still hold what the run left.",
                    runs_named(inner, execution_id, &also),
                    listed(&restored)
                ),
            );
            inner.emit(AgentEvent::RunUndone {
                execution_id,
                restored,
                also_undone: also,
            });
        }
    }
    Ok(())
}

async fn try_redo(inner: &Inner, execution_id: ExecutionId) -> Result<(), String> {
    let run_id = run_of(inner, execution_id)?;
    let sandbox = inner.runtime().await?.sandbox.clone();
    let changes = sandbox
        .redo(&inner.sandbox_session, &run_id)
        .await
        .map_err(|e| e.to_string())?;
    if let Err(e) = inner.deps.history.set_run_undone(execution_id, false) {
        tracing::warn!(error = %e, "could not mark a run redone in the history");
    }
    inner.audit(AuditRecord::RunUndone {
        conversation_id: inner.conversation,
        execution_id,
        run_id,
        redone: true,
        paths: changes.iter().map(|c| c.path.clone()).collect(),
        also_undone: Vec::new(),
    });
    note(
        inner,
        &format!(
            "The user redid {}: the files it changed are as it left them again ({}).",
            runs_named(inner, execution_id, &[]),
            listed(&changes)
        ),
    );
    inner.emit(AgentEvent::RunRedone {
        execution_id,
        changes,
    });
    Ok(())
}

fn run_of(inner: &Inner, execution_id: ExecutionId) -> Result<String, String> {
    let checkpoint = inner
        .deps
        .history
        .run_checkpoint(execution_id)
        .map_err(|e| e.to_string())?
        .ok_or("that run has no checkpoint (it ran before undo existed, or its changes could not be recorded)")?;
    let execution = inner
        .deps
        .history
        .get_execution(execution_id)
        .map_err(|e| e.to_string())?;
    if execution.conversation_id != inner.conversation {
        return Err("that run belongs to another conversation".into());
    }
    Ok(checkpoint.run_id)
}

/// The executions of checkpoint-record run ids (runs of other front ends, such as `ironclaw
/// exec`, have none and are left out).
fn executions_of(inner: &Inner, runs: &[String]) -> Vec<ExecutionId> {
    runs.iter()
        .filter_map(|r| {
            inner
                .deps
                .history
                .execution_of_run(inner.conversation, r)
                .ok()
                .flatten()
        })
        .collect()
}

/// "run #3" or "run #3 (and the later runs #4, #5 that changed the same files)".
fn runs_named(inner: &Inner, execution_id: ExecutionId, also: &[ExecutionId]) -> String {
    let number = |id: &ExecutionId| {
        inner
            .deps
            .history
            .get_execution(*id)
            .map(|x| format!("#{}", x.number))
            .unwrap_or_else(|_| "?".into())
    };
    let mut named = format!("run {}", number(&execution_id));
    if !also.is_empty() {
        let later: Vec<String> = also.iter().map(number).collect();
        named.push_str(&format!(
            " (and the later runs {} that changed the same files)",
            later.join(", ")
        ));
    }
    named
}

fn listed(changes: &[FileChange]) -> String {
    const SHOWN: usize = 20;
    let mut names: Vec<String> = changes
        .iter()
        .take(SHOWN)
        .map(|c| format!("{} ({})", c.path, c.change))
        .collect();
    if changes.len() > SHOWN {
        names.push(format!("and {} more", changes.len() - SHOWN));
    }
    if names.is_empty() {
        "no files".into()
    } else {
        names.join(", ")
    }
}

/// Shown in the thread now, and told to the model with the person's next message.
fn note(inner: &Inner, text: &str) {
    if let Err(e) = inner.deps.history.add_message(&NewMessage {
        conversation_id: inner.conversation,
        turn_id: None,
        role: MessageRole::ModelNote,
        content: text.to_owned(),
        status: MessageStatus::Complete,
        model: None,
    }) {
        tracing::warn!(error = %e, "could not keep the note for the model in the history");
    }
    if let Ok(mut notes) = inner.model_notes.lock() {
        notes.push(text.to_owned());
    }
}
