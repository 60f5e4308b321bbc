//! Choosing a provider and model: from the config file, the environment, or a local Ollama.
//!
//! Resolution order ([`resolve`]), first match wins:
//! 1. A [`ProviderConfig`] (from the config file).
//! 2. `IRONCLAW_OPENAI_BASE_URL`: any OpenAI-compatible server there, keyed by
//!    `IRONCLAW_OPENAI_API_KEY` if set.
//! 3. `ANTHROPIC_API_KEY`: Anthropic (base `IRONCLAW_ANTHROPIC_BASE_URL`, default the official API).
//! 4. `OPENAI_API_KEY`: OpenAI.
//! 5. An Ollama answering at `IRONCLAW_OLLAMA_BASE_URL` (default `http://127.0.0.1:11434`).
//! 6. Otherwise [`Error::NoModelConfigured`].
//!
//! The model: the config's `model`, else `IRONCLAW_MODEL`, else — for Ollama and self-hosted
//! OpenAI-compatible servers, which usually serve one model — the first model the server lists.
//! Hosted services list dozens (embeddings, speech…), so for them a model must be named.
//!
//! API keys for a config: the env var named by `api_key_env`, else (for Anthropic, and for
//! OpenAI's own API only) `ANTHROPIC_API_KEY` / `OPENAI_API_KEY`, then the OS keyring entry
//! `ironclaw`/`<kind>` that Settings saves. A self-hosted or third-party OpenAI-compatible server
//! never receives the OpenAI key unless its config names the variable.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::anthropic::{Anthropic, ANTHROPIC_BASE_URL};
use crate::api_key::ApiKey;
use crate::endpoint::normalize_base_url;
use crate::error::{Error, Result};
use crate::ollama::{detect_ollama, Ollama, OLLAMA_BASE_URL};
use crate::openai::{OpenAiCompatible, OPENAI_BASE_URL};
use crate::provider::Provider;
use crate::window::{choose_window, ContextWindow, ToolMode};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProviderKind {
    /// Any OpenAI-compatible server; OpenAI itself when no base URL is given.
    #[serde(rename = "openai")]
    OpenAi,
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Ollama through its native API (`/api/chat`), which takes the context window.
    #[serde(rename = "ollama")]
    Ollama,
}

impl ProviderKind {
    /// The provider id, also the keyring account of its key.
    pub fn id(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Ollama => "ollama",
        }
    }

    fn default_key_env(self) -> Option<&'static str> {
        match self {
            ProviderKind::OpenAi => Some("OPENAI_API_KEY"),
            ProviderKind::Anthropic => Some("ANTHROPIC_API_KEY"),
            ProviderKind::Ollama => None,
        }
    }
}

/// One provider as the config file describes it. It names where the key is, never the key.
/// Field names are snake_case like the rest of `config/` (`base_url`, `api_key_env`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Extra headers on every request (OpenRouter's `HTTP-Referer`, a proxy's token name…).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The model's context window in tokens, when IronClaw cannot know it (a fine-tune, a local
    /// server started with a smaller window). Overrides what the provider reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
    /// How the model asks to run code: `auto` (default), `native` tool calls, or
    /// `code_blocks` for a model without tool calling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_mode: Option<ToolMode>,
    /// Whether the model reads images. Unset: what the server says (Ollama's capabilities),
    /// else a guess from the model's name (see [`crate::vision`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<bool>,
    /// Other models a conversation can switch to (the app's model menu, `/model` in chat).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_models: Vec<MoreModel>,
}

/// One more model to offer. Without `kind` it is the main provider's (same server, key and
/// headers) with another model; with `kind` it is a provider of its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoreModel {
    pub model: String,
    /// How menus and `/model` name its provider: by default the kind's id (`anthropic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ProviderKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_mode: Option<ToolMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<bool>,
}

impl MoreModel {
    /// How Settings lists it, one per line: `model` for the main provider's, `name:model` for
    /// a provider of its own (what `/model` takes, too).
    pub fn as_line(&self) -> String {
        match (&self.name, self.kind) {
            (Some(name), _) => format!("{name}:{}", self.model),
            (None, Some(kind)) => format!("{}:{}", kind.id(), self.model),
            (None, None) => self.model.clone(),
        }
    }

