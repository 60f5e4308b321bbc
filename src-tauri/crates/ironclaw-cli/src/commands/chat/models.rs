//! `/model` in chat: lists the configured models and switches the conversation's next turns to
//! one (`Op::UseModel`); the session asks [`Models`] to resolve it.

use std::sync::Arc;

use ironclaw_agent::models::{self, ModelChoice};
use ironclaw_agent::{ResolveRuntime, Resolving, ResolvingModel, Runtime};
use ironclaw_llm::ProviderConfig;
use ironclaw_protocol::{AgentEvent, Op};

use crate::terminal::inert;

/// The chat's runtime, and the config other models are resolved from.
pub struct Models {
    pub base: Runtime,
    pub config: Option<ProviderConfig>,
}

impl ResolveRuntime for Models {
    fn resolve(&self) -> Resolving<'_> {
        self.base.resolve()
    }

    fn resolve_model<'a>(&'a self, provider: &'a str, model: &'a str) -> ResolvingModel<'a> {
        Box::pin(async move {
            models::resolve(
                self.config.as_ref(),
                (&self.base.provider, self.base.tool_mode),
                provider,
                model,
            )
            .await
        })
    }
}

/// `/model` lists; `/model NAME` or `/model provider:NAME` switches.
pub async fn command(
    arg: &str,
    models: &Arc<Models>,
    current: &mut ModelChoice,
    session: &ironclaw_agent::SessionHandle,
    events: &mut tokio::sync::mpsc::UnboundedReceiver<AgentEvent>,
) -> anyhow::Result<()> {
    let main = models.base.provider.as_ref();
    if arg.trim().is_empty() {
        let choices = models::choices(models.config.as_ref(), main).await;
        eprintln!("models (switch with /model NAME or /model PROVIDER:NAME):");
        for c in &choices {
            let mark = if c == &*current { "*" } else { " " };
            eprintln!(" {mark} {}", inert(&format!("{}:{}", c.provider, c.model)));
        }
        return Ok(());
    }
    let names: Vec<String> = match &models.config {
        Some(c) => c.choices().into_iter().map(|(n, _)| n).collect(),
        None => vec![main.id().to_owned()],
    };
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let chosen = models::parse(arg, &names, &current.provider);
    // Any name is passed on (a server may serve more than it lists), but say so: a typo or an
    // unconfigured provider would otherwise only fail on the next message.
    if !models::choices(models.config.as_ref(), main)
        .await
        .contains(&chosen)
    {
        eprintln!(
            "note: {} is not among the configured or listed models (see /model); asking {} for {} anyway",
            inert(&format!("{}:{}", chosen.provider, chosen.model)),
            inert(&chosen.provider),
            inert(&chosen.model),
        );
    }
    session.send(Op::UseModel {
        provider: chosen.provider,
        model: chosen.model,
    })?;
    // The session answers in order: the switch, or why not.
    while let Some(event) = events.recv().await {
        match event {
            AgentEvent::ModelChanged { provider, model } => {
                eprintln!(
                    "[model: {} from the next message]",
                    inert(&format!("{provider}:{model}"))
                );
                *current = ModelChoice { provider, model };
                break;
            }
            AgentEvent::Error { message } => {
                eprintln!("error: {}", inert(&message));
                break;
            }
            _ => {}
        }
    }
    Ok(())
}
