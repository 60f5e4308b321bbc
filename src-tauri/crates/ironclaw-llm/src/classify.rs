//! Turns provider error replies (an HTTP status with a body, or an error event inside a stream)
//! into [`Error`]s. Both wire formats and the local servers (Ollama, llama.cpp, vLLM) word their
//! errors differently, so classification looks at the status first and the text second.

use std::time::Duration;

use serde_json::Value;

use crate::error::Error;

/// Who was asked what: enough to word an error without access to the request.
#[derive(Debug, Clone)]
pub(crate) struct ErrorContext {
    pub provider: String,
    pub model: String,
    pub url: String,
}

/// The parts of an error body that matter, whatever its wire format.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ErrorBody {
    /// `type` and `code` joined (`invalid_request_error context_length_exceeded`).
    pub kind: String,
    pub message: String,
}

impl ErrorBody {
    /// Reads OpenAI (`{"error":{"message","type","code"}}`), Anthropic
    /// (`{"type":"error","error":{"type","message"}}`), Ollama (`{"error":"..."}`) and plain text.
    pub fn parse(body: &str) -> Self {
        match serde_json::from_str::<Value>(body) {
            Ok(value) => Self::from_value(&value).unwrap_or_else(|| Self::plain(body)),
            Err(_) => Self::plain(body),
        }
    }

    pub fn from_value(value: &Value) -> Option<Self> {
        // Only a string or an object is an error; some servers send `"error": null` in every chunk.
        let error = value.get("error")?;
        if let Some(text) = error.as_str() {
            return Some(ErrorBody {
                kind: String::new(),
                message: text.to_string(),
            });
        }
        if !error.is_object() {
            return None;
        }
        let text_of = |key: &str| match error.get(key) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let kind = [text_of("type"), text_of("code")]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        Some(ErrorBody {
            kind,
            message: text_of("message").unwrap_or_default(),
        })
    }

    /// Reads the data of an SSE `error` event: an error body, or the error object itself
    /// (llama.cpp sends `{"code":500,"message":…}`), or plain text.
    pub fn from_event_data(data: &str) -> Self {
        let Ok(value) = serde_json::from_str::<Value>(data) else {
            return Self::plain(data);
        };
        Self::from_value(&value)
            .or_else(|| {
                value
                    .is_object()
                    .then(|| Self::from_value(&serde_json::json!({ "error": value })))
                    .flatten()
            })
            .unwrap_or_else(|| Self::plain(data))
    }

    fn plain(body: &str) -> Self {
        ErrorBody {
            kind: String::new(),
            message: body.trim().to_string(),
        }
    }

    fn haystack(&self) -> String {
        format!("{} {}", self.kind, self.message).to_lowercase()
    }

    /// The message for a person: bounded, because some servers answer errors with HTML pages.
    fn shown(&self) -> String {
        const LIMIT: usize = 300;
        let text = if self.message.is_empty() {
            &self.kind
        } else {
            &self.message
        };
        match text.char_indices().nth(LIMIT) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text.clone(),
        }
    }
}

/// Maps a non-success HTTP answer to an error.
pub(crate) fn from_status(
    ctx: &ErrorContext,
    status: u16,
    body: &ErrorBody,
    retry_after: Option<Duration>,
) -> Error {
    let text = body.haystack();
    let provider = ctx.provider.clone();
    if (400..500).contains(&status) && says_context_too_long(&text) {
        return Error::ContextTooLong {
            provider,
            message: body.shown(),
        };
    }
    match status {
        401 | 403 => Error::Unauthorized {
            provider,
            message: body.shown(),
        },
        404 => Error::ModelNotFound {
            provider,
            model: ctx.model.clone(),
        },
        402 => Error::QuotaExceeded {
            provider,
            message: body.shown(),
        },
        // OpenAI answers an empty balance with 429 too, but waiting will not help there.
        429 if text.contains("insufficient_quota") => Error::QuotaExceeded {
            provider,
            message: body.shown(),
        },
        429 => Error::RateLimited {
            provider,
            retry_after,
        },
        400..=499 if says_model_not_found(&text) => Error::ModelNotFound {
            provider,
            model: ctx.model.clone(),
        },
        400..=499 => Error::InvalidRequest {
            provider,
            status,
            message: body.shown(),
        },
        529 => Error::Overloaded { provider },
        503 if text.contains("overloaded") => Error::Overloaded { provider },
        500..=599 => Error::Server {
            provider,
            status: Some(status),
            message: body.shown(),
        },
        _ => Error::malformed(&ctx.provider, format!("unexpected HTTP status {status}")),
    }
}