    /// Settings' line back. An unchanged line keeps its entry whole (base URL, key variable,
    /// headers: what only the file says); `kind:model` names another provider with its defaults;
    /// anything else is a model of the main provider (Ollama's names hold colons).
    pub fn from_line(line: &str, kept: &[MoreModel]) -> Option<MoreModel> {
        let line = line.trim();
        if line.is_empty() {
            return None;
        }
        if let Some(same) = kept.iter().find(|m| m.as_line() == line) {
            return Some(same.clone());
        }
        let kind = line.split_once(':').and_then(|(k, m)| {
            let kind = [
                ProviderKind::OpenAi,
                ProviderKind::Anthropic,
                ProviderKind::Ollama,
            ]
            .into_iter()
            .find(|kind| kind.id() == k)?;
            (!m.trim().is_empty()).then(|| (kind, m.trim()))
        });
        let (kind, model) = match kind {
            Some((kind, model)) => (Some(kind), model),
            None => (None, line),
        };
        Some(MoreModel {
            model: model.to_owned(),
            name: None,
            kind,
            base_url: None,
            api_key_env: None,
            headers: BTreeMap::new(),
            context_window: None,
            tool_mode: None,
            images: None,
        })
    }
}

impl ProviderConfig {
    pub fn new(kind: ProviderKind) -> Self {
        ProviderConfig {
            kind,
            base_url: None,
            model: None,
            api_key_env: None,
            headers: BTreeMap::new(),
            context_window: None,
            tool_mode: None,
            images: None,
            more_models: Vec::new(),
        }
    }

    /// The name menus and `/model` give the main provider: its kind's id.
    pub fn provider_name(&self) -> &str {
        self.kind.id()
    }

    /// Every configured model as (provider name, the config that asks it), the main one first.
    pub fn choices(&self) -> Vec<(String, ProviderConfig)> {
        let mut main = self.clone();
        main.more_models.clear();
        let mut out = vec![(self.provider_name().to_owned(), main.clone())];
        for more in &self.more_models {
            let config = match more.kind {
                // The main provider, another model.
                None => ProviderConfig {
                    model: Some(more.model.clone()),
                    context_window: more.context_window,
                    tool_mode: more.tool_mode.or(main.tool_mode),
                    images: more.images,
                    ..main.clone()
                },
                Some(kind) => ProviderConfig {
                    kind,
                    base_url: more.base_url.clone(),
                    model: Some(more.model.clone()),
                    api_key_env: more.api_key_env.clone(),
                    headers: more.headers.clone(),
                    context_window: more.context_window,
                    tool_mode: more.tool_mode,
                    images: more.images,
                    more_models: Vec::new(),
                },
            };
            let name = more
                .name
                .clone()
                .unwrap_or_else(|| config.provider_name().to_owned());
            out.push((name, config));
        }
        out
    }

    /// The config that asks `model` of the provider named `provider` (see
    /// [`ProviderConfig::choices`]); any model name is passed on, the server judges it.
    pub fn for_choice(&self, provider: &str, model: &str) -> Result<ProviderConfig> {
        let choices = self.choices();
        let found = choices
            .iter()
            .find(|(name, c)| name == provider && c.model.as_deref() == Some(model))
            .or_else(|| choices.iter().find(|(name, _)| name == provider));
        match found {
            Some((_, config)) => {
                let mut config = config.clone();
                if config.model.as_deref() != Some(model) {
                    config.model = Some(model.to_owned());
                    config.context_window = None;
                }
                Ok(config)
            }
            None => {
                let mut names: Vec<&str> = choices.iter().map(|(n, _)| n.as_str()).collect();
                names.dedup();
                Err(Error::Config {
                    field: "provider".into(),
                    message: format!(
                        "no provider named {provider:?} is configured (configured: {}); add it \
                         under more_models in provider.yaml",
                        names.join(", ")
                    ),
                })
            }
        }
    }
}

/// A provider and the model to ask.
pub struct Resolved {
    pub provider: Box<dyn Provider>,
    pub model: String,
    /// How much the model reads at once (see [`crate::choose_window`] for the order).
    pub context_window: ContextWindow,
    /// How the model asks to run code: the setting, else what the provider says of the model.
    pub tool_mode: ToolMode,
    /// Whether the model reads images: the setting, else the provider, else its name.
    pub images: bool,
}

