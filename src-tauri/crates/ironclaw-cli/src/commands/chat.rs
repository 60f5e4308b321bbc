//! `ironclaw chat`: a terminal front end on the same session API the desktop app uses.
//! Approval prompts read from stdin too, so the whole conversation can be scripted.

mod approval;
mod attach;
mod models;
mod render;
mod slash;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use ironclaw_agent::SessionConfig;
use ironclaw_llm::{ProviderConfig, ProviderKind};
use ironclaw_protocol::{
    AgentEvent, ApprovalPolicy, ApprovalRequest, ConversationId, Op, TurnOutcome,
};
use tokio::io::{AsyncBufReadExt, BufReader};

use approval::decide;
use render::render;
use slash::slash;

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
    /// The model's context window in tokens, when IronClaw's idea of it is wrong (a local
    /// server started with a smaller window, a fine-tune). Also `context_window` in
    /// provider.yaml, or IRONCLAW_CONTEXT_WINDOW.
    #[arg(long, value_name = "TOKENS")]
    context_window: Option<u32>,
    /// Copy this file or folder into the conversation's workspace before the first message
    /// (repeatable); the model is told what arrived and where. Links inside folders are never
    /// followed.
    #[arg(long = "attach", value_name = "PATH")]
    attach: Vec<std::path::PathBuf>,
    /// Show this picture (PNG, JPEG, GIF, WebP) to the model with the first message
    /// (repeatable). It is scaled to at most 1568 pixels a side; a model that reads no images
    /// is told one was left out.
    #[arg(long = "image", value_name = "PATH")]
    images: Vec<std::path::PathBuf>,
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

pub async fn run(args: ChatArgs) -> anyhow::Result<ExitCode> {
    let config = provider_config(&args)?;
    let mut resolved = ironclaw_llm::resolve(config.as_ref()).await?;
    if let (Some(model), None) = (&args.model, &config) {
        resolved.model = model.clone();
        if resolved.context_window.source != ironclaw_llm::WindowSource::Setting {
            resolved.context_window = ironclaw_llm::choose_window(None, None, model);
        }
    }
    if let Some(tokens) = args.context_window {
        resolved.context_window = ironclaw_llm::choose_window(Some(tokens), None, &resolved.model);
    }
    let window = resolved.context_window;
    let tool_mode = resolved.tool_mode;
    let sandbox = super::open().await?;
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
    // As in the app: a warm spare kept while the chat runs (its first run may adopt it).
    if sandbox.policy().warm_spare {
        tokio::spawn(
            sandbox
                .clone()
                .keep_spare(tokio_util::sync::CancellationToken::new()),
        );
    }
    let base = ironclaw_agent::Runtime {
        sandbox: sandbox.clone(),
        provider: Arc::from(resolved.provider),
        model: resolved.model.clone(),
        context_window: resolved.context_window,
        tool_mode: resolved.tool_mode,
        images: resolved.images,
        mcp: Arc::new(ironclaw_mcp::McpConfig::load_or_report(
            &sandbox.paths().config_dir,
        )),
    };
    let mut current_model = ironclaw_agent::models::ModelChoice {
        provider: config
            .as_ref()
            .map_or(base.provider.id(), |c| c.provider_name())
            .to_owned(),
        model: base.model.clone(),
    };
    let (mut deps, report, reconciled) = ironclaw_agent::state::open(base.clone())?;
    let models = Arc::new(models::Models {
        base,
        config: config.clone(),
    });
    deps.runtime = models.clone();
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
    let mut images = attach::read_images(&args.images)?;
    let mut attached_note = if args.attach.is_empty() {
        None
    } else {
        let name = ironclaw_sandbox::session::SessionName::new(conversation.to_string())?;
        let options = ironclaw_sandbox::SessionOptions {
            profile: args.profile.clone(),
            workspace: None,
        };
        let (sandbox, sources) = (sandbox.clone(), args.attach.clone());
        let attached = tokio::task::spawn_blocking(move || {
            let mut shown = attach::ProgressLine::default();
            sandbox.attach(&name, &options, &sources, &mut |source, done, all| {
                shown.show(source, done, all)
            })
        })
        .await??;
        Some(attach::describe(&attached))
    };
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
        "IronClaw chat · conversation {conversation} · model {} (context window {} tokens, {}{}) · policy {}{}",
        resolved.model,
        window.tokens,
        window.source.describe(),
        if tool_mode == ironclaw_llm::ToolMode::CodeBlocks {
            "; no tool calling: its ```python and ```bash blocks are its run requests"
        } else {
            ""
        },
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
            let command = command.trim();
            match command.split_once(' ').unwrap_or((command, "")) {
                ("model", arg) => {
                    models::command(arg, &models, &mut current_model, &session, &mut events).await?
                }
                // A picture for the next message; a file that cannot be read is said, and the
                // chat goes on.
                ("image", arg) if !arg.trim().is_empty() => {
                    match attach::read_images(&[std::path::PathBuf::from(arg.trim())]) {
                        Ok(read) => {
                            images.extend(read);
                            eprintln!(
                                "{} picture{} will go with your next message",
                                images.len(),
                                if images.len() == 1 { "" } else { "s" }
                            );
                        }
                        Err(e) => eprintln!("{}", crate::render(&e)),
                    }
                }
                _ => slash(command, &session, &deps, conversation)?,
            }
            continue;
        }
        let text = match attached_note.take() {
            Some(note) => format!("{note}\n\n{text}"),
            None => text,
        };
        session.send(Op::UserMessage {
            text,
            images: std::mem::take(&mut images),
        })?;
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
                AgentEvent::FetchHostAsked { url, target, .. } => {
                    approval::decide_host(&session, &url, &target, args.deny_all, &mut input)
                        .await?;
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
