//! The context window the scripted server can enforce, the way the real services do: OpenAI
//! and Anthropic refuse a longer prompt with their own error; Ollama cuts its start and says
//! nothing.

use hyper::{Response, StatusCode};
use serde_json::{json, Value};

use super::{json_response, Body};

/// The window Ollama uses when a request does not set `num_ctx`.
pub const OLLAMA_DEFAULT_NUM_CTX: u64 = 4096;

/// A context window the scripted server enforces, counting a request's tokens as its JSON
/// body's bytes divided by `bytes_per_token`. A request over it is answered with the real
/// service's error for that wire format.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextLimit {
    pub tokens: u64,
    pub bytes_per_token: f64,
}

impl ContextLimit {
    pub fn count(&self, body: &Value) -> u64 {
        (body.to_string().len() as f64 / self.bytes_per_token).ceil() as u64
    }
}

/// The services' own answers to a prompt over the window (status 400 and their bodies).
pub(super) fn too_long(path: &str, limit: u64, counted: u64, named: bool) -> Response<Body> {
    let body = if !named {
        json!({"error": {"message": "The input is too long for this model; shorten the conversation.", "type": "invalid_request_error", "code": "context_length_exceeded"}})
    } else if path.ends_with("/messages") {
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": format!("prompt is too long: {counted} tokens > {limit} maximum")}})
    } else {
        json!({"error": {"message": format!("This model's maximum context length is {limit} tokens. However, your messages resulted in {counted} tokens. Please reduce the length of the messages."), "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
    };
    json_response(StatusCode::BAD_REQUEST, &body)
}
