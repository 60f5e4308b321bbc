//! IronClaw's LLM providers: one streaming chat call with tools, over OpenAI-compatible servers
//! (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, OpenRouter) and Anthropic's Messages API.
//!
//! Data flow: a [`ChatRequest`] goes to a [`Provider`]; the answer comes back as a stream of
//! [`StreamEvent`]s (text and tool-call pieces, then `Done`), which the UI renders as they arrive
//! and a [`TurnAccumulator`] folds into the finished [`Turn`]. Which provider and model to use is
//! decided by [`resolve`]; its module docs ([`config`]) give the order.
//!
//! This crate has no GUI dependency; with the `testing` feature it also ships a scripted server
//! ([`testing::ScriptedServer`]) that speaks both wire formats on loopback.

mod accumulator;
mod anthropic;
mod api_key;
mod call_ids;
mod classify;
pub mod config;
mod config_file;
mod endpoint;
mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod http;
mod ollama;
mod openai;
mod provider;
mod retry;
mod sse;
mod types;
pub mod vision;
mod window;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

#[cfg(test)]
mod image_wire_tests;
#[cfg(test)]
mod recorded_tests;
#[cfg(test)]
mod test_support;

pub use accumulator::{Turn, TurnAccumulator};
pub use anthropic::{Anthropic, ANTHROPIC_BASE_URL, ANTHROPIC_VERSION};
pub use api_key::{
    delete_keyring_secret, keyring_secret, save_keyring_secret, ApiKey, KEYRING_SERVICE,
};
pub use config::{build, resolve, MoreModel, ProviderConfig, ProviderKind, Resolved};
pub use error::{Error, Result};
pub use http::{EventStream, HttpOptions};
pub use ollama::{default_window_cap, detect_ollama, Ollama, OLLAMA_BASE_URL};
pub use openai::{OpenAiCompatible, OPENAI_BASE_URL};
pub use provider::Provider;
pub use retry::RetryPolicy;
pub use tokio_util::sync::CancellationToken;
pub use types::{ChatRequest, Image, Message, StopReason, StreamEvent, ToolCall, ToolSpec, Usage};
pub use window::{
    choose_window, known_context_window, window_from_refusal, ContextWindow, ToolMode,
    WindowSource, DEFAULT_CONTEXT_WINDOW,
};
