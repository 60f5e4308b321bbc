//! What the model is told about a run: its result (clipped to the budget, with what IronClaw
//! noticed: forged completions, an altered interpreter, refused hosts), or that it was denied.

use ironclaw_sandbox::exec::ExecResult;

use super::leftovers::describe;
use super::Inner;
use crate::approval::Ticket;

/// What the model reads after a run. It always starts with the decision, so the model knows
/// the person already answered and must not ask again.
pub(super) fn result_note(
    inner: &Inner,
    ticket: &Ticket,
    r: &ExecResult,
    ran_before: bool,
) -> String {
    // At most a quarter of the model's window (at three bytes a token), so one run's output
    // never crowds out the rest of the conversation on a small local model.
    let budget = match inner.runtime_now() {
        Some(rt) => inner
            .config
            .output_to_model
            .min(rt.context_window.tokens as usize * 3 / 4),
        None => inner.config.output_to_model,
    };
    let mut note = if ticket.user_edited {
        format!(
            "The user edited your code and approved the edited version. This is what ran:\n```{}\n{}\n```\n",
            ticket.language, ticket.code
        )
    } else if ticket.approval_id.is_none() {
        "This run was approved automatically by the session's policy.\n".to_string()
    } else {
        "The user approved this run.\n".to_string()
    };
    note.push_str(&format!("Exit code: {}", r.exit_code));
    if r.timed_out {
        note.push_str(&format!(
            " (timed out after {:.1}s; the interpreter kept its state)",
            r.duration_ms / 1000.0
        ));
    }
    if r.cancelled {
        note.push_str(" (cancelled by the user)");
    }
    if r.oom_killed {
        note.push_str(
            " (killed: out of memory; the interpreter was restarted and its state is gone)",
        );
    } else if let Some(q) = r.quota_exceeded.as_ref().filter(|q| q.stopped) {
        note.push_str(&format!(
            " (stopped by IronClaw: the workspace quota; the sandbox was restarted and its state \
             is gone)\n{} Do not retry the same writes: ask the user to free space or raise the \
             quota.",
            q.message
        ));
    } else if r.interpreter_lost {
        note.push_str(" (the interpreter exited; the next run starts a fresh one)");
    }
    if let Some(q) = r.quota_exceeded.as_ref().filter(|q| !q.stopped) {
        note.push_str(&format!("\n{}", q.message));
    }
    if r.container_started && ran_before {
        note.push_str(
            "\nNote: the sandbox was (re)started for this run, so earlier variables are gone.",
        );
    }
    if r.forged_completions > 0 {
        note.push_str(&format!(
            "\nNote: the code wrote {} line(s) posing as the interpreter's completion to \
             IronClaw's control channel; they were ignored, and the exit code above is the \
             interpreter's own.",
            r.forged_completions
        ));
    }
    if !r.altered_before.is_empty() {
        note.push_str(&format!(
            "\nNote: this ran in an interpreter that earlier runs had altered ({}).",
            describe(inner, &r.altered_before)
        ));
    }
    if let Some(net) = r.network.as_ref().filter(|n| !n.denied.is_empty()) {
        note.push_str(&format!(
            "\nIronClaw's network policy blocked: {}. The user has been asked whether to allow \
             it; do not try to get around the policy. If it is needed, say so and wait for the \
             user.",
            net.denied.join(", ")
        ));
    }
    for (name, text) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
        if !text.is_empty() {
            note.push_str(&format!("\n{name}:\n{}", clip(text, budget / 2)));
        }
    }
    if r.stdout.is_empty() && r.stderr.is_empty() {
        note.push_str("\n(no output)");
    }
    note
}

pub(super) fn denied_note(reason: Option<&str>) -> String {
    let mut note = "The user DENIED this run; it did not execute.".to_string();
    if let Some(reason) = reason.filter(|r| !r.trim().is_empty()) {
        note.push_str(&format!(" Their reason: {reason}"));
    }
    note.push_str(" Do not request the same code again. Change your approach, or ask the user how to proceed.");
    note
}

fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    format!(
        "{}\n[… {} bytes omitted …]\n{}",
        head(s, max / 2),
        s.len() - max,
        tail(s, max / 2)
    )
}

pub(super) fn head(s: &str, n: usize) -> String {
    let mut end = n.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

pub(super) fn tail(s: &str, n: usize) -> String {
    let mut start = s.len().saturating_sub(n);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s[start..].to_string()
}
