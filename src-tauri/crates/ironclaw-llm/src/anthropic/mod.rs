//! Anthropic's Messages API.

pub(crate) mod decode;
pub(crate) mod wire;

#[cfg(test)]
mod tests;

use async_trait::async_trait;
use reqwest::header::HeaderName;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::api_key::ApiKey;
use crate::endpoint::{endpoint_builders, Endpoint};
use crate::error::{Error, Result};
use crate::http::EventStream;
use crate::openai::{model_ids, not_found_means_bad_base_url};
use crate::provider::Provider;
use crate::types::ChatRequest;

use decode::AnthropicDecoder;

/// The official API base; requests go to `{base}/v1/messages`.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The API version this client speaks (sent as `anthropic-version`).
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

#[derive(Debug, Clone)]
pub struct Anthropic {
    endpoint: Endpoint,
}

impl Anthropic {
    pub fn new(api_key: ApiKey) -> Result<Self> {
        Self::with_base_url(ANTHROPIC_BASE_URL, api_key)
    }

    /// For proxies and tests; the base is without `/v1`.
    pub fn with_base_url(base_url: &str, api_key: ApiKey) -> Result<Self> {
        let mut endpoint = Endpoint::new("anthropic", base_url)?;
        endpoint.set_secret(HeaderName::from_static("x-api-key"), api_key.expose())?;
        endpoint.set_header("anthropic-version", ANTHROPIC_VERSION)?;
        Ok(Anthropic { endpoint })
    }

    pub fn base_url(&self) -> &str {
        &self.endpoint.base_url
    }
}

endpoint_builders!(Anthropic);

#[async_trait]
impl Provider for Anthropic {
    fn id(&self) -> &str {
        &self.endpoint.id
    }

    fn base_url(&self) -> &str {
        &self.endpoint.base_url
    }

    async fn stream(&self, req: &ChatRequest, cancel: CancellationToken) -> Result<EventStream> {
        let body = wire::request_body(req);
        self.endpoint
            .stream_chat(req, "/v1/messages", &body, AnthropicDecoder::new, &cancel)
            .await
    }

    async fn list_models(&self) -> Result<Vec<String>> {
        let url = self.endpoint.url("/v1/models");
        let ctx = self.endpoint.context("", &url);
        let span = tracing::debug_span!("llm.list_models", provider = %self.endpoint.id);
        // 1000 is the page maximum; no account has that many models.
        let request = self.endpoint.get(&format!("{url}?limit=1000"));
        let value = self
            .endpoint
            .transport
            .get_json(&ctx, request, &CancellationToken::new())
            .instrument(span)
            .await
            .map_err(|err| not_found_means_bad_base_url(err, &url))?;
        model_ids(&value, "data", "id")
            .ok_or_else(|| Error::malformed(&ctx.provider, "the model list has no `data` array"))
    }
}
