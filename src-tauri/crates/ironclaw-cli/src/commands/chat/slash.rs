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
        _ => eprintln!(
            "commands: /policy [ask_always|ask_unless_safe|never_ask], /rules, /revoke HASH-PREFIX, \
             /allow HOST:PORT [once|conversation|always], /deny HOST:PORT"
        ),
    }
    Ok(())
}
