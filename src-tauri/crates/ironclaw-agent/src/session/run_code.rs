//! One `run_code` call: decode → classify → record the request → approval (policy, rule, or a
//! person) → run exactly the approved code in the sandbox → record → tell the model what
//! happened, in words that stop it from asking twice for the same thing.

use std::sync::Arc;

use ironclaw_llm::ToolCall;
use ironclaw_protocol::{
    AgentEvent, ApprovalRequest, AuditRecord, DecidedBy, DecisionChoice, DecisionRecord,
    ExecResultRecord, Language, OutputStream, ToolCallId, TurnId,
};
use ironclaw_sandbox::exec::{ExecEvent, ExecRequest, ExecResult};
use ironclaw_store::{ApprovalDecision, ExecutionOutcome, NewApproval, OutputExcerpt, Verdict};
use serde_json::json;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::leftovers::{altered_notes, learn_leftovers, remember_alterations, runs_named};
use super::step::StepError;
use super::Inner;
use crate::approval::{Resolution, Ticket, Triage};
use crate::tools;

/// Returns the tool result for the model and whether it is an error.
pub(super) async fn handle(
    inner: &Arc<Inner>,
    turn: TurnId,
    tool_call_id: ToolCallId,
    call: &ToolCall,
    cancel: &CancellationToken,
) -> Result<(String, bool), StepError> {
    let run = if ironclaw_mcp::names::is_mcp(&call.name) {
        match super::mcp::decode(inner, call) {
            Ok(run) => run,
            Err(e) => return Ok((e, true)),
        }
    } else {
        match tools::decode(&call.name, &call.arguments) {
            Ok(run) => run,
            // Marked as an error; each wire format adds its own error framing.
            Err(e) => return Ok((e.to_string(), true)),
        }
    };
    let language = run.language;
    // Rated by what it does to the workspace as it is now (no Docker needed: a host folder).
    // Before its first run a session has no record yet: its folder is the one the record
    // will name (the person's, or the default place), empty if it is not there yet.
    let workspace = inner.runtime_now().map(|rt| {
        rt.sandbox
            .workspace(&inner.sandbox_session)
            .ok()
            .or_else(|| inner.sandbox_options.workspace.clone())
            .unwrap_or_else(|| {
                rt.sandbox
                    .paths()
                    .workspaces_dir()
                    .join(inner.sandbox_session.as_str())
            })
    });
    inner.classifier.in_workspace(workspace);
    let assessment = inner.classifier.assess(run.language, &run.code);
    let approval = inner
        .deps
        .history
        .request_approval(&NewApproval {
            conversation_id: inner.conversation,
            tool_call_id: Some(tool_call_id),
            language,
            code: run.code.clone(),
            risk: assessment.level,
            reasons: assessment
                .reasons
                .iter()
                .map(|r| r.message.clone())
                .collect(),
        })
        .map_err(|e| StepError::Failed(format!("could not record the request: {e}")))?;
    inner
        .try_audit(AuditRecord::ExecRequested {
            approval_id: approval.id,
            conversation_id: inner.conversation,
            language,
            code_hash: approval.code_hash,
            risk: assessment.level,
        })
        .map_err(|e| StepError::Failed(format!("{e}. Nothing was asked or run")))?;

    if language.is_interpreted() {
        learn_leftovers(inner).await;
    }
    let verdict = inner
        .gate
        .lock()
        .map(|g| g.check(language, &run.code))
        .unwrap_or(Triage::Ask);
    let mut checkpointed = None;
    let ticket = match verdict {
        Triage::AutoApproved { reason } => {
            auto_approve(inner, &approval.id, language, &run.code, false, &reason)?
        }
        Triage::IfUndoable { reason } => match prove_undoable(inner).await {
            Ok(checkpoint) => {
                checkpointed = Some(checkpoint);
                auto_approve(inner, &approval.id, language, &run.code, true, &reason)?
            }
            Err(why) => match ask(inner, &approval, &run, &assessment, Some(why), cancel).await? {
                Ok(ticket) => ticket,
                Err(denied) => return Ok(denied),
            },
        },
        other @ (Triage::Ask | Triage::AskBecause(_)) => {
            let because = match other {
                Triage::AskBecause(why) => Some(why),
                _ => None,
            };
            match ask(inner, &approval, &run, &assessment, because, cancel).await? {
                Ok(ticket) => ticket,
                Err(denied) => return Ok(denied),
            }
        }
    };
    if let Some(why) = &assessment.alters_session {
        if let Ok(mut gate) = inner.gate.lock() {
            gate.taint(why.clone());
        }
    }
    if ticket.language == Language::Mcp {
        return super::mcp::execute(inner, turn, &approval.id, ticket, cancel).await;
    }
    execute(inner, &approval.id, ticket, checkpointed, cancel).await
}

