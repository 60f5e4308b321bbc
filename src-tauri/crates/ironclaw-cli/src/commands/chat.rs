//! `ironclaw chat`: a terminal front end on the same session API the desktop app uses.
//! Approval prompts read from stdin too, so the whole conversation can be scripted.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use ironclaw_agent::SessionConfig;
use ironclaw_llm::{ProviderConfig, ProviderKind};
use ironclaw_protocol::{
    AgentEvent, ApprovalPolicy, ApprovalRequest, ConversationId, DecidedBy, Decision, HostDecision,
    Op, OutputStream, RiskLevel, TurnOutcome,
};
use tokio::io::{AsyncBufReadExt, BufReader, Lines, Stdin};

use crate::terminal::inert;

#[derive(Args)]
pub struct ChatArgs {
    /// Continue this conversation (id from `ironclaw history ls`).
    #[arg(long)]
    conversation: Option<String>,
    /// openai (any OpenAI-compatible server), anthropic, or ollama.
    #[arg(long)]
    provider: Option<String>,
    #[arg(long)]
    base_url: Option<String>,
    #[arg(long)]
    model: Option<String>,
    /// Environment variable holding the API key.
    #[arg(long)]
    api_key_env: Option<String>,
    /// Approval policy for this conversation (remembered); ask_always is the default.
    #[arg(long, value_enum)]
    policy: Option<ApprovalPolicy>,
    /// Sandbox profile for this conversation.
    #[arg(long)]
    profile: Option<String>,
    /// Network for this conversation's sandbox (remembered): off, allowlist, or
    /// allowlist:HOST[,HOST...] to also allow these hosts while this chat runs.
    #[arg(long, value_name = "MODE")]
    network: Option<ironclaw_sandbox::network::NetworkChoice>,
    /// Deny every execution without asking (for scripts and CI).
    #[arg(long)]
    deny_all: bool,
    /// Send this message instead of reading from the terminal (repeatable); exits when done.
    #[arg(long = "message", short = 'm')]
    messages: Vec<String>,
    /// Model calls per turn.
    #[arg(long, default_value_t = 20)]
    max_steps: usize,
}