impl std::fmt::Debug for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolved")
            .field("provider", &self.provider.id())
            .field("model", &self.model)
            .finish()
    }
}

/// Where settings come from; tests swap the process environment and the keyring out.
pub(crate) struct Env<'a> {
    pub var: &'a (dyn Fn(&str) -> Option<String> + Sync),
    pub keyring: bool,
}

impl Env<'_> {
    fn get(&self, name: &str) -> Option<String> {
        (self.var)(name).filter(|value| !value.trim().is_empty())
    }
}

fn process_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

const PROCESS: Env<'static> = Env {
    var: &process_var,
    keyring: true,
};

/// Builds the provider a config describes (see the module docs for where keys come from).
pub fn build(config: &ProviderConfig) -> Result<Box<dyn Provider>> {
    build_with(config, &PROCESS)
}

/// Picks the provider and model in the documented order.
pub async fn resolve(config: Option<&ProviderConfig>) -> Result<Resolved> {
    resolve_with(config, &PROCESS).await
}

pub(crate) fn build_with(config: &ProviderConfig, env: &Env<'_>) -> Result<Box<dyn Provider>> {
    let key = api_key(config, env)?;
    let env_var = key_env(config)?.unwrap_or("the variable named by api_key_env");
    let missing_key = || Error::MissingApiKey {
        provider: config.kind.id().into(),
        env_var: env_var.into(),
    };
    match config.kind {
        ProviderKind::Anthropic => {
            let base = config.base_url.as_deref().unwrap_or(ANTHROPIC_BASE_URL);
            let mut provider = Anthropic::with_base_url(base, key.ok_or_else(missing_key)?)?;
            for (name, value) in &config.headers {
                provider = provider.with_header(name, value)?;
            }
            Ok(Box::new(provider))
        }
        // The native API: only it takes the window (`num_ctx`), see `ollama`.
        ProviderKind::Ollama => {
            let mut provider = Ollama::new(&openai_base(config)?)?;
            for (name, value) in &config.headers {
                provider = provider.with_header(name, value)?;
            }
            Ok(Box::new(provider))
        }
        ProviderKind::OpenAi => {
            let base = openai_base(config)?;
            // Only OpenAI's own API is sure to need a key; local servers usually take none.
            if key.is_none() && base == OPENAI_BASE_URL {
                return Err(missing_key());
            }
            let mut provider = OpenAiCompatible::new(&base, key)?.with_id(config.kind.id());
            for (name, value) in &config.headers {
                provider = provider.with_header(name, value)?;
            }
            Ok(Box::new(provider))
        }
    }
}

pub(crate) async fn resolve_with(
    config: Option<&ProviderConfig>,
    env: &Env<'_>,
) -> Result<Resolved> {
    let config = match config {
        Some(config) => config.clone(),
        None => match from_env(env).await {
            Some(config) => config,
            None => return Err(Error::NoModelConfigured),
        },
    };
    let provider = build_with(&config, env)?;
    let named = config.model.clone().or_else(|| env.get("IRONCLAW_MODEL"));
    let model = match named {
        Some(model) => model,
        None if serves_few_models(&config)? => provider
            .list_models()
            .await?
            .into_iter()
            .next()
            .ok_or(Error::NoModelConfigured)?,
        None => return Err(Error::NoModelConfigured),
    };
    let setting = config.context_window.or_else(|| {
        env.get("IRONCLAW_CONTEXT_WINDOW")
            .and_then(|v| v.trim().replace('_', "").parse().ok())
    });
    let reported = match setting {
        Some(_) => None,
        None => provider.context_window(&model).await,
    };
    let context_window = choose_window(setting, reported, &model);
    let tool_mode = match config.tool_mode.unwrap_or_default() {
        ToolMode::Auto if provider.supports_tools(&model).await == Some(false) => {
            ToolMode::CodeBlocks
        }
        chosen => chosen,
    };
    let setting = config.images.or_else(|| {
        env.get("IRONCLAW_IMAGES")
            .and_then(|v| match v.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" => Some(true),
                "0" | "false" | "no" => Some(false),
                _ => None,
            })
    });
    let images = match setting {
        Some(set) => set,
        None => crate::vision::reads_images(&*provider, &model).await,
    };
    tracing::info!(provider = provider.id(), model = %model, window = context_window.tokens, source = ?context_window.source, images, "LLM provider chosen");
    Ok(Resolved {
        provider,
        model,
        context_window,
        tool_mode,
        images,
    })
}

