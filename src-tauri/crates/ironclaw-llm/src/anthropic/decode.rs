//! Messages API SSE events → [`StreamEvent`]s.

use std::collections::{HashMap, VecDeque};

use crate::sse::SseEvent;
use serde::Deserialize;

use crate::classify::{self, ErrorBody, ErrorContext};
use crate::error::{Error, Result};
use crate::http::Decoder;
use crate::types::{StopReason, StreamEvent, Usage};

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireEvent {
    MessageStart {
        message: WireMessage,
    },
    ContentBlockStart {
        index: usize,
        content_block: Block,
    },
    ContentBlockDelta {
        index: usize,
        delta: BlockDelta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: MessageDelta,
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: serde_json::Value,
    },
    /// The API may add event types; they are ignored, as its documentation asks.
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct WireMessage {
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
    },
    /// Blocks IronClaw neither shows nor runs: redacted thinking, the server's own tools
    /// (`server_tool_use`, whose input streams like a tool call's) and their results.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDelta {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    /// Cached prompt tokens are still prompt tokens: they count towards the context window.
    fn input(&self) -> Option<u64> {
        let parts = [
            self.input_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
        ];
        parts
            .iter()
            .any(Option::is_some)
            .then(|| parts.iter().flatten().sum())
    }
}

struct ToolBlock {
    index: usize,
    got_input: bool,
}

/// What a started content block is, so that its deltas go where they belong.
enum BlockKind {
    Text,
    Thinking,
    Tool(ToolBlock),
    Other,
}

pub(crate) struct AnthropicDecoder {
    ctx: ErrorContext,
    /// Content-block index → what the block is.
    blocks: HashMap<usize, BlockKind>,
    tool_calls: usize,
    stop_reason: Option<String>,
    usage: Usage,
    finished: bool,
}

impl AnthropicDecoder {
    pub fn new(ctx: ErrorContext) -> Self {
        AnthropicDecoder {
            ctx,
            blocks: HashMap::new(),
            tool_calls: 0,
            stop_reason: None,
            usage: Usage::default(),
            finished: false,
        }
    }

    fn update_usage(&mut self, usage: &WireUsage) {
        if let Some(input) = usage.input() {
            self.usage.input_tokens = input;
        }
        if let Some(output) = usage.output_tokens {
            self.usage.output_tokens = output;
        }
    }

    fn stop_reason(&self) -> StopReason {
        match self.stop_reason.as_deref() {
            Some("end_turn") => StopReason::EndTurn,
            Some("tool_use") => StopReason::ToolUse,
            // The second: the answer filled what was left of the context window; for the
            // person it is cut off all the same.
            Some("max_tokens" | "model_context_window_exceeded") => StopReason::MaxTokens,
            Some("refusal") => StopReason::Refusal,
            Some(other) => StopReason::Other(other.to_string()),
            None if self.tool_calls == 0 => StopReason::EndTurn,
            None => StopReason::ToolUse,
        }
    }
}