fn auto_approve(
    inner: &Inner,
    approval_id: &ironclaw_protocol::ApprovalId,
    language: ironclaw_protocol::Language,
    code: &str,
    undoable: bool,
    reason: &str,
) -> Result<Ticket, StepError> {
    let ticket = inner
        .gate
        .lock()
        .ok()
        .and_then(|g| g.auto_ticket(language, code, undoable))
        .ok_or_else(|| {
            StepError::Failed("the approval policy changed mid-request; try again".into())
        })?;
    record_auto(inner, approval_id, &ticket, reason);
    Ok(ticket)
}

/// Under ask-unless-undoable: whether every effect of the next run can be taken back. Takes
/// the run's checkpoint now (its id is returned, for the run to use), after making sure no
/// earlier run's thread is still running in an interpreter (what it writes later belongs to no
/// run's checkpoint). Otherwise, in words for the person, why it cannot.
async fn prove_undoable(inner: &Arc<Inner>) -> Result<String, String> {
    let live = inner
        .altered
        .lock()
        .ok()
        .map(|altered| {
            altered
                .values()
                .flatten()
                .filter(|a| matches!(a.kind.as_str(), "thread" | "check"))
                .map(|a| super::leftovers::attributed(inner, a))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    if !live.is_empty() {
        return Err(format!(
            "{}: what it does from now on belongs to no run, so it could not be undone \
             (start a fresh interpreter to end it)",
            live.join("; ")
        ));
    }
    let sandbox = inner.runtime().await?.sandbox.clone();
    let run = sandbox
        .prepare_checkpoint(&inner.sandbox_session, &inner.sandbox_options)
        .await
        .map_err(|e| {
            format!("the workspace could not be checkpointed, so this run could not be undone: {e}")
        })?;
    let held = sandbox
        .held_for_writing(&inner.sandbox_session)
        .await
        .map_err(|e| e.to_string())?;
    if !held.is_empty() {
        const SHOWN: usize = 5;
        let mut named = held
            .iter()
            .take(SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if held.len() > SHOWN {
            named.push_str(&format!(" and {} more", held.len() - SHOWN));
        }
        return Err(format!(
            "a process in the sandbox holds {named} open for writing (a memory mapping or a file \
             an earlier run kept open): it can change what is there at any moment without that \
             being recorded, so this run could not be undone for certain (start a fresh \
             interpreter to let go of it)"
        ));
    }
    Ok(run)
}

/// Waits for a person's decision. `Ok(Err(note))`: denied, `note` is the model's tool result.
async fn ask(
    inner: &Arc<Inner>,
    approval: &ironclaw_store::Approval,
    run: &tools::RunCode,
    assessment: &crate::risk::Assessment,
    asked_because: Option<String>,
    cancel: &CancellationToken,
) -> Result<Result<Ticket, (String, bool)>, StepError> {
    let language = run.language;
    let (tx, rx) = oneshot::channel();
    let pending = match inner.gate.lock() {
        Ok(mut gate) => gate.request(approval.id, language, &run.code),
        Err(_) => return Err(StepError::Failed("the approval gate is unavailable".into())),
    };
    if let Ok(mut w) = inner.waiters.lock() {
        w.insert(approval.id, tx);
    }
    inner.emit(AgentEvent::ApprovalRequested(ApprovalRequest {
        approval_id: approval.id,
        code_hash: pending.hash,
        language,
        code: run.code.clone(),
        risk: assessment.level,
        reasons: assessment.reasons.clone(),
        destructive: pending.destructive,
        choices: DecisionChoice::for_code(pending.destructive),
        altered_session: altered_notes(inner, run.language),
        asked_because,
    }));
    // Nothing runs while we wait; only the actor (handling Op::Decide) can answer.
    let resolution = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(StepError::Cancelled),
        r = rx => match r {
            Ok(r) => r,
            // A cancel expires the approval (dropping our channel) before we see it.
            Err(_) if cancel.is_cancelled() => return Err(StepError::Cancelled),
            Err(_) => return Err(StepError::Failed("the session closed while waiting for approval".into())),
        },
    };
    Ok(match resolution {
        Resolution::Run(ticket) => Ok(ticket),
        Resolution::Denied { reason, .. } => {
            Err((super::notes::denied_note(reason.as_deref()), true))
        }
    })
}

fn record_auto(
    inner: &Inner,
    approval_id: &ironclaw_protocol::ApprovalId,
    ticket: &Ticket,
    reason: &str,
) {
    let decision = ApprovalDecision {
        verdict: Verdict::Approve,
        scope: ticket.scope,
        decided_by: DecidedBy::Policy,
        reason: Some(reason.to_string()),
        edited_code: None,
    };
    if let Err(e) = inner.deps.history.decide_approval(*approval_id, &decision) {
        inner.emit(AgentEvent::Error {
            message: format!("could not record the automatic approval: {e}"),
        });
    }
    inner.audit(AuditRecord::Decision(DecisionRecord::automatic(
        *approval_id,
        ticket.scope,
        ticket.hash,
        reason,
    )));
    inner.emit(AgentEvent::ApprovalResolved {
        approval_id: *approval_id,
        approved: true,
        decided_by: DecidedBy::Policy,
        user_edited: false,
        auto: true,
        reason: Some(reason.to_string()),
    });
}

async fn execute(
    inner: &Arc<Inner>,
    approval_id: &ironclaw_protocol::ApprovalId,
    ticket: Ticket,
    checkpointed: Option<String>,
    cancel: &CancellationToken,
) -> Result<(String, bool), StepError> {
    let execution = begin(inner, approval_id, &ticket)?;
    let language = ticket.language;
    let mut live_budget = inner.config.live_output_cap;
    let events = inner.events.clone();
    let execution_id = execution.id;
    let session = inner.clone();
    let mut on_event = move |event: ExecEvent| {
        let (stream, data) = match event {
            ExecEvent::Stdout(d) => (OutputStream::Stdout, d),
            ExecEvent::Stderr(d) => (OutputStream::Stderr, d),
            ExecEvent::Resources(s) => {
                let _ = events.send(AgentEvent::ExecutionResources {
                    execution_id,
                    cpu_percent: s.cpu_percent,
                    memory_bytes: s.memory_bytes,
                    pids: s.pids,
                });
                return;
            }
            ExecEvent::NetworkBlocked(refusal) => {
                super::network::blocked(&session, execution_id, refusal);
                return;
            }
            ExecEvent::Started { .. } => return,
        };
        // Live output is for watching; past the budget the result and log file carry it.
        if live_budget == 0 {
            return;
        }
        let take = data.len().min(live_budget);
        live_budget -= take;
        let _ = events.send(AgentEvent::ExecutionOutput {
            execution_id,
            stream,
            text: String::from_utf8_lossy(&data[..take]).into_owned(),
        });
    };
    let fresh = ticket
        .approval_id
        .and_then(|id| inner.fresh.lock().ok().map(|mut f| f.remove(&id)))
        .unwrap_or(false);
    let sandbox = inner
        .runtime()
        .await
        .map_err(StepError::Failed)?
        .sandbox
        .clone();
    let checkpointed = super::undo::prepare(inner, &sandbox, execution.id, checkpointed).await;
    let request = ExecRequest::new(language, ticket.code.clone())
        .fresh_interpreter(fresh)
        .checkpointed(checkpointed.clone());
    let result = super::orphan::exec(
        inner,
        &sandbox,
        execution_id,
        &request,
        &mut on_event,
        cancel,
    )
    .await;
    let activity = result.as_ref().ok().and_then(|r| r.network.as_ref());
    super::network::summary(inner, execution_id, activity);
    let super::undo::Recorded {
        changes,
        not_undoable,
        changes_unknown,
    } = super::undo::record(
        inner,
        &sandbox,
        execution_id,
        &result,
        checkpointed.as_deref(),
    )
    .await;
    let ran_before = inner
        .ran_before
        .swap(true, std::sync::atomic::Ordering::AcqRel);
    let mut precise_ms = 0.0;
    let mut integrity = None;
    if let Ok(r) = &result {
        if let Ok(mut numbers) = inner.run_numbers.lock() {
            numbers.insert(r.seq, execution.number);
        }
        integrity = Some(
            json!({"fresh_interpreter": fresh, "altered_before": r.altered_before,
                           "altered_by_runs": runs_named(inner, &r.altered_before),
                           "forged_completions": r.forged_completions}),
        );
        remember_alterations(inner, language, &r.altered_after);
    }
    let mut quota_exceeded = None;
    let (outcome, text, is_error) = match result {
        Ok(r) => {
            precise_ms = r.duration_ms;
            quota_exceeded = r.quota_exceeded.as_ref().map(|q| q.message.clone());
            let text = super::notes::result_note(inner, &ticket, &r, ran_before);
            (outcome_of(&r), text, r.exit_code != 0)
        }
        Err(e) => {
            let outcome = ExecutionOutcome {
                exit_code: None,
                duration_ms: 0,
                peak_memory_bytes: None,
                timed_out: false,
                cancelled: cancel.is_cancelled(),
                oom_killed: false,
                stdout: OutputExcerpt::default(),
                stderr: OutputExcerpt {
                    head: e.to_string(),
                    tail: String::new(),
                },
                log_path: None,
            };
            (
                outcome,
                format!("The user approved this run, but the sandbox failed: {e}"),
                true,
            )
        }
    };
    // Both records are attempted whatever the other did: the audit's result is what the next
    // start reconciles the history from (see `ironclaw_store::reconcile`).
    let mut unrecorded = Vec::new();
    if let Err(e) = inner.deps.history.finish_execution(execution.id, &outcome) {
        tracing::debug!(error = %e, execution_id = %execution.id, "the run's result could not be recorded in the history");
        unrecorded.push(format!("the history: {e}"));
    }
    if let Err(e) = inner.try_audit(AuditRecord::ExecResult(ExecResultRecord {
        approval_id: *approval_id,
        execution_id: execution.id,
        exit_code: outcome.exit_code,
        duration_ms: Some(outcome.duration_ms),
        peak_memory_bytes: outcome.peak_memory_bytes,
        timed_out: outcome.timed_out,
        cancelled: outcome.cancelled,
        oom_killed: outcome.oom_killed,
        integrity,
        reconciled_from: None,
        ended_at: None,
    })) {
        unrecorded.push(format!("the audit log: {e}"));
    }
    inner.emit(AgentEvent::ExecutionEnded {
        execution_id: execution.id,
        exit_code: outcome.exit_code.map(|c| c as i32).unwrap_or(-1),
        duration_ms: precise_ms,
        timed_out: outcome.timed_out,
        cancelled: outcome.cancelled,
        oom_killed: outcome.oom_killed,
        peak_memory_bytes: outcome.peak_memory_bytes.unwrap_or(0),
        truncated: outcome.log_path.is_some(),
        log_file: outcome.log_path.clone(),
        quota_exceeded,
        changes,
        not_undoable,
        changes_unknown,
    });
    if !unrecorded.is_empty() {
        let ended = match outcome.exit_code {
            Some(code) => format!("exit code {code}"),
            None => "no exit code".to_string(),
        };
        return Err(StepError::AfterRun {
            content: text,
            is_error,
            message: format!(
                "the approved run finished ({ended}), but IronClaw could not record its result \
                 in {}. The turn stopped here and the run will not be repeated",
                unrecorded.join("; nor in ")
            ),
        });
    }
    if cancel.is_cancelled() {
        return Err(StepError::Cancelled);
    }
    Ok((text, is_error))
}

/// Starts the approved execution's record and announces it; nothing runs unless what led to it
/// is in the audit log and the history hands back the ticket's code, byte for byte. Shared by
/// `run_code` and MCP calls.
pub(super) fn begin(
    inner: &Inner,
    approval_id: &ironclaw_protocol::ApprovalId,
    ticket: &Ticket,
) -> Result<ironclaw_store::Execution, StepError> {
    let unaudited = inner.unaudited.lock().ok().and_then(|u| u.clone());
    if let Some(why) = unaudited {
        return Err(StepError::Failed(format!(
            "{why}. Nothing approved was run: it runs only when its approval is in the audit log"
        )));
    }
    let execution = inner
        .deps
        .history
        .start_execution(*approval_id, None)
        .map_err(|e| StepError::Failed(format!("could not record the execution: {e}")))?;
    if execution.code != ticket.code {
        return Err(StepError::Failed(
            "what was approved and what was to run differ; nothing was run".into(),
        ));
    }
    inner.emit(AgentEvent::ExecutionStarted {
        execution_id: execution.id,
        number: execution.number,
        approval_id: *approval_id,
        language: ticket.language,
        code: ticket.code.clone(),
    });
    Ok(execution)
}

fn outcome_of(r: &ExecResult) -> ExecutionOutcome {
    let excerpt = |s: &str| OutputExcerpt {
        head: super::notes::head(s, 4096),
        tail: if s.len() > 4096 {
            super::notes::tail(s, 4096)
        } else {
            String::new()
        },
    };
    ExecutionOutcome {
        exit_code: Some(i64::from(r.exit_code)),
        duration_ms: r.duration_ms.max(0.0) as u64,
        peak_memory_bytes: Some(r.peak_memory_bytes),
        timed_out: r.timed_out,
        cancelled: r.cancelled,
        oom_killed: r.oom_killed,
        stdout: excerpt(&r.stdout),
        stderr: excerpt(&r.stderr),
        // One path per run: stdout's log, or stderr's when only stderr overflowed (the other
        // stream's log, when there is one, is its sibling).
        log_path: r
            .log_file
            .as_ref()
            .or(r.stderr_log_file.as_ref())
            .map(|p| p.display().to_string()),
    }
}
