//! Provider-neutral request and event types. These cross into the UI later, so they are
//! camelCase on the wire and tagged unions rather than bare strings.

use serde::{Deserialize, Serialize};

/// One turn's request: everything a provider needs, in no provider's format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatRequest {
    pub model: String,
    /// Empty means "no system prompt".
    pub system: String,
    pub messages: Vec<Message>,
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// The context window the request was fitted to. Servers that must be told (Ollama's
    /// `num_ctx`, without which it silently drops the start of the prompt) get it; the others
    /// ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "role",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Message {
    User {
        content: String,
        /// Shown to the model after the text; only ever for a model that reads images.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
    Assistant {
        content: String,
        #[serde(default)]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of running one tool call, sent back to the model.
    Tool {
        call_id: String,
        content: String,
        #[serde(default)]
        is_error: bool,
        /// What the tool showed (a chart the code drew). Formats whose tool results cannot
        /// carry images get them in a user message right after (see each wire module).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
}

/// An image for the model, already checked, downscaled and re-encoded by the agent: the
/// formats here only wrap it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    /// `image/png` or `image/jpeg`.
    pub media_type: String,
    /// Base64, standard alphabet, padded: what every format takes.
    pub data: String,
}

impl Image {
    /// The image as a `data:` URL (OpenAI's `image_url`).
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }
}

impl Message {
    pub fn user(content: impl Into<String>) -> Self {
        Message::User {
            content: content.into(),
            images: Vec::new(),
        }
    }

    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message::Assistant {
            content: content.into(),
            tool_calls,
        }
    }

    pub fn tool_result(
        call_id: impl Into<String>,
        content: impl Into<String>,
        is_error: bool,
    ) -> Self {
        Message::Tool {
            call_id: call_id.into(),
            content: content.into(),
            is_error,
            images: Vec::new(),
        }
    }

    /// The images the message carries (none for the model's own turns).
    pub fn images(&self) -> &[Image] {
        match self {
            Message::User { images, .. } | Message::Tool { images, .. } => images,
            Message::Assistant { .. } => &[],
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The provider's id for this call; tool results refer to it.
    pub id: String,
    pub name: String,
    /// Raw JSON text exactly as the model produced it. It may be malformed: callers validate it
    /// and report problems back to the model as an error tool result.
    pub arguments: String,
    /// JSON the provider attached to the call and wants back verbatim with it in later requests:
    /// Gemini's `extra_content` holds the thought signature, without which Gemini 3 rejects the
    /// next request of a tool turn with HTTP 400. Opaque to IronClaw, kept as text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub echo: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// What a provider stream yields, in order: text and tool-call pieces, then exactly one `Done`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    content = "data",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum StreamEvent {
    TextDelta(String),
    /// The model's visible thinking, shown apart from the answer and never sent back.
    ReasoningDelta(String),
    /// `index` counts tool calls in this turn (0, 1, …), whatever the wire format numbers.
    ToolCallStart {
        index: usize,
        id: String,
        name: String,
    },
    /// The next piece of the arguments' JSON text for the call started with the same index.
    ToolCallDelta {
        index: usize,
        arguments: String,
    },
    /// Provider data to send back with the call started with the same index (see
    /// [`ToolCall::echo`]).
    ToolCallEcho {
        index: usize,
        json: String,
    },
    Done {
        stop_reason: StopReason,
        usage: Usage,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    EndTurn,
    /// The model wants tool results before it goes on.
    ToolUse,
    MaxTokens,
    /// The model declined to answer; its text (if any) says why.
    Refusal,
    /// Anything else the provider said, verbatim (`stop_sequence`, `content_filter`, …).
    Other(String),
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// `0.7_f32` as `0.7` on the wire rather than `0.699999988079071`.
pub(crate) fn wire_temperature(temperature: f32) -> serde_json::Value {
    let shortest = temperature
        .to_string()
        .parse::<f64>()
        .unwrap_or(f64::from(temperature));
    serde_json::json!(shortest)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn messages_are_tagged_by_role_with_camel_case_fields() {
        let messages = vec![
            Message::user("hi"),
            Message::assistant(
                "",
                vec![ToolCall {
                    id: "c1".into(),
                    name: "run".into(),
                    arguments: "{}".into(),
                    echo: None,
                }],
            ),
            Message::tool_result("c1", "ok", false),
        ];
        assert_eq!(
            serde_json::to_value(&messages).ok(),
            Some(json!([
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "", "toolCalls": [{"id": "c1", "name": "run", "arguments": "{}"}]},
                {"role": "tool", "callId": "c1", "content": "ok", "isError": false},
            ]))
        );
    }

    #[test]
    fn stream_events_are_tagged_for_the_ui() {
        let events = vec![
            StreamEvent::TextDelta("Hel".into()),
            StreamEvent::Done {
                stop_reason: StopReason::Other("content_filter".into()),
                usage: Usage {
                    input_tokens: 3,
                    output_tokens: 4,
                },
            },
        ];
        assert_eq!(
            serde_json::to_value(&events).ok(),
            Some(json!([
                {"type": "textDelta", "data": "Hel"},
                {"type": "done", "data": {"stopReason": {"other": "content_filter"}, "usage": {"inputTokens": 3, "outputTokens": 4}}},
            ]))
        );
    }
}