/// `--provider` flags win; otherwise `<config dir>/provider.yaml` (kind, base_url, model,
/// api_key_env, headers); otherwise `None` (environment, then a local Ollama).
fn provider_config(args: &ChatArgs) -> anyhow::Result<Option<ProviderConfig>> {
    let Some(kind) = &args.provider else {
        anyhow::ensure!(
            args.base_url.is_none() && args.api_key_env.is_none(),
            "--base-url and --api-key-env need --provider"
        );
        let file = ironclaw_sandbox::Paths::from_env()?
            .config_dir
            .join("provider.yaml");
        return match std::fs::read_to_string(&file) {
            Ok(text) => {
                let mut config = ProviderConfig::from_yaml(&text, &file)?;
                if args.model.is_some() {
                    config.model = args.model.clone();
                }
                Ok(Some(config))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(anyhow::anyhow!("{}: {e}", file.display())),
        };
    };
    let kind = match kind.as_str() {
        "openai" => ProviderKind::OpenAi,
        "anthropic" => ProviderKind::Anthropic,
        "ollama" => ProviderKind::Ollama,
        other => anyhow::bail!("unknown provider {other:?}: use openai, anthropic or ollama"),
    };
    let mut config = ProviderConfig::new(kind);
    config.base_url = args.base_url.clone();
    config.model = args.model.clone();
    config.api_key_env = args.api_key_env.clone();
    Ok(Some(config))
}

/// `/policy NAME`, in the spelling `--policy` takes (and the older ones it still reads).
fn parse_policy(s: &str) -> anyhow::Result<ApprovalPolicy> {
    s.parse().map_err(|_| {
        let names: Vec<&str> = ApprovalPolicy::ALL.iter().map(|p| p.as_str()).collect();
        anyhow::anyhow!("unknown policy {s:?}: use {}", names.join(", "))
    })
}

pub async fn run(args: ChatArgs) -> anyhow::Result<ExitCode> {
    let config = provider_config(&args)?;
    let mut resolved = ironclaw_llm::resolve(config.as_ref()).await?;
    if let (Some(model), None) = (&args.model, &config) {
        resolved.model = model.clone();
    }
    let (sandbox, _) = super::open().await?;
    // A profile the policy does not have would be remembered by the session and fail every
    // later run: refuse it before anything is saved.
    if let Some(profile) = args.profile.as_deref() {
        sandbox.policy().profile(Some(profile))?;
    }
    let mut printer = crate::progress::Printer::new(true);
    ironclaw_sandbox::image::ensure(sandbox.docker(), &Default::default(), &mut |p| {
        printer.show(p)
    })
    .await?;
    let sandbox = Arc::new(sandbox);
    let (deps, report, reconciled) = ironclaw_agent::state::open(ironclaw_agent::Runtime {
        sandbox: sandbox.clone(),
        provider: Arc::from(resolved.provider),
        model: resolved.model.clone(),
    })?;
    // A tampered audit log was kept aside and a new chain started: said before anything is
    // appended to the new one.
    super::history::print_notices(&deps.history);
    if !reconciled.is_empty() {
        eprintln!("note: {reconciled}");
    }
    if !report.interrupted_turns.is_empty() {
        eprintln!(
            "note: {} turn(s) were interrupted when IronClaw last stopped; they are marked so in the history",
            report.interrupted_turns.len()
        );
    }
    let conversation = match &args.conversation {
        Some(id) => id
            .parse::<ConversationId>()
            .map_err(|e| anyhow::anyhow!("{e}"))?,
        None => {
            let policy = args.policy.unwrap_or_default();
            deps.history.create_conversation("New chat", policy)?.id
        }
    };
    if let Some(choice) = &args.network {
        let name = ironclaw_sandbox::session::SessionName::new(conversation.to_string())?;
        super::apply_network(&sandbox, &name, choice).await?;
    }
    let session_config = SessionConfig {
        max_steps: args.max_steps,
        profile: args.profile.clone(),
        ..SessionConfig::default()
    };
    let (session, mut events) = ironclaw_agent::start(deps.clone(), conversation, session_config)?;
    if let (Some(policy), Some(_)) = (args.policy, &args.conversation) {
        session.send(Op::SetPolicy { policy })?;
    }
    let policy = deps.history.get_conversation(conversation)?.approval_policy;
    eprintln!(
        "IronClaw chat · conversation {conversation} · model {} · policy {}{}",
        resolved.model,
        policy.as_str(),
        if policy.is_flagged() {
            " (WARNING: code runs without asking)"
        } else {
            ""
        }
    );

    let interactive = args.messages.is_empty();
    let mut scripted = args.messages.into_iter();
    let mut input = BufReader::new(tokio::io::stdin()).lines();
    let tty = std::io::stdin().is_terminal();
    let mut failed = false;
    let mut last_request: Option<ApprovalRequest> = None;
    loop {
        let text = if interactive {
            if tty {
                eprint!("\nyou> ");
            }
            match input.next_line().await? {
                Some(line) if line.trim().is_empty() => continue,
                Some(line) => line,
                None => break,
            }
        } else {
            match scripted.next() {
                Some(m) => m,
                None => break,
            }
        };
        if let Some(command) = text.strip_prefix('/') {
            slash(command.trim(), &session, &deps, conversation)?;
            continue;
        }
        session.send(Op::UserMessage { text })?;
        // Render until this turn ends; Ctrl-C cancels the turn, not the program.
        loop {
            let event = tokio::select! {
                e = events.recv() => e,
                _ = tokio::signal::ctrl_c() => { session.send(Op::Cancel)?; continue; }
            };
            let Some(event) = event else {
                return Ok(ExitCode::from(1));
            };
            match event {
                AgentEvent::TurnEnded { status, error, .. } => {
                    println!();
                    match status {
                        TurnOutcome::Done => {}
                        TurnOutcome::Cancelled => eprintln!("(cancelled)"),
                        TurnOutcome::Failed => {
                            failed = true;
                            eprintln!("error: {}", error.unwrap_or_default());
                        }
                    }
                    break;
                }
                AgentEvent::DecisionRejected {
                    approval_id,
                    message,
                    still_pending: true,
                } if last_request
                    .as_ref()
                    .is_some_and(|r| r.approval_id == approval_id) =>
                {
                    // E.g. an edit that turned destructive: ask again, with the confirmation.
                    eprintln!("decision refused: {message}");
                    if let Some(req) = last_request.clone() {
                        decide(&session, &req, args.deny_all, &mut input, true).await?;
                    }
                }
                AgentEvent::ApprovalRequested(req) => {
                    decide(&session, &req, args.deny_all, &mut input, false).await?;
                    last_request = Some(req);
                }
                // No turn started, so none will end: back to the prompt, or, for scripted
                // messages (which could not be saved either), stop.
                AgentEvent::MessageNotSaved { message, .. } => {
                    failed = true;
                    eprintln!("error: {message}");
                    if !interactive {
                        return Ok(ExitCode::from(1));
                    }
                    break;
                }
                other => render(other),
            }
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// In-chat commands: the approval policy and saved rules are listable and revocable here.
fn slash(
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
            let rules = deps.history.list_session_rules(conversation, false)?;
            if rules.is_empty() {
                eprintln!("no saved rules in this conversation");
            }
            for rule in rules {
                if let Some(a) = rule
                    .approval_id
                    .and_then(|id| deps.history.get_approval(id).ok())
                {
                    let first = a.code.lines().next().unwrap_or_default();
                    eprintln!("{}  {}  {}", a.code_hash.short(), a.language, first);
                }
            }
        }
        "revoke" if !arg.is_empty() => {
            let prefix = arg.trim();
            let found = deps
                .history
                .list_session_rules(conversation, false)?
                .into_iter()
                .filter_map(|r| {
                    r.approval_id
                        .and_then(|id| deps.history.get_approval(id).ok())
                })
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

async fn decide(
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

fn render(event: AgentEvent) {
    let mut out = std::io::stdout();
    match event {
        AgentEvent::TextDelta { text, .. } => {
            let _ = out.write_all(inert(&text).as_bytes());
            let _ = out.flush();
        }
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
            ..
        } => {
            let mut line = format!("── exit {exit_code} · {:.0} ms", duration_ms);
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
        AgentEvent::TurnStarted { .. }
        | AgentEvent::AssistantMessage { .. }
        | AgentEvent::ApprovalResolved { .. }
        | AgentEvent::ApprovalRequested(_)
        | AgentEvent::MessageNotSaved { .. }
        | AgentEvent::ExecutionResources { .. }
        | AgentEvent::TurnEnded { .. } => {}
    }
}

fn describe(req: &ApprovalRequest) -> String {
    let risk = match req.risk {
        RiskLevel::ReadOnly => "read-only",
        RiskLevel::Normal => "normal",
        RiskLevel::Destructive => "DESTRUCTIVE",
    };
    let mut s = format!(
        "\n┌─ the agent wants to run {} code · risk: {risk}\n",
        req.language
    );
    for r in &req.reasons {
        s.push_str(&format!("│ • {} (line {})\n", inert(&r.message), r.line));
    }
    s.push_str("│\n");
    for line in req.code.lines() {
        s.push_str(&format!("│ {}\n", inert(line)));
    }
    s.push_str("└─");
    s
}

type Input = Lines<BufReader<Stdin>>;

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
    // Destructive code is decided one run at a time (the gate refuses a rule for it too).
    let always_choice = if req.destructive {
        ""
    } else {
        " · [s] always allow this exact code in this conversation"
    };
    loop {
        eprint!("Run it? [a]pprove once{always_choice} · [e]dit · [d]eny{fresh_choice}: ");
        let Some(answer) = input.next_line().await? else {
            return Ok(None);
        };
        let decision = match answer.trim() {
            "a" | "approve" => Decision::ApproveOnce,
            "f" | "fresh" if !req.altered_session.is_empty() => Decision::ApproveOnce,
            "s" | "always" if req.destructive => {
                eprintln!("destructive code cannot be always allowed: approve it once (a), edit it (e) or deny it (d)");
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
        // A second, deliberate step for destructive code: one stray keypress never runs it.
        let mut confirmed = false;
        if req.destructive || force_confirm {
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