/// Maps an error reported inside a stream that had already started (HTTP status 200).
pub(crate) fn from_stream_error(ctx: &ErrorContext, body: &ErrorBody) -> Error {
    let text = body.haystack();
    let provider = ctx.provider.clone();
    if says_context_too_long(&text) {
        Error::ContextTooLong {
            provider,
            message: body.shown(),
        }
    } else if text.contains("overloaded") {
        Error::Overloaded { provider }
    } else if text.contains("rate_limit") {
        Error::RateLimited {
            provider,
            retry_after: None,
        }
    } else if text.contains("authentication_error") || text.contains("permission_error") {
        Error::Unauthorized {
            provider,
            message: body.shown(),
        }
    } else if says_model_not_found(&text) || text.contains("not_found_error") {
        Error::ModelNotFound {
            provider,
            model: ctx.model.clone(),
        }
    } else {
        Error::Server {
            provider,
            status: None,
            message: body.shown(),
        }
    }
}

fn says_context_too_long(text: &str) -> bool {
    const PHRASES: &[&str] = &[
        "context_length_exceeded",       // OpenAI code
        "maximum context length",        // OpenAI, vLLM
        "context length",                // Ollama, OpenRouter
        "context window",                // Anthropic newer wording
        "prompt is too long",            // Anthropic
        "exceed_context_size",           // llama.cpp type
        "exceeds the available context", // llama.cpp message
        "input is too long",
        "too many tokens",
        "request_too_large", // Anthropic 413
    ];
    PHRASES.iter().any(|phrase| text.contains(phrase))
}

fn says_model_not_found(text: &str) -> bool {
    text.contains("model_not_found")
        || (text.contains("model")
            && [
                "not found",
                "does not exist",
                "not a valid model",
                "unknown model",
                "no such model",
            ]
            .iter()
            .any(|phrase| text.contains(phrase)))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn ctx() -> ErrorContext {
        ErrorContext {
            provider: "test".into(),
            model: "m1".into(),
            url: "http://127.0.0.1:1/v1".into(),
        }
    }

    fn classify(status: u16, body: &str) -> Error {
        from_status(&ctx(), status, &ErrorBody::parse(body), None)
    }

    #[test]
    fn openai_anthropic_and_ollama_bodies_are_read() {
        assert_eq!(
            ErrorBody::parse(
                r#"{"error":{"message":"bad","type":"invalid_request_error","code":"x"}}"#
            ),
            ErrorBody {
                kind: "invalid_request_error x".into(),
                message: "bad".into()
            }
        );
        assert_eq!(
            ErrorBody::parse(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            ErrorBody {
                kind: "overloaded_error".into(),
                message: "Overloaded".into()
            }
        );
        assert_eq!(
            ErrorBody::parse(r#"{"error":"model \"x\" not found, try pulling it first"}"#).message,
            "model \"x\" not found, try pulling it first"
        );
        assert_eq!(
            ErrorBody::parse("<html>502</html>").message,
            "<html>502</html>"
        );
    }

    #[test]
    fn context_length_messages_from_every_wire_format_map_to_context_too_long() {
        let bodies = [
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            r#"{"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error"}}"#,
        ];
        for body in bodies {
            assert!(
                matches!(classify(400, body), Error::ContextTooLong { .. }),
                "{body}"
            );
        }
    }

    #[test]
    fn statuses_map_to_the_error_a_person_can_act_on() {
        assert!(matches!(classify(401, "{}"), Error::Unauthorized { .. }));
        assert!(matches!(classify(403, "{}"), Error::Unauthorized { .. }));
        assert!(matches!(classify(404, "{}"), Error::ModelNotFound { model, .. } if model == "m1"));
        assert!(matches!(classify(429, "{}"), Error::RateLimited { .. }));
        assert!(matches!(
            classify(
                429,
                r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}}"#
            ),
            Error::QuotaExceeded { .. }
        ));
        assert!(matches!(classify(529, "{}"), Error::Overloaded { .. }));
        assert!(matches!(
            classify(500, "oops"),
            Error::Server {
                status: Some(500),
                ..
            }
        ));
        assert!(matches!(
            classify(
                400,
                r#"{"error":{"message":"foo is not a valid model ID"}}"#
            ),
            Error::ModelNotFound { .. }
        ));
        assert!(matches!(
            classify(400, "{}"),
            Error::InvalidRequest { status: 400, .. }
        ));
    }

    #[test]
    fn overloaded_error_inside_a_stream_is_retryable() {
        let body = ErrorBody::parse(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        );
        let err = from_stream_error(&ctx(), &body);
        assert!(matches!(err, Error::Overloaded { .. }));
        assert!(err.is_retryable());
    }

    #[test]
    fn a_null_error_field_is_no_error() {
        assert_eq!(
            ErrorBody::from_value(&serde_json::json!({"error": null, "choices": []})),
            None
        );
    }

    #[test]
    fn long_error_pages_are_cut_for_display() {
        let err = classify(500, &"x".repeat(5000));
        assert!(err.to_string().len() < 600, "{err}");
    }
}
