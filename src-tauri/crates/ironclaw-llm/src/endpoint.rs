//! Where a provider sends its requests: base URL, headers (credentials included) and transport.

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};
use reqwest::RequestBuilder;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::classify::ErrorContext;
use crate::error::{Error, Result};
use crate::http::{Decoder, EventStream, HttpOptions, Transport};
use crate::types::ChatRequest;

#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub id: String,
    pub base_url: String,
    headers: HeaderMap,
    pub transport: Transport,
}

impl Endpoint {
    pub fn new(id: &str, base_url: &str) -> Result<Self> {
        Ok(Endpoint {
            id: id.to_string(),
            base_url: normalize_base_url(base_url)?,
            headers: HeaderMap::new(),
            transport: Transport::new(HttpOptions::default())?,
        })
    }

    pub fn set_options(&mut self, options: HttpOptions) -> Result<()> {
        self.transport = Transport::new(options)?;
        Ok(())
    }

    /// A credential header: marked sensitive so that no `Debug` output of the request shows it.
    pub fn set_secret(&mut self, name: HeaderName, value: &str) -> Result<()> {
        let mut value = HeaderValue::from_str(value).map_err(|_| Error::InvalidApiKey {
            reason: "it contains characters not allowed in an HTTP header".into(),
        })?;
        value.set_sensitive(true);
        self.headers.insert(name, value);
        Ok(())
    }

    pub fn set_header(&mut self, name: &str, value: &str) -> Result<()> {
        let invalid = |message: String| Error::Config {
            field: format!("header {name:?}"),
            message,
        };
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| invalid("not a valid HTTP header name".into()))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| invalid("the value must be printable ASCII on one line".into()))?;
        self.headers.insert(name, value);
        Ok(())
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// POSTs `body` (the wire format's rendering of `req`) to `path` and decodes the answer as
    /// it streams, retrying what the transport retries, inside an `llm.stream` span.
    pub async fn stream_chat<D: Decoder>(
        &self,
        req: &ChatRequest,
        path: &str,
        body: &serde_json::Value,
        decoder: impl Fn(ErrorContext) -> D,
        cancel: &CancellationToken,
    ) -> Result<EventStream> {
        let span = tracing::info_span!(
            "llm.stream",
            provider = %self.id,
            model = %req.model,
            messages = req.messages.len(),
            tools = req.tools.len(),
            window = req.context_window,
        );
        let url = self.url(path);
        let ctx = self.context(&req.model, &url);
        let body = serde_json::to_vec(body)
            .map(Bytes::from)
            .map_err(|err| Error::malformed(&ctx.provider, err))?;
        self.transport
            .open_stream(
                &ctx,
                || self.post_json(&url, &body),
                || decoder(ctx.clone()),
                cancel,
            )
            .instrument(span)
            .await
    }

    pub fn context(&self, model: &str, url: &str) -> ErrorContext {
        ErrorContext {
            provider: self.id.clone(),
            model: model.to_string(),
            url: url.to_string(),
        }
    }

    pub fn post_json(&self, url: &str, body: &Bytes) -> RequestBuilder {
        self.transport
            .client()
            .post(url)
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body.clone())
    }

    pub fn get(&self, url: &str) -> RequestBuilder {
        self.transport
            .client()
            .get(url)
            .headers(self.headers.clone())
    }
}

/// Checks a base URL and drops trailing slashes, so paths can be appended as `/models`.
pub(crate) fn normalize_base_url(base_url: &str) -> Result<String> {
    let invalid = |message: &str| Error::Config {
        field: "base URL".into(),
        message: format!("{base_url:?} {message}"),
    };
    let parsed = reqwest::Url::parse(base_url.trim())
        .map_err(|_| invalid("is not a URL; write it like http://127.0.0.1:11434/v1"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid("must start with http:// or https://"));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(invalid("must not have a query or fragment"));
    }
    Ok(base_url.trim().trim_end_matches('/').to_string())
}

/// The builder methods of every provider that talks through an [`Endpoint`] field named
/// `endpoint`, written once.
macro_rules! endpoint_builders {
    ($provider:ty) => {
        impl $provider {
            /// An extra header on every request, e.g. OpenRouter's `HTTP-Referer`.
            pub fn with_header(mut self, name: &str, value: &str) -> $crate::error::Result<Self> {
                self.endpoint.set_header(name, value)?;
                Ok(self)
            }

            /// Timeouts, retries and the idle limit for this provider's requests.
            pub fn with_options(
                mut self,
                options: $crate::http::HttpOptions,
            ) -> $crate::error::Result<Self> {
                self.endpoint.set_options(options)?;
                Ok(self)
            }
        }
    };
}
pub(crate) use endpoint_builders;

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn base_urls_lose_trailing_slashes_and_must_be_http() -> Result<()> {
        assert_eq!(
            normalize_base_url("http://127.0.0.1:11434/v1/")?,
            "http://127.0.0.1:11434/v1"
        );
        assert!(matches!(
            normalize_base_url("127.0.0.1:11434"),
            Err(Error::Config { .. })
        ));
        assert!(matches!(
            normalize_base_url("ftp://host/"),
            Err(Error::Config { .. })
        ));
        Ok(())
    }

    #[test]
    fn secret_headers_do_not_show_in_debug_output() -> Result<()> {
        let mut endpoint = Endpoint::new("p", "http://127.0.0.1:1")?;
        endpoint.set_secret(reqwest::header::AUTHORIZATION, "Bearer sk-secret-value")?;
        assert!(!format!("{endpoint:?}").contains("sk-secret-value"));
        Ok(())
    }
}
