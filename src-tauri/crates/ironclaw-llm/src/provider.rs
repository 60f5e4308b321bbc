//! The provider abstraction the agent talks to.

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::error::Result;
use crate::http::EventStream;
use crate::types::ChatRequest;

/// A chat model service. Implementations stream one assistant turn per call.
///
/// `async_trait` rather than native `async fn` in traits: the app picks the provider at run
/// time and holds it as `Box<dyn Provider>`, and native async trait methods are not
/// dyn-compatible yet. One boxed future per LLM call costs nothing next to the call itself.
#[async_trait]
pub trait Provider: Send + Sync {
    /// A short, stable name for logs and error messages (`openai`, `anthropic`, `ollama`).
    fn id(&self) -> &str;

    /// Where the service answers (normalized, no trailing slash): shown when saying which
    /// server a check reached.
    fn base_url(&self) -> &str;

    /// Sends `req` and streams the answer. Retryable failures before the first event are retried
    /// inside; an `Err` here means nothing was received. Once the stream yields, any later error
    /// is its last item. Cancelling `cancel` ends the stream with [`crate::Error::Cancelled`] and
    /// drops the connection.
    async fn stream(&self, req: &ChatRequest, cancel: CancellationToken) -> Result<EventStream>;

    /// The model names the service offers.
    async fn list_models(&self) -> Result<Vec<String>>;

    /// The model's context window in tokens, when the service says (Ollama's model metadata).
    /// `None` when it does not, or could not be asked.
    async fn context_window(&self, _model: &str) -> Option<u32> {
        None
    }

    /// Whether the model can call tools, when the service says (Ollama's capabilities).
    async fn supports_tools(&self, _model: &str) -> Option<bool> {
        None
    }

    /// Whether the model reads images, when the service says (Ollama's capabilities).
    async fn supports_images(&self, _model: &str) -> Option<bool> {
        None
    }
}