/// Steps 2–5 of the resolution order, as a config.
async fn from_env(env: &Env<'_>) -> Option<ProviderConfig> {
    if let Some(base) = env.get("IRONCLAW_OPENAI_BASE_URL") {
        return Some(ProviderConfig {
            base_url: Some(base),
            api_key_env: Some("IRONCLAW_OPENAI_API_KEY".into()),
            ..ProviderConfig::new(ProviderKind::OpenAi)
        });
    }
    if env.get("ANTHROPIC_API_KEY").is_some() {
        return Some(ProviderConfig {
            base_url: env.get("IRONCLAW_ANTHROPIC_BASE_URL"),
            ..ProviderConfig::new(ProviderKind::Anthropic)
        });
    }
    if env.get("OPENAI_API_KEY").is_some() {
        return Some(ProviderConfig::new(ProviderKind::OpenAi));
    }
    let ollama = env.get("IRONCLAW_OLLAMA_BASE_URL");
    match detect_ollama(ollama.as_deref()).await {
        Ok(models) => Some(ProviderConfig {
            base_url: ollama,
            // The listing is already here; no second request to pick the first model.
            model: env
                .get("IRONCLAW_MODEL")
                .or_else(|| models.into_iter().next()),
            ..ProviderConfig::new(ProviderKind::Ollama)
        })
        .filter(|config| config.model.is_some()),
        Err(err) => {
            tracing::debug!(error = %err, "no local Ollama");
            None
        }
    }
}

fn serves_few_models(config: &ProviderConfig) -> Result<bool> {
    Ok(match config.kind {
        ProviderKind::Ollama => true,
        ProviderKind::OpenAi => openai_base(config)? != OPENAI_BASE_URL,
        ProviderKind::Anthropic => false,
    })
}

fn openai_base(config: &ProviderConfig) -> Result<String> {
    match (config.kind, config.base_url.as_deref()) {
        (ProviderKind::Ollama, base) => {
            let base = normalize_base_url(base.unwrap_or(OLLAMA_BASE_URL))?;
            Ok(if base.ends_with("/v1") {
                base
            } else {
                format!("{base}/v1")
            })
        }
        (_, base) => normalize_base_url(base.unwrap_or(OPENAI_BASE_URL)),
    }
}

/// Whether the provider's default key sources (`OPENAI_API_KEY` / `ANTHROPIC_API_KEY` and the
/// keyring entry) apply. An `openai` config pointing elsewhere (OpenRouter, a local vLLM) must
/// not receive the OpenAI key unasked, so it only gets the variable its `api_key_env` names.
fn default_key_applies(config: &ProviderConfig) -> Result<bool> {
    Ok(match config.kind {
        ProviderKind::Anthropic => true,
        ProviderKind::OpenAi => openai_base(config)? == OPENAI_BASE_URL,
        ProviderKind::Ollama => false,
    })
}

fn key_env(config: &ProviderConfig) -> Result<Option<&str>> {
    let default = match default_key_applies(config)? {
        true => config.kind.default_key_env(),
        false => None,
    };
    Ok(config.api_key_env.as_deref().or(default))
}

fn api_key(config: &ProviderConfig, env: &Env<'_>) -> Result<Option<ApiKey>> {
    if let Some(value) = key_env(config)?.and_then(|var| env.get(var)) {
        return ApiKey::new(value).map(Some);
    }
    if !env.keyring || !default_key_applies(config)? {
        return Ok(None);
    }
    // A broken keyring must not stop a provider that may not even need a key.
    match ApiKey::from_keyring(config.kind.id()) {
        Ok(key) => Ok(key),
        Err(err) => {
            tracing::warn!(error = %err, "OS keyring unavailable; continuing without a saved key");
            Ok(None)
        }
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