impl Decoder for AnthropicDecoder {
    fn on_event(&mut self, sse: &SseEvent, out: &mut VecDeque<StreamEvent>) -> Result<()> {
        let Some(data) = sse.data.as_deref().filter(|d| !d.trim().is_empty()) else {
            return Ok(());
        };
        if sse.is_error() && !data.contains("\"type\"") {
            // An `error:` field rather than the API's own error event (a proxy in between).
            return Err(classify::from_stream_error(
                &self.ctx,
                &ErrorBody::from_event_data(data.trim()),
            ));
        }
        let event: WireEvent = serde_json::from_str(data)
            .map_err(|err| Error::malformed(&self.ctx.provider, format!("bad event: {err}")))?;
        match event {
            WireEvent::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    self.update_usage(&usage);
                }
            }
            WireEvent::ContentBlockStart {
                index: block,
                content_block,
            } => {
                let kind = match content_block {
                    Block::Text { text } => {
                        push(out, text, StreamEvent::TextDelta);
                        BlockKind::Text
                    }
                    Block::Thinking { thinking } => {
                        push(out, thinking, StreamEvent::ReasoningDelta);
                        BlockKind::Thinking
                    }
                    Block::Other => BlockKind::Other,
                    Block::ToolUse { id, name } => {
                        let index = self.tool_calls;
                        self.tool_calls += 1;
                        out.push_back(StreamEvent::ToolCallStart { index, id, name });
                        BlockKind::Tool(ToolBlock {
                            index,
                            got_input: false,
                        })
                    }
                };
                self.blocks.insert(block, kind);
            }
            WireEvent::ContentBlockDelta {
                index: block,
                delta,
            } => {
                let kind = self.blocks.get_mut(&block).ok_or_else(|| {
                    Error::malformed(
                        &self.ctx.provider,
                        format!("a delta for content block {block}, which never started"),
                    )
                })?;
                match (kind, delta) {
                    (BlockKind::Text, BlockDelta::TextDelta { text }) => {
                        push(out, text, StreamEvent::TextDelta)
                    }
                    (BlockKind::Thinking, BlockDelta::ThinkingDelta { thinking }) => {
                        push(out, thinking, StreamEvent::ReasoningDelta)
                    }
                    (BlockKind::Tool(tool), BlockDelta::InputJsonDelta { partial_json })
                        if !partial_json.is_empty() =>
                    {
                        tool.got_input = true;
                        out.push_back(StreamEvent::ToolCallDelta {
                            index: tool.index,
                            arguments: partial_json,
                        });
                    }
                    // Signatures, citations, the input of the server's own tools, and kinds
                    // added later.
                    _ => {}
                }
            }
            WireEvent::ContentBlockStop { index: block } => {
                // A call without arguments streams no input at all; its input is `{}`.
                if let Some(BlockKind::Tool(tool)) = self.blocks.get_mut(&block) {
                    if tool.got_input {
                        return Ok(());
                    }
                    tool.got_input = true;
                    out.push_back(StreamEvent::ToolCallDelta {
                        index: tool.index,
                        arguments: "{}".into(),
                    });
                }
            }
            WireEvent::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                if let Some(usage) = usage {
                    self.update_usage(&usage);
                }
            }
            WireEvent::MessageStop => {
                out.push_back(StreamEvent::Done {
                    stop_reason: self.stop_reason(),
                    usage: self.usage,
                });
                self.finished = true;
            }
            WireEvent::Error { error } => {
                let body = ErrorBody::from_value(&serde_json::json!({ "error": error }))
                    .unwrap_or_default();
                return Err(classify::from_stream_error(&self.ctx, &body));
            }
            WireEvent::Ping | WireEvent::Unknown => {}
        }
        Ok(())
    }

    fn on_eof(&mut self, _out: &mut VecDeque<StreamEvent>) -> Result<()> {
        if self.finished {
            Ok(())
        } else {
            Err(Error::disconnected(
                &self.ctx.provider,
                "the stream ended before `message_stop`",
            ))
        }
    }

    fn is_finished(&self) -> bool {
        self.finished
    }

    fn said_why_it_stopped(&self) -> bool {
        self.stop_reason.is_some()
    }
}

fn push(out: &mut VecDeque<StreamEvent>, text: String, event: fn(String) -> StreamEvent) {
    if !text.is_empty() {
        out.push_back(event(text));
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn decode(events: &[&str]) -> Result<Vec<StreamEvent>> {
        let mut decoder = AnthropicDecoder::new(ErrorContext {
            provider: "anthropic".into(),
            model: "m".into(),
            url: "http://127.0.0.1:1/v1/messages".into(),
        });
        let mut out = VecDeque::new();
        for data in events {
            decoder.on_event(&SseEvent::data(data), &mut out)?;
        }
        decoder.on_eof(&mut out)?;
        Ok(out.into_iter().collect())
    }

    #[test]
    fn cached_prompt_tokens_count_as_input_and_a_tool_without_input_gets_empty_object() -> Result<()>
    {
        let events = decode(&[
            r#"{"type":"message_start","message":{"usage":{"input_tokens":5,"cache_read_input_tokens":100,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"now","input":{}}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}"#,
            r#"{"type":"some_future_event"}"#,
            r#"{"type":"message_stop"}"#,
        ])?;
        assert_eq!(
            events,
            vec![
                StreamEvent::ReasoningDelta("hmm".into()),
                StreamEvent::ToolCallStart {
                    index: 0,
                    id: "t1".into(),
                    name: "now".into()
                },
                StreamEvent::ToolCallDelta {
                    index: 0,
                    arguments: "{}".into()
                },
                StreamEvent::Done {
                    stop_reason: StopReason::ToolUse,
                    usage: Usage {
                        input_tokens: 105,
                        output_tokens: 9
                    },
                },
            ]
        );
        Ok(())
    }

    #[test]
    fn an_error_event_is_classified() {
        let result = decode(&[
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ]);
        assert!(matches!(result, Err(Error::Overloaded { .. })));
    }
}
