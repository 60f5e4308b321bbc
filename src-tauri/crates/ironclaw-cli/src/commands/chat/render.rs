//! How the session's events are shown: text and stdout on stdout, everything else on stderr,
//! every string from the model or the sandbox made inert first.

use std::io::Write;

use ironclaw_protocol::{AgentEvent, OutputStream};

use crate::terminal::inert;

pub(super) fn render(event: AgentEvent) {
    let mut out = std::io::stdout();
    match event {
        AgentEvent::TextDelta { text, .. } => {
            let _ = out.write_all(inert(&text).as_bytes());
            let _ = out.flush();
        }
        // Thinking goes to stderr, so a piped answer (`ironclaw chat … > answer.md`) is only
        // the answer.
        AgentEvent::ReasoningDelta { text, .. } => eprint!("{}", inert(&text)),
        AgentEvent::Note { text } => eprintln!("\n[{}]", inert(&text)),
        AgentEvent::ExecutionStarted {
            language, number, ..
        } => eprintln!("\n── run #{number} ({language}) ──"),
        AgentEvent::ExecutionOutput { stream, text, .. } => match stream {
            OutputStream::Stdout => {
                let _ = out.write_all(inert(&text).as_bytes());
                let _ = out.flush();
            }
            OutputStream::Stderr => eprint!("{}", inert(&text)),
        },
        AgentEvent::ExecutionEnded {
            exit_code,
            duration_ms,
            timed_out,
            oom_killed,
            quota_exceeded,
            changes,
            not_undoable,
            changes_unknown,
            ..
        } => {
            let mut line = format!("── exit {exit_code} · {:.0} ms", duration_ms);
            match (changes.len(), &not_undoable) {
                _ if changes_unknown.is_some() => line.push_str(&format!(
                    " · what it changed could not be recorded: {} · /undo puts the files back \
                     as before it",
                    inert(changes_unknown.as_deref().unwrap_or_default())
                )),
                (0, None) => {}
                (n, None) => line.push_str(&format!(" · {n} file(s) changed (/undo)")),
                (n, Some(why)) => line.push_str(&format!(
                    " · {n} file(s) changed · cannot be undone: {}",
                    inert(why)
                )),
            }
            if quota_exceeded.is_some() {
                line.push_str(" · workspace quota");
            }
            if timed_out {
                line.push_str(" · timed out");
            }
            if oom_killed {
                line.push_str(" · out of memory");
            }
            eprintln!("{line} ──");
        }
        AgentEvent::ApprovalResolved {
            approved,
            auto: true,
            reason,
            ..
        } => {
            eprintln!(
                "(auto-{}: {})",
                if approved { "approved" } else { "denied" },
                inert(&reason.unwrap_or_default())
            );
        }
        AgentEvent::DecisionRejected { message, .. } => eprintln!("decision refused: {message}"),
        AgentEvent::RunUndone {
            restored,
            also_undone,
            ..
        } => {
            if !also_undone.is_empty() {
                eprintln!(
                    "(undid {} later run(s) that changed the same files first)",
                    also_undone.len()
                );
            }
            eprintln!(
                "undone: {} path(s) restored; variables in the interpreters are unchanged",
                restored.len()
            );
        }
        AgentEvent::UndoBlocked {
            later_runs, paths, ..
        } => eprintln!(
            "not undone: {} later run(s) changed the same files ({}); nothing changed. \
             /undo N --force takes them back too",
            later_runs.len(),
            inert(&paths.join(", "))
        ),
        AgentEvent::RunRedone { changes, .. } => {
            eprintln!("redone: {} path(s) changed again", changes.len())
        }
        AgentEvent::Rewound { undone, .. } => eprintln!(
            "rewound: {} later run(s) undone; the files are as that run left them (/redo N brings one back)",
            undone.len()
        ),
        AgentEvent::ApprovalExpired { reason, .. } => eprintln!("approval expired: {reason}"),
        AgentEvent::PolicyChanged { policy, flagged } => {
            eprintln!(
                "policy: {}{}",
                policy.as_str(),
                if flagged {
                    " (WARNING: code runs without asking)"
                } else {
                    ""
                }
            );
        }
        AgentEvent::Error { message } => eprintln!("error: {message}"),
        AgentEvent::NetworkBlocked {
            target,
            reason,
            already_denied,
            ..
        } => {
            let target = inert(&target);
            if already_denied {
                eprintln!("network: {target} blocked again (you denied it)");
            } else {
                eprintln!(
                    "network: {target} was blocked by IronClaw's network policy ({}). \
                     Allow it with /allow {target} [once|conversation|always], or /deny {target}",
                    inert(&reason)
                );
            }
        }
        AgentEvent::FetchStarted { url, .. } => eprintln!("\n── fetch {} ──", inert(&url)),
        // Asked by the chat loop, which reads the answer.
        AgentEvent::FetchHostAsked { .. } | AgentEvent::UserMessageSaved { .. } => {}
        AgentEvent::ImageViewed {
            path,
            width,
            height,
            error,
            ..
        } => match error {
            None => eprintln!("showed the model {} ({width}×{height})", inert(&path)),
            Some(why) => eprintln!("could not show {}: {}", inert(&path), inert(&why)),
        },
        AgentEvent::FetchEnded { report, .. } => {
            match (&report.error, report.status) {
                (Some(error), _) => eprintln!("fetch failed: {}", inert(error)),
                (None, status) => eprintln!(
                    "fetched {} (HTTP {}, {} bytes{}){}",
                    inert(report.final_url.as_deref().unwrap_or(&report.url)),
                    status.unwrap_or_default(),
                    report.bytes,
                    if report.cut { ", cut" } else { "" },
                    report
                        .title
                        .as_deref()
                        .map(|t| format!(": {}", inert(t)))
                        .unwrap_or_default()
                ),
            }
            for warning in &report.warnings {
                eprintln!(
                    "WARNING: the page contains text addressed to an AI, which may try to steer \
                     it: \"{}\"",
                    inert(warning)
                );
            }
        }
        AgentEvent::NetworkDecided {
            target, decision, ..
        } => eprintln!("network: {}: {decision}", inert(&target)),
        AgentEvent::ExecutionNetwork {
            allowed, denied, ..
        } => {
            let list = |hosts: &[String]| {
                hosts
                    .iter()
                    .map(|h| inert(h))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            eprintln!(
                "network: reached [{}], blocked [{}]",
                list(&allowed),
                list(&denied)
            );
        }
        AgentEvent::Compacted {
            tokens_before,
            tokens_after,
            ..
        } => eprintln!(
            "\n[context: the earlier conversation was summarised to fit the model's window \
             (about {tokens_before} → {tokens_after} tokens)]"
        ),
        AgentEvent::Instructions { files } => eprintln!("\n[{}]", instructions_line(&files)),
        AgentEvent::ModelChanged { provider, model } => {
            eprintln!("[model: {} from the next message]", inert(&format!("{provider}:{model}")));
        }
        AgentEvent::TurnStarted { .. }
        | AgentEvent::ContextUsage { .. }
        | AgentEvent::AssistantMessage { .. }
        | AgentEvent::ApprovalResolved { .. }
        | AgentEvent::ApprovalRequested(_)
        | AgentEvent::MessageNotSaved { .. }
        | AgentEvent::ExecutionResources { .. }
        | AgentEvent::TurnEnded { .. } => {}
    }
}

/// "instructions: AGENTS.md (yours, 1.2 KiB), AGENTS.md (workspace, cut at 32 KiB)".
fn instructions_line(files: &[ironclaw_protocol::InstructionFile]) -> String {
    use ironclaw_protocol::InstructionScope;
    if files.is_empty() {
        return "instructions: none now".to_string();
    }
    let each: Vec<String> = files
        .iter()
        .map(|f| {
            let scope = match f.scope {
                InstructionScope::User => "yours",
                InstructionScope::Workspace => "workspace",
            };
            match &f.problem {
                Some(problem) => format!("{} ({scope}, {})", inert(&f.name), inert(problem)),
                None if f.cut => format!(
                    "{} ({scope}, {} bytes, cut to the first {})",
                    inert(&f.name),
                    f.bytes,
                    ironclaw_agent::instructions::MAX_BYTES
                ),
                None => format!("{} ({scope}, {} bytes)", inert(&f.name), f.bytes),
            }
        })
        .collect();
    format!("instructions: {}", each.join(", "))
}
