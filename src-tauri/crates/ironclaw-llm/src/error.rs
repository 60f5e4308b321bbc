//! One error type for the LLM crate. Every message says what happened and what to do next,
//! because these strings reach the person in the chat window.

use std::time::Duration;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "the API key for {provider} was rejected ({message}) — check it in Settings or the env var"
    )]
    Unauthorized { provider: String, message: String },

    #[error(
        "model {model:?} is not available on {provider} — pick one from the model list \
         (for Ollama: `ollama pull {model}`), or check the base URL"
    )]
    ModelNotFound { provider: String, model: String },

    #[error(
        "the conversation is too long for this model's context window ({message}) — start a new \
         chat, remove large tool outputs, or pick a model with a larger context"
    )]
    ContextTooLong { provider: String, message: String },

    #[error("{provider} is rate-limiting requests{} — wait a moment and try again, or check your plan's limits", retry_hint(.retry_after))]
    RateLimited {
        provider: String,
        retry_after: Option<Duration>,
    },

    #[error("{provider} says the account is out of credits or quota ({message}) — check billing with the provider")]
    QuotaExceeded { provider: String, message: String },

    #[error("{provider} is overloaded right now — try again in a minute")]
    Overloaded { provider: String },

    #[error("{provider} had a server error{} ({message}) — try again; if it persists, check the provider's status page or the server's logs", status_hint(.status))]
    Server {
        provider: String,
        /// `None` when the error arrived inside an already started stream.
        status: Option<u16>,
        message: String,
    },

    #[error("{provider} rejected the request (HTTP {status}: {message}) — the model may not support an option IronClaw sent (tools, temperature); try another model, and report it if it persists")]
    InvalidRequest {
        provider: String,
        status: u16,
        message: String,
    },

    #[error("cannot reach {url} ({reason}) — is the server running? For Ollama: `ollama serve`. Otherwise check the base URL and your network")]
    Unreachable { url: String, reason: String },

    #[error("{provider} sent nothing for {} — the model may still be loading or the server is stuck; try again, or raise the idle timeout", seconds(.idle))]
    Timeout { provider: String, idle: Duration },

    #[error("the request was cancelled")]
    Cancelled,

    /// Malformed SSE or JSON, or a stream that ended early. The text carries the whole message.
    #[error("{0}")]
    Protocol(String),

    #[error(
        "no model configured: start Ollama locally (`ollama serve`, then `ollama pull llama3.2`), \
         or set IRONCLAW_OPENAI_BASE_URL (any OpenAI-compatible server), ANTHROPIC_API_KEY or \
         OPENAI_API_KEY, with IRONCLAW_MODEL naming the model"
    )]
    NoModelConfigured,

    #[error("no API key for {provider} — set {env_var} or save a key in Settings")]
    MissingApiKey { provider: String, env_var: String },

    #[error("the API key is not usable ({reason}) — paste it again without spaces or line breaks")]
    InvalidApiKey { reason: String },

    #[error("could not use the OS keyring ({reason}) — put the key in an env var instead")]
    Keyring { reason: String },

    #[error("invalid LLM provider setting {field}: {message}")]
    Config { field: String, message: String },
}

impl Error {
    /// Whether the same request may succeed if sent again later. The transport retries these
    /// only before a stream has produced events; callers may use it for a "Retry" button.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::RateLimited { .. }
            | Error::Overloaded { .. }
            | Error::Server { .. }
            | Error::Unreachable { .. } => true,
            // A silent server already cost one idle timeout; repeating it unasked could make the
            // person wait several times as long, so the person decides.
            Error::Timeout { .. }
            | Error::Unauthorized { .. }
            | Error::ModelNotFound { .. }
            | Error::ContextTooLong { .. }
            | Error::QuotaExceeded { .. }
            | Error::InvalidRequest { .. }
            | Error::Cancelled
            | Error::Protocol(_)
            | Error::NoModelConfigured
            | Error::MissingApiKey { .. }
            | Error::InvalidApiKey { .. }
            | Error::Keyring { .. }
            | Error::Config { .. } => false,
        }
    }

    /// The wait the server asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    pub(crate) fn malformed(provider: &str, detail: impl std::fmt::Display) -> Self {
        Error::Protocol(format!(
            "{provider} sent a reply IronClaw could not read ({detail}) — try again; if it keeps \
             happening, the server may not be fully compatible"
        ))
    }

    pub(crate) fn disconnected(provider: &str, detail: impl std::fmt::Display) -> Self {
        Error::Protocol(format!(
            "the connection to {provider} closed mid-answer ({detail}) — the text so far was kept; \
             try again"
        ))
    }
}

fn retry_hint(retry_after: &Option<Duration>) -> String {
    match retry_after {
        Some(wait) => format!(" (it asked to wait {} s)", wait.as_secs_f64().ceil()),
        None => String::new(),
    }
}

fn seconds(duration: &Duration) -> String {
    match duration.as_secs() {
        0 => format!("{} ms", duration.as_millis()),
        secs => format!("{secs} s"),
    }
}

fn status_hint(status: &Option<u16>) -> String {
    match status {
        Some(status) => format!(" (HTTP {status})"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limited_message_names_the_requested_wait() {
        let err = Error::RateLimited {
            provider: "openai".into(),
            retry_after: Some(Duration::from_millis(1500)),
        };
        assert!(err.to_string().contains("wait 2 s"), "{err}");
        assert!(err.is_retryable());
    }

    #[test]
    fn unreachable_message_tells_how_to_start_ollama() {
        let err = Error::Unreachable {
            url: "http://127.0.0.1:11434/v1/chat/completions".into(),
            reason: "connection refused".into(),
        };
        assert!(err.to_string().contains("`ollama serve`"), "{err}");
    }

    #[test]
    fn only_transient_failures_are_retryable() {
        let provider = || "p".to_string();
        assert!(Error::Overloaded {
            provider: provider()
        }
        .is_retryable());
        assert!(Error::Server {
            provider: provider(),
            status: Some(502),
            message: String::new()
        }
        .is_retryable());
        assert!(!Error::Unauthorized {
            provider: provider(),
            message: String::new()
        }
        .is_retryable());
        assert!(!Error::Cancelled.is_retryable());
        assert!(!Error::Protocol("x".into()).is_retryable());
        assert!(!Error::Timeout {
            provider: provider(),
            idle: Duration::from_secs(1)
        }
        .is_retryable());
    }
}
