//! Ollama through its native API (`/api/chat`), because only that one takes `num_ctx`: through
//! the OpenAI-compatible `/v1` Ollama uses its small default window and drops the *start* of a
//! longer prompt without a word — the system prompt, which holds the sandbox rules and the
//! approval contract, first. The window IronClaw fits the conversation to is sent with every
//! request, so what Ollama reads is what IronClaw measured.

mod decode;
mod detect;
pub(crate) mod wire;

use async_trait::async_trait;
use bytes::Bytes;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::endpoint::{endpoint_builders, Endpoint};
use crate::error::{Error, Result};
use crate::http::{root_cause, EventStream};
use crate::openai::model_ids;
use crate::provider::Provider;
use crate::types::ChatRequest;

use decode::OllamaDecoder;
pub use detect::{detect_ollama, OLLAMA_BASE_URL};

#[derive(Debug, Clone)]
pub struct Ollama {
    endpoint: Endpoint,
    window_cap: u32,
}

impl Ollama {
    /// `base_url` is where Ollama listens (`http://127.0.0.1:11434`); the OpenAI-compatible
    /// address (`…/v1`) is accepted too.
    pub fn new(base_url: &str) -> Result<Self> {
        let base = crate::endpoint::normalize_base_url(base_url)?;
        let base = base.strip_suffix("/v1").unwrap_or(&base);
        Ok(Ollama {
            endpoint: Endpoint::new("ollama", base)?,
            window_cap: default_window_cap(),
        })
    }

    /// The largest window asked of Ollama whatever the model could take: its memory for the
    /// context grows with the window.
    pub fn with_window_cap(mut self, tokens: u32) -> Self {
        self.window_cap = tokens.max(1024);
        self
    }
}

/// A window that a machine with this much memory runs without swapping, for the models people
/// run locally (an 8B model's context at 32k tokens takes about 4.5 GiB): 8k tokens below
/// 12 GiB of RAM, 16k below 24 GiB, 32k above.
pub fn default_window_cap() -> u32 {
    let gib = total_memory_bytes().map(|b| b >> 30);
    match gib {
        Some(g) if g < 12 => 8_192,
        Some(g) if g < 24 => 16_384,
        Some(_) => 32_768,
        None => 16_384,
    }
}

fn total_memory_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

endpoint_builders!(Ollama);

#[async_trait]
impl Provider for Ollama {
    fn id(&self) -> &str {
        &self.endpoint.id
    }

    fn base_url(&self) -> &str {
        &self.endpoint.base_url
    }

    async fn stream(&self, req: &ChatRequest, cancel: CancellationToken) -> Result<EventStream> {
        let body = wire::request_body(req, req.context_window);
        self.endpoint
            .stream_chat(req, "/api/chat", &body, OllamaDecoder::new, &cancel)
            .await
    }

    async fn list_models(&self) -> Result<Vec<String>> {
        let url = self.endpoint.url("/api/tags");
        let ctx = self.endpoint.context("", &url);
        let value = self
            .endpoint
            .transport
            .get_json(&ctx, self.endpoint.get(&url), &CancellationToken::new())
            .instrument(tracing::debug_span!("llm.list_models", provider = "ollama"))
            .await?;
        model_ids(&value, "models", "name")
            .ok_or_else(|| Error::malformed("ollama", "`/api/tags` has no `models` list"))
    }

    /// From `/api/show`'s `capabilities` (Ollama 0.7 and later; older ones do not say).
    async fn supports_tools(&self, model: &str) -> Option<bool> {
        self.has_capability(model, "tools").await
    }

    /// From `/api/show`'s `capabilities`, like [`Provider::supports_tools`].
    async fn supports_images(&self, model: &str) -> Option<bool> {
        self.has_capability(model, "vision").await
    }

    /// The model's window from `/api/show`, capped by what this machine's memory allows.
    async fn context_window(&self, model: &str) -> Option<u32> {
        match self.show(model).await {
            Ok(show) => {
                let window = wire::model_window(&show)?.min(self.window_cap);
                tracing::info!(model, window, cap = self.window_cap, "Ollama model window");
                Some(window)
            }
            Err(err) => {
                tracing::warn!(model, error = %err, "could not ask Ollama for the model's window");
                None
            }
        }
    }
}

impl Ollama {
    /// Whether `/api/show` lists `capability`; `None` when it does not list any.
    async fn has_capability(&self, model: &str, capability: &str) -> Option<bool> {
        let show = self.show(model).await.ok()?;
        let capabilities = show.get("capabilities")?.as_array()?;
        Some(capabilities.iter().any(|c| c.as_str() == Some(capability)))
    }

    /// `/api/show` for `model`.
    async fn show(&self, model: &str) -> Result<serde_json::Value> {
        let url = self.endpoint.url("/api/show");
        let ctx = self.endpoint.context(model, &url);
        let body = Bytes::from(json!({ "model": model }).to_string());
        let cancel = CancellationToken::new();
        async {
            let response = self
                .endpoint
                .transport
                .send(&ctx, self.endpoint.post_json(&url, &body), &cancel)
                .await?;
            response
                .json::<serde_json::Value>()
                .await
                .map_err(|err| Error::malformed("ollama", root_cause(&err)))
        }
        .instrument(tracing::debug_span!(
            "llm.show_model",
            provider = "ollama",
            model
        ))
        .await
    }
}

#[cfg(test)]
mod tests;
