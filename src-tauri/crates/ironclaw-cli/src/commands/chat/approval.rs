//! The approval prompt: the code and its risk shown on the terminal, the person's answer read
//! from stdin (so it can be scripted), and the decision sent to the session.

use ironclaw_protocol::{
    ApprovalRequest, DecidedBy, Decision, DecisionChoice, DecisionKind, HostDecision, Op, RiskLevel,
};
use tokio::io::{BufReader, Lines, Stdin};

use crate::terminal::inert;

pub(super) async fn decide(
    session: &ironclaw_agent::SessionHandle,
    req: &ApprovalRequest,
    deny_all: bool,
    input: &mut Input,
    force_confirm: bool,
) -> anyhow::Result<()> {
    let answer = if deny_all {
        eprintln!("{}\ndenied (--deny-all)", describe(req));
        Some((
            Decision::Deny {
                reason: Some("denied automatically (--deny-all)".into()),
            },
            false,
            false,
        ))
    } else {
        ask(req, input, force_confirm).await?
    };
    let (decision, confirmed, fresh) = answer.unwrap_or((
        Decision::Deny {
            reason: Some("no answer".into()),
        },
        false,
        false,
    ));
    if fresh {
        session.send(Op::FreshInterpreter {
            approval_id: req.approval_id,
        })?;
    }
    session.send(Op::Decide {
        approval_id: req.approval_id,
        code_hash: req.code_hash,
        decision,
        decided_by: DecidedBy::Cli,
        confirmed,
    })?;
    Ok(())
}

fn describe(req: &ApprovalRequest) -> String {
    let risk = match req.risk {
        RiskLevel::ReadOnly => "read-only",
        RiskLevel::Normal => "normal",
        RiskLevel::Destructive => "DESTRUCTIVE",
    };
    let what = if req.language == ironclaw_protocol::Language::Mcp {
        "to call an MCP tool".to_string()
    } else {
        format!("to run {} code", req.language)
    };
    let mut s = format!("\n┌─ the agent wants {what} · risk: {risk}\n");
    for r in &req.reasons {
        s.push_str(&format!("│ • {} (line {})\n", inert(&r.message), r.line));
    }
    if let Some(why) = &req.asked_because {
        s.push_str(&format!("│ asked because {}\n", inert(why)));
    }
    s.push_str("│\n");
    for line in req.code.lines() {
        s.push_str(&format!("│ {}\n", inert(line)));
    }
    s.push_str("└─");
    s
}

pub(super) type Input = Lines<BufReader<Stdin>>;

/// Asks on the terminal. `None` when input ended.
async fn ask(
    req: &ApprovalRequest,
    input: &mut Input,
    force_confirm: bool,
) -> anyhow::Result<Option<(Decision, bool, bool)>> {
    eprintln!("{}", describe(req));
    if let Some(warning) = altered_warning(req) {
        eprintln!("{warning}");
    }
    let fresh_choice = if req.altered_session.is_empty() {
        ""
    } else {
        " · [f] restart the interpreter, then approve once"
    };
    // Offered exactly as the core's choices say (no rule for destructive code, say).
    let offered = |kind| DecisionChoice::find(&req.choices, kind);
    let always_choice = if offered(DecisionKind::AlwaysAllowInSession).is_some() {
        " · [s] always allow this exact code in this conversation"
    } else {
        ""
    };
    loop {
        eprint!("Run it? [a]pprove once{always_choice} · [e]dit · [d]eny{fresh_choice}: ");
        let Some(answer) = input.next_line().await? else {
            return Ok(None);
        };
        let decision = match answer.trim() {
            "a" | "approve" => Decision::ApproveOnce,
            "f" | "fresh" if !req.altered_session.is_empty() => Decision::ApproveOnce,
            "s" | "always" if always_choice.is_empty() => {
                eprintln!("this code cannot be always allowed (destructive code is decided one run at a time): approve it once (a), edit it (e) or deny it (d)");
                continue;
            }
            "s" | "always" => Decision::AlwaysAllowInSession,
            "e" | "edit" => {
                eprintln!("Enter the code to run instead; end with a line containing only '.':");
                let mut code = String::new();
                loop {
                    let Some(line) = input.next_line().await? else {
                        return Ok(None);
                    };
                    if line == "." {
                        break;
                    }
                    code.push_str(&line);
                    code.push('\n');
                }
                Decision::EditAndApprove { code }
            }
            d if d == "d" || d.starts_with("d ") || d == "deny" => {
                let reason = d
                    .strip_prefix("d ")
                    .map(|r| r.trim().to_string())
                    .filter(|r| !r.is_empty());
                return Ok(Some((Decision::Deny { reason }, false, false)));
            }
            _ => {
                eprintln!("please answer a, s, e, or d (optionally `d REASON`)");
                continue;
            }
        };
        let fresh = matches!(answer.trim(), "f" | "fresh");
        // A second, deliberate step where the core asks for one (destructive code): one stray
        // keypress never runs it.
        let mut confirmed = false;
        if offered(decision.kind()).is_some_and(|c| c.needs_confirmation) || force_confirm {
            eprint!("This code is DESTRUCTIVE. Type `yes` to run it anyway: ");
            let Some(line) = input.next_line().await? else {
                return Ok(None);
            };
            if line.trim() != "yes" {
                eprintln!("not confirmed; asking again");
                continue;
            }
            confirmed = true;
        }
        return Ok(Some((decision, confirmed, fresh)));
    }
}

/// What earlier runs left in the interpreter this code would run in, said before the choice.
fn altered_warning(req: &ApprovalRequest) -> Option<String> {
    if req.altered_session.is_empty() {
        return None;
    }
    let mut s = format!(
        "! This {} interpreter is not clean; what earlier runs left can change what the code \
         above does:\n",
        req.language
    );
    for detail in &req.altered_session {
        s.push_str(&format!("!   • {}\n", inert(detail)));
    }
    s.push_str("! Answer f to restart the interpreter first (its variables are lost).");
    Some(s)
}

/// A fetch waits on a host that is not on the network list: the same four answers as `/allow`,
/// asked right away because the turn cannot go on without one.
pub(super) async fn decide_host(
    session: &ironclaw_agent::SessionHandle,
    url: &str,
    target: &str,
    deny_all: bool,
    input: &mut Input,
) -> anyhow::Result<()> {
    eprintln!(
        "\nThe model wants to fetch {}: {} is not on the network allowlist.",
        inert(url),
        inert(target)
    );
    let decision = if deny_all {
        eprintln!("denied (--deny-all)");
        HostDecision::Deny
    } else {
        loop {
            eprint!("Allow it? [o]nce · [c]onversation · [a]lways · [d]eny: ");
            let Some(answer) = input.next_line().await? else {
                break HostDecision::Deny;
            };
            match answer.trim() {
                "o" | "once" => break HostDecision::AllowOnce,
                "c" | "conversation" => break HostDecision::AllowForSession,
                "a" | "always" => break HostDecision::AllowAlways,
                "d" | "deny" | "n" | "no" => break HostDecision::Deny,
                _ => eprintln!("answer o, c, a or d"),
            }
        }
    };
    session.send(Op::DecideHost {
        target: target.to_string(),
        decision,
        decided_by: DecidedBy::Cli,
    })?;
    Ok(())
}
