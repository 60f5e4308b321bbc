//! Helpers shared by this crate's tests.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;

use crate::error::Error;
use crate::http::{EventStream, HttpOptions};
use crate::retry::RetryPolicy;
use crate::types::{ChatRequest, Message, StreamEvent, ToolSpec};

/// A hang guard, not a speed assertion: far above anything a passing test needs.
pub(crate) const HANG_GUARD: Duration = Duration::from_secs(30);

pub(crate) fn request(model: &str) -> ChatRequest {
    ChatRequest {
        model: model.into(),
        system: "You are IronClaw.".into(),
        messages: vec![Message::user("Say hello")],
        tools: vec![ToolSpec {
            name: "run_python".into(),
            description: "Run Python in the sandbox".into(),
            parameters: json!({"type": "object", "properties": {"code": {"type": "string"}}}),
        }],
        max_tokens: Some(256),
        temperature: None,
        context_window: None,
    }
}

/// Retries without real waits, so tests about other things stay quick.
pub(crate) fn fast_options() -> HttpOptions {
    HttpOptions {
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(20),
        retry: RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_millis(20),
            max_total_wait: Duration::from_secs(10),
        },
    }
}

/// Every event until the end, and the error that ended the stream, if one did.
pub(crate) async fn collect(mut stream: EventStream) -> (Vec<StreamEvent>, Option<Error>) {
    let mut events = Vec::new();
    let collected = tokio::time::timeout(HANG_GUARD, async {
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => events.push(event),
                Err(err) => return Some(err),
            }
        }
        None
    })
    .await;
    match collected {
        Ok(error) => (events, error),
        Err(_) => (
            events,
            Some(Error::Protocol("test hang guard expired".into())),
        ),
    }
}

pub(crate) fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// A loopback URL where nothing listens.
pub(crate) async fn closed_port_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await;
    let port = listener
        .and_then(|l| l.local_addr())
        .map(|addr| addr.port())
        .unwrap_or(9);
    format!("http://127.0.0.1:{port}")
}
