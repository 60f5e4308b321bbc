//! Switching models mid-conversation: which models are configured (the main one, its server's
//! list, `more_models` in provider.yaml) and how one of them becomes the next turns' model.
//! Front ends (the CLI, the app) answer `ResolveRuntime::resolve_model` with these.

use std::sync::Arc;

use ironclaw_llm::{Provider, ProviderConfig, ToolMode};

use crate::session::ModelRuntime;

/// One model a conversation can switch to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelChoice {
    /// The provider's name as `Op::UseModel` takes it.
    pub provider: String,
    pub model: String,
}

/// Every configured model, the main one first: what the config names, then what the main
/// provider's server lists (when it answers), without repeats.
pub async fn choices(config: Option<&ProviderConfig>, main: &dyn Provider) -> Vec<ModelChoice> {
    let mut out: Vec<ModelChoice> = Vec::new();
    let mut add = |provider: &str, model: &str| {
        let c = ModelChoice {
            provider: provider.to_owned(),
            model: model.to_owned(),
        };
        if !model.is_empty() && !out.contains(&c) {
            out.push(c);
        }
    };
    let main_name = config.map_or(main.id(), |c| c.provider_name()).to_owned();
    if let Some(config) = config {
        for (name, c) in config.choices() {
            add(&name, c.model.as_deref().unwrap_or_default());
        }
    }
    match main.list_models().await {
        Ok(models) => {
            for m in models {
                add(&main_name, &m);
            }
        }
        Err(e) => tracing::debug!(error = %e, "the provider did not list its models"),
    }
    out
}

/// `provider`/`model` resolved from the config: a provider built for it, its window and tool
/// mode. Without a config file only the current provider can be asked for another model.
pub async fn resolve(
    config: Option<&ProviderConfig>,
    current: (&Arc<dyn Provider>, ToolMode),
    provider: &str,
    model: &str,
) -> Result<ModelRuntime, String> {
    let Some(config) = config else {
        if provider != current.0.id() {
            return Err(format!(
                "only {} is configured; name other providers under more_models in provider.yaml",
                current.0.id()
            ));
        }
        return Ok(ModelRuntime {
            provider: current.0.clone(),
            model: model.to_owned(),
            context_window: ironclaw_llm::choose_window(None, None, model),
            tool_mode: current.1,
            images: ironclaw_llm::vision::reads_images(&**current.0, model).await,
        });
    };
    let chosen = config
        .for_choice(provider, model)
        .map_err(|e| e.to_string())?;
    let resolved = ironclaw_llm::resolve(Some(&chosen))
        .await
        .map_err(|e| e.to_string())?;
    Ok(ModelRuntime {
        provider: Arc::from(resolved.provider),
        model: resolved.model,
        context_window: resolved.context_window,
        tool_mode: resolved.tool_mode,
        images: resolved.images,
    })
}

/// What a person types after `/model`: `provider:model` when the part before the first `:`
/// is a configured provider's name, else a model of the current provider (Ollama's names hold
/// colons: `llama3.1:8b`).
pub fn parse(text: &str, providers: &[&str], current: &str) -> ModelChoice {
    let text = text.trim();
    match text.split_once(':') {
        Some((p, m)) if providers.contains(&p) && !m.is_empty() => ModelChoice {
            provider: p.to_owned(),
            model: m.to_owned(),
        },
        _ => ModelChoice {
            provider: current.to_owned(),
            model: text.to_owned(),
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_colon_names_a_provider_only_when_one_is_configured_by_that_name() {
        let providers = ["openai", "anthropic"];
        assert_eq!(
            parse("anthropic:claude-x", &providers, "openai"),
            ModelChoice {
                provider: "anthropic".into(),
                model: "claude-x".into()
            }
        );
        assert_eq!(
            parse("llama3.1:8b", &providers, "ollama"),
            ModelChoice {
                provider: "ollama".into(),
                model: "llama3.1:8b".into()
            }
        );
    }

    #[test]
    fn more_models_inherit_the_main_server_unless_they_name_a_kind() {
        let yaml = "kind: openai\nbase_url: http://127.0.0.1:9/v1\nmodel: big\nmore_models:\n  - model: small\n  - kind: anthropic\n    base_url: http://127.0.0.1:9\n    model: claude-x\n";
        let config =
            ProviderConfig::from_yaml(yaml, std::path::Path::new("provider.yaml")).unwrap();
        let choices = config.choices();
        let names: Vec<(&str, Option<&str>)> = choices
            .iter()
            .map(|(n, c)| (n.as_str(), c.model.as_deref()))
            .collect();
        assert_eq!(
            names,
            [
                ("openai", Some("big")),
                ("openai", Some("small")),
                ("anthropic", Some("claude-x"))
            ]
        );
        assert_eq!(
            choices[1].1.base_url.as_deref(),
            Some("http://127.0.0.1:9/v1")
        );
        let other = config.for_choice("anthropic", "claude-y").unwrap();
        assert_eq!(other.model.as_deref(), Some("claude-y"));
        let e = config.for_choice("mistral", "m").unwrap_err().to_string();
        assert!(e.contains("configured: openai, anthropic"), "{e}");
    }
}
