//! One client for every server that speaks OpenAI's Chat Completions API: OpenAI, Ollama
//! (`/v1`), llama.cpp's server, vLLM, LM Studio, OpenRouter.

pub(crate) mod decode;
pub(crate) mod wire;

#[cfg(test)]
mod tests;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::api_key::ApiKey;
use crate::endpoint::{endpoint_builders, Endpoint};
use crate::error::{Error, Result};
use crate::http::EventStream;
use crate::provider::Provider;
use crate::types::ChatRequest;

use decode::OpenAiDecoder;

/// OpenAI's own API base.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

#[derive(Debug, Clone)]
pub struct OpenAiCompatible {
    endpoint: Endpoint,
}

impl OpenAiCompatible {
    /// `base_url` includes the version segment: `https://api.openai.com/v1`,
    /// `http://127.0.0.1:11434/v1`. Local servers usually need no key.
    pub fn new(base_url: &str, api_key: Option<ApiKey>) -> Result<Self> {
        let mut endpoint = Endpoint::new("openai-compatible", base_url)?;
        if let Some(key) = api_key {
            endpoint.set_secret(
                reqwest::header::AUTHORIZATION,
                &format!("Bearer {}", key.expose()),
            )?;
        }
        Ok(OpenAiCompatible { endpoint })
    }

    /// The name used in logs and error messages (`openai`, `ollama`, `vllm`, …).
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.endpoint.id = id.into();
        self
    }

    pub fn base_url(&self) -> &str {
        &self.endpoint.base_url
    }
}

endpoint_builders!(OpenAiCompatible);

#[async_trait]
impl Provider for OpenAiCompatible {
    fn id(&self) -> &str {
        &self.endpoint.id
    }

    fn base_url(&self) -> &str {
        &self.endpoint.base_url
    }

    async fn stream(&self, req: &ChatRequest, cancel: CancellationToken) -> Result<EventStream> {
        let body = wire::request_body(req);
        self.endpoint
            .stream_chat(req, "/chat/completions", &body, OpenAiDecoder::new, &cancel)
            .await
    }

    async fn list_models(&self) -> Result<Vec<String>> {
        let url = self.endpoint.url("/models");
        let ctx = self.endpoint.context("", &url);
        let span = tracing::debug_span!("llm.list_models", provider = %self.endpoint.id);
        let value = self
            .endpoint
            .transport
            .get_json(&ctx, self.endpoint.get(&url), &CancellationToken::new())
            .instrument(span)
            .await
            .map_err(|err| not_found_means_bad_base_url(err, &url))?;
        model_ids(&value, "data", "id")
            .ok_or_else(|| Error::malformed(&ctx.provider, "the model list has no `data` array"))
    }
}

/// `value[list][*][field]`, the shape of both APIs' model lists (and Ollama's `/api/tags`).
pub(crate) fn model_ids(value: &serde_json::Value, list: &str, field: &str) -> Option<Vec<String>> {
    let items = value.get(list)?.as_array()?;
    Some(
        items
            .iter()
            .filter_map(|item| item.get(field)?.as_str().map(str::to_string))
            .collect(),
    )
}

/// A 404 on a model list says nothing about a model: the base URL is wrong.
pub(crate) fn not_found_means_bad_base_url(err: Error, url: &str) -> Error {
    match err {
        Error::ModelNotFound { .. } => Error::Config {
            field: "base URL".into(),
            message: format!(
                "{url} does not exist — check the base URL (OpenAI-compatible servers usually \
                 end in /v1)"
            ),
        },
        other => other,
    }
}
