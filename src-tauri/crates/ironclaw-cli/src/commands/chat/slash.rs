//! The in-chat slash commands: the conversation's approval policy, its saved rules and network
//! decisions, read and changed from the prompt.

use ironclaw_protocol::{ApprovalPolicy, ConversationId, DecidedBy, HostDecision, Op};

/// `/policy NAME`, in the spelling `--policy` takes (and the older ones it still reads).
fn parse_policy(s: &str) -> anyhow::Result<ApprovalPolicy> {
    s.parse().map_err(|_| {
        let names: Vec<&str> = ApprovalPolicy::ALL.iter().map(|p| p.as_str()).collect();
        anyhow::anyhow!("unknown policy {s:?}: use {}", names.join(", "))
    })
}

/// The run `/undo` or `/redo` means: the one numbered `number`, else the newest run that can be
/// undone (or, for redo, the newest undone one).
fn run_to(
    deps: &ironclaw_agent::Deps,
    conversation: ConversationId,
    number: Option<u32>,
    undone: bool,
) -> anyhow::Result<Option<ironclaw_protocol::ExecutionId>> {
    let mut runs: Vec<(u32, ironclaw_protocol::ExecutionId, bool)> = deps
        .history
        .run_checkpoints(conversation)?
        .into_iter()
        .filter_map(|(id, c)| {
            let x = deps.history.get_execution(id).ok()?;
            Some((x.number, id, c.undone))
        })
        .collect();
    runs.sort();
    Ok(match number {
        Some(n) => runs.iter().find(|r| r.0 == n).map(|r| r.1),
        None => runs.iter().rev().find(|r| r.2 == undone).map(|r| r.1),
    })
}

/// In-chat commands: the approval policy and saved rules are listable and revocable here.
pub(super) fn slash(
    command: &str,
    session: &ironclaw_agent::SessionHandle,
    deps: &ironclaw_agent::Deps,
    conversation: ConversationId,
) -> anyhow::Result<()> {
    let (name, arg) = command.split_once(' ').unwrap_or((command, ""));
    match name {
        "policy" if !arg.is_empty() => {
            let policy = parse_policy(arg.trim())?;
            session.send(Op::SetPolicy { policy })?;
            eprintln!("policy set to {policy}");
        }
        "policy" => {
            let policy = deps.history.get_conversation(conversation)?.approval_policy;
            eprintln!("policy: {}", policy.as_str());
        }
        "rules" => {
            let rules = deps.history.active_rules(conversation)?;
            if rules.is_empty() {
                eprintln!("no saved rules in this conversation");
            }
            for (_, a) in rules {
                let first = a.code.lines().next().unwrap_or_default();
                eprintln!("{}  {}  {}", a.code_hash.short(), a.language, first);
            }
        }
        "revoke" if !arg.is_empty() => {
            let prefix = arg.trim();
            let found = deps
                .history
                .active_rules(conversation)?
                .into_iter()
                .map(|(_, a)| a)
                .find(|a| a.code_hash.starts_with(prefix));
            match found {
                Some(a) => {
                    session.send(Op::RevokeRule {
                        code_hash: a.code_hash,
                    })?;
                    eprintln!("revoked");
                }
                None => eprintln!("no rule whose hash starts with {prefix} (see /rules)"),
            }
        }
        "allow" | "deny" if !arg.is_empty() => {
            let mut words = arg.split_whitespace();
            let target = words.next().unwrap_or_default().to_string();
            let decision = match (name, words.next()) {
                ("deny", None) => HostDecision::Deny,
                ("allow", None | Some("once")) => HostDecision::AllowOnce,
                // `session` is the older word for the same thing; it keeps working.
                ("allow", Some("conversation" | "session")) => HostDecision::AllowForSession,
                ("allow", Some("always")) => HostDecision::AllowAlways,
                _ => anyhow::bail!("use /allow HOST:PORT [once|conversation|always] or /deny HOST:PORT"),
            };
            session.send(Op::DecideHost {
                target,
                decision,
                decided_by: DecidedBy::Cli,
            })?;
        }
        "undo" | "redo" => {
            let mut words = arg.split_whitespace();
            let force = arg.split_whitespace().any(|w| w == "--force");
            let number = words.find(|w| *w != "--force").map(|w| w.trim_start_matches('#'));
            let number: Option<u32> = match number {
                Some(n) => Some(n.parse().map_err(|_| {
                    anyhow::anyhow!("use /{name} [RUN-NUMBER]{}", if name == "undo" { " [--force]" } else { "" })
                })?),
                None => None,
            };
            let Some(execution_id) = run_to(deps, conversation, number, name == "redo")? else {
                eprintln!(
                    "no run to {name}{}",
                    number.map(|n| format!(" with number #{n}")).unwrap_or_default()
                );
                return Ok(());
            };
            if name == "undo" {
                session.send(Op::UndoRun { execution_id, force })?;
            } else {
                session.send(Op::RedoRun { execution_id })?;
            }
        }
        "rewind" => {
            let number: u32 = arg
                .trim()
                .trim_start_matches('#')
                .parse()
                .map_err(|_| anyhow::anyhow!("use /rewind RUN-NUMBER: the files go back to how they were right after that run"))?;
            match run_to(deps, conversation, Some(number), false)? {
                Some(execution_id) => session.send(Op::RewindTo { execution_id })?,
                None => eprintln!("no run #{number} with recorded changes in this conversation"),
            }
        }
        _ => eprintln!(
            "commands: /policy [ask_always|ask_unless_safe|ask_unless_undoable|never_ask], /rules, /revoke HASH-PREFIX, \
             /allow HOST:PORT [once|conversation|always], /deny HOST:PORT, \
             /undo [RUN-NUMBER] [--force], /redo RUN-NUMBER, /rewind RUN-NUMBER, \
             /model [PROVIDER:]NAME (/model alone lists them), /image PATH (a picture for your next message)"
        ),
    }
    Ok(())
}
