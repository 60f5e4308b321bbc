//! Ollama's native chat stream (one JSON object per line) → [`StreamEvent`]s. Tool calls come
//! whole, with their arguments as a JSON object; the last line says `done` with the reason and
//! the token counts; a failure is a line holding only `error`.

use std::collections::VecDeque;

use serde::Deserialize;
use serde_json::Value;

use crate::classify::{self, ErrorBody, ErrorContext};
use crate::error::{Error, Result};
use crate::http::Decoder;
use crate::sse::SseEvent;
use crate::types::{StopReason, StreamEvent, Usage};

#[derive(Deserialize)]
struct Line {
    message: Option<WireMessage>,
    #[serde(default)]
    done: bool,
    done_reason: Option<String>,
    prompt_eval_count: Option<u64>,
    eval_count: Option<u64>,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: String,
    #[serde(default)]
    thinking: String,
    #[serde(default)]
    tool_calls: Vec<WireToolCall>,
}

#[derive(Deserialize)]
struct WireToolCall {
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Value,
}

pub(crate) struct OllamaDecoder {
    ctx: ErrorContext,
    calls: usize,
    finished: bool,
}

impl OllamaDecoder {
    pub fn new(ctx: ErrorContext) -> Self {
        OllamaDecoder {
            ctx,
            calls: 0,
            finished: false,
        }
    }
}

impl Decoder for OllamaDecoder {
    fn on_event(&mut self, sse: &SseEvent, out: &mut VecDeque<StreamEvent>) -> Result<()> {
        let Some(data) = sse.data.as_deref().map(str::trim).filter(|d| !d.is_empty()) else {
            return Ok(());
        };
        let value: Value = serde_json::from_str(data).map_err(|err| {
            Error::malformed(&self.ctx.provider, format!("bad JSON in a line: {err}"))
        })?;
        if let Some(error) = ErrorBody::from_value(&value) {
            return Err(classify::from_stream_error(&self.ctx, &error));
        }
        let line: Line = serde_json::from_value(value).map_err(|err| {
            Error::malformed(&self.ctx.provider, format!("unexpected line: {err}"))
        })?;
        if let Some(message) = line.message {
            if !message.thinking.is_empty() {
                out.push_back(StreamEvent::ReasoningDelta(message.thinking));
            }
            if !message.content.is_empty() {
                out.push_back(StreamEvent::TextDelta(message.content));
            }
            for call in message.tool_calls {
                let index = self.calls;
                self.calls += 1;
                let id = call
                    .id
                    .filter(|id| !id.is_empty())
                    .unwrap_or_else(|| format!("call_{index}"));
                out.push_back(StreamEvent::ToolCallStart {
                    index,
                    id,
                    name: call.function.name,
                });
                let arguments = match call.function.arguments {
                    Value::Null => "{}".to_string(),
                    // Some models put the arguments' JSON text in a string.
                    Value::String(text) => text,
                    other => other.to_string(),
                };
                out.push_back(StreamEvent::ToolCallDelta { index, arguments });
            }
        }
        if line.done {
            let stop_reason = match line.done_reason.as_deref() {
                _ if self.calls > 0 => StopReason::ToolUse,
                Some("length") => StopReason::MaxTokens,
                Some("stop") | None => StopReason::EndTurn,
                Some(other) => StopReason::Other(other.to_string()),
            };
            out.push_back(StreamEvent::Done {
                stop_reason,
                usage: Usage {
                    input_tokens: line.prompt_eval_count.unwrap_or(0),
                    output_tokens: line.eval_count.unwrap_or(0),
                },
            });
            self.finished = true;
        }
        Ok(())
    }

    fn on_eof(&mut self, _out: &mut VecDeque<StreamEvent>) -> Result<()> {
        if self.finished {
            Ok(())
        } else {
            Err(Error::disconnected(
                &self.ctx.provider,
                "the stream ended before the line saying `done`",
            ))
        }
    }

    fn is_finished(&self) -> bool {
        self.finished
    }

    fn ndjson(&self) -> bool {
        true
    }
}
