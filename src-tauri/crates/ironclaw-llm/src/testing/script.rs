//! What the scripted server answers, and how each answer looks on either wire format.

use std::time::Duration;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// One scripted answer to one chat request. Script files use the same shape as JSON:
/// `{"type": "text", "chunks": ["Hel", "lo"], "delayMs": 20}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Reply {
    /// The text in these chunks, one event each, then a normal end of turn.
    Text {
        chunks: Vec<String>,
        /// Pause before every event after the first.
        #[serde(default)]
        delay_ms: u64,
    },
    /// Optional text, then tool calls whose arguments arrive in several deltas.
    ToolCalls {
        #[serde(default)]
        text: Vec<String>,
        calls: Vec<ScriptedCall>,
        #[serde(default)]
        delay_ms: u64,
    },
    /// An HTTP error instead of a stream.
    Status {
        status: u16,
        body: String,
        /// Sent verbatim as `Retry-After` (seconds or an HTTP date).
        #[serde(default)]
        retry_after: Option<String>,
    },
    /// The text chunks, then `raw` written verbatim as the next event (usually broken JSON).
    Malformed {
        #[serde(default)]
        chunks: Vec<String>,
        raw: String,
    },
    /// A 200 answer whose body is exactly these bytes under `content_type`, for garbage that
    /// is not even an event stream (an HTML proxy page, binary noise, invalid UTF-8).
    Raw { content_type: String, body: Vec<u8> },
    /// A stream recorded from a real server (or written in its shape), sent verbatim one line
    /// per write, under `text/event-stream` whatever endpoint was asked. With `hold_open` the
    /// connection then stays open without another byte, as some servers leave it.
    Recorded {
        body: String,
        #[serde(default)]
        hold_open: bool,
    },
    /// The first `after` text chunks, then the connection is cut without ending the stream.
    Disconnect {
        chunks: Vec<String>,
        after: usize,
        #[serde(default)]
        delay_ms: u64,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScriptedCall {
    pub id: String,
    pub name: String,
    /// Concatenated, these are the arguments' JSON text.
    pub argument_chunks: Vec<String>,
}

impl ScriptedCall {
    pub fn new<S: Into<String>>(
        id: &str,
        name: &str,
        argument_chunks: impl IntoIterator<Item = S>,
    ) -> Self {
        ScriptedCall {
            id: id.into(),
            name: name.into(),
            argument_chunks: argument_chunks.into_iter().map(Into::into).collect(),
        }
    }
}

impl Reply {
    pub fn text<S: Into<String>>(chunks: impl IntoIterator<Item = S>) -> Self {
        Reply::Text {
            chunks: strings(chunks),
            delay_ms: 0,
        }
    }

    pub fn tool_calls(calls: Vec<ScriptedCall>) -> Self {
        Reply::ToolCalls {
            text: Vec::new(),
            calls,
            delay_ms: 0,
        }
    }

    pub fn status(status: u16, body: impl Into<String>) -> Self {
        Reply::Status {
            status,
            body: body.into(),
            retry_after: None,
        }
    }

    pub fn malformed<S: Into<String>>(chunks: impl IntoIterator<Item = S>, raw: &str) -> Self {
        Reply::Malformed {
            chunks: strings(chunks),
            raw: raw.into(),
        }
    }

    pub fn raw(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Reply::Raw {
            content_type: content_type.into(),
            body: body.into(),
        }
    }

    pub fn recorded(body: impl Into<String>, hold_open: bool) -> Self {
        Reply::Recorded {
            body: body.into(),
            hold_open,
        }
    }

    pub fn disconnect<S: Into<String>>(chunks: impl IntoIterator<Item = S>, after: usize) -> Self {
        Reply::Disconnect {
            chunks: strings(chunks),
            after,
            delay_ms: 0,
        }
    }

    /// Sets the pause between events; no effect on replies that do not stream.
    pub fn with_delay(mut self, delay: Duration) -> Self {
        let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        match &mut self {
            Reply::Text { delay_ms, .. }
            | Reply::ToolCalls { delay_ms, .. }
            | Reply::Disconnect { delay_ms, .. } => *delay_ms = ms,
            Reply::Status { .. }
            | Reply::Malformed { .. }
            | Reply::Raw { .. }
            | Reply::Recorded { .. } => {}
        }
        self
    }

    /// Sets `Retry-After`; no effect on replies that are not an HTTP error.
    pub fn with_retry_after(mut self, value: &str) -> Self {
        if let Reply::Status { retry_after, .. } = &mut self {
            *retry_after = Some(value.into());
        }
        self
    }
}

fn strings<S: Into<String>>(items: impl IntoIterator<Item = S>) -> Vec<String> {
    items.into_iter().map(Into::into).collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    OpenAi,
    Anthropic,
    /// Ollama's native `/api/chat`: newline-delimited JSON.
    Ollama,
}

impl Format {
    pub(crate) fn content_type(self) -> &'static str {
        match self {
            Format::Ollama => "application/x-ndjson",
            Format::OpenAi | Format::Anthropic => "text/event-stream",
        }
    }
}

/// One thing the response body does next.
#[derive(Debug)]
pub(crate) enum Step {
    Send(Bytes),
    Sleep(Duration),
    Abort,
}

/// The body of a streaming reply; `None` for [`Reply::Status`] and [`Reply::Raw`], which are
/// answered whole.
pub(crate) fn steps(reply: &Reply, format: Format, model: &str) -> Option<Vec<Step>> {
    let turn = |text: &[String], calls: &[ScriptedCall], complete: bool| match format {
        Format::OpenAi => openai_events(model, text, calls, complete),
        Format::Anthropic => anthropic_events(model, text, calls, complete),
        Format::Ollama => ollama_events(model, text, calls, complete),
    };
    let (events, delay_ms, ending) = match reply {
        Reply::Status { .. } | Reply::Raw { .. } => return None,
        Reply::Recorded { body, hold_open } => return Some(recorded_steps(body, *hold_open)),
        Reply::Text { chunks, delay_ms } => (turn(chunks, &[], true), *delay_ms, None),
        Reply::ToolCalls {
            text,
            calls,
            delay_ms,
        } => (turn(text, calls, true), *delay_ms, None),
        Reply::Malformed { chunks, raw } => {
            let mut events = turn(chunks, &[], false);
            let raw = match format {
                Format::Ollama => format!("{raw}\n"),
                Format::OpenAi | Format::Anthropic => format!("{raw}\n\n"),
            };
            events.push(Event::content(Bytes::from(raw)));
            (events, 0, None)
        }
        Reply::Disconnect {
            chunks,
            after,
            delay_ms,
        } => {
            let sent = chunks.get(..*after).unwrap_or(chunks);
            (turn(sent, &[], false), *delay_ms, Some(Step::Abort))
        }
    };
    let delay = Duration::from_millis(delay_ms);
    let mut steps = Vec::with_capacity(events.len() * 2 + 2);
    let mut content_sent = false;
    for event in events {
        // Pauses go between content events: the preamble (`message_start`, the role chunk…)
        // arrives at once, as it does from the real services.
        if content_sent && !delay.is_zero() {
            steps.push(Step::Sleep(delay));
        }
        content_sent |= event.content;
        steps.push(Step::Send(event.bytes));
    }
    if let Some(ending) = ending {
        // Lets the server flush what it wrote, so the cut comes after the data, as on a real
        // network, rather than discarding it.
        steps.push(Step::Sleep(Duration::from_millis(1)));
        steps.push(ending);
    }
    Some(steps)
}

fn recorded_steps(body: &str, hold_open: bool) -> Vec<Step> {
    let mut steps: Vec<Step> = body
        .split_inclusive('\n')
        .map(|line| Step::Send(Bytes::copy_from_slice(line.as_bytes())))
        .collect();
    if hold_open {
        // Longer than any test's hang guard; the client is expected to stop reading first.
        steps.push(Step::Sleep(Duration::from_secs(3600)));
    }
    steps
}

/// One encoded SSE event; `content` if it carries text or a tool call.
struct Event {
    bytes: Bytes,
    content: bool,
}

impl Event {
    fn preamble(bytes: Bytes) -> Self {
        Event {
            bytes,
            content: false,
        }
    }

    fn content(bytes: Bytes) -> Self {
        Event {
            bytes,
            content: true,
        }
    }
}

fn output_tokens(text: &[String], calls: &[ScriptedCall]) -> usize {
    text.len() + calls.iter().map(|c| c.argument_chunks.len()).sum::<usize>()
}

/// Scripted turns report this many prompt tokens.
pub const SCRIPTED_INPUT_TOKENS: u64 = 10;

fn openai_events(
    model: &str,
    text: &[String],
    calls: &[ScriptedCall],
    complete: bool,
) -> Vec<Event> {
    let chunk = |choices: Value, usage: Value| {
        let body = json!({
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": choices,
            "usage": usage,
        });
        Bytes::from(format!("data: {body}\n\n"))
    };
    let delta = |delta: Value, finish: Value| {
        chunk(
            json!([{"index": 0, "delta": delta, "finish_reason": finish}]),
            Value::Null,
        )
    };
    let mut events = vec![Event::preamble(delta(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    ))];
    events.extend(
        text.iter()
            .map(|t| Event::content(delta(json!({"content": t}), Value::Null))),
    );
    for (index, call) in calls.iter().enumerate() {
        events.push(Event::content(delta(
            json!({"tool_calls": [{"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}]}),
            Value::Null,
        )));
        for piece in &call.argument_chunks {
            events.push(Event::content(delta(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                Value::Null,
            )));
        }
    }
    if complete {
        let finish = if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        events.push(Event::content(delta(json!({}), json!(finish))));
        let output = output_tokens(text, calls);
        events.push(Event::content(chunk(
            json!([]),
            json!({"prompt_tokens": SCRIPTED_INPUT_TOKENS, "completion_tokens": output, "total_tokens": SCRIPTED_INPUT_TOKENS as usize + output}),
        )));
        events.push(Event::content(Bytes::from_static(b"data: [DONE]\n\n")));
    }
    events
}

fn ollama_events(
    model: &str,
    text: &[String],
    calls: &[ScriptedCall],
    complete: bool,
) -> Vec<Event> {
    let line = |message: Value, done: Value| {
        let mut body = json!({
            "model": model,
            "created_at": "2026-01-01T00:00:00Z",
            "message": message,
            "done": false,
        });
        if let (Some(body), Some(done)) = (body.as_object_mut(), done.as_object()) {
            body.extend(done.clone());
        }
        Bytes::from(format!("{body}\n"))
    };
    let mut events: Vec<Event> = text
        .iter()
        .map(|t| {
            Event::content(line(
                json!({"role": "assistant", "content": t}),
                Value::Null,
            ))
        })
        .collect();
    if !calls.is_empty() {
        // Ollama sends each call whole, its arguments parsed.
        let calls: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(index, call)| {
                let text = call.argument_chunks.concat();
                let arguments =
                    serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text));
                json!({"id": call.id, "function": {"index": index, "name": call.name, "arguments": arguments}})
            })
            .collect();
        events.push(Event::content(line(
            json!({"role": "assistant", "content": "", "tool_calls": calls}),
            Value::Null,
        )));
    }
    if complete {
        events.push(Event::content(line(
            json!({"role": "assistant", "content": ""}),
            json!({
                "done": true,
                "done_reason": "stop",
                "prompt_eval_count": SCRIPTED_INPUT_TOKENS,
                "eval_count": output_tokens(text, calls),
            }),
        )));
    }
    events
}

fn anthropic_events(
    model: &str,
    text: &[String],
    calls: &[ScriptedCall],
    complete: bool,
) -> Vec<Event> {
    let event = |body: Value| {
        let kind = body
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string();
        Bytes::from(format!("event: {kind}\ndata: {body}\n\n"))
    };
    let mut events = vec![
        Event::preamble(event(json!({"type": "message_start", "message": {
            "id": "msg_scripted", "type": "message", "role": "assistant", "content": [], "model": model,
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": SCRIPTED_INPUT_TOKENS, "output_tokens": 1},
        }}))),
        Event::preamble(event(json!({"type": "ping"}))),
    ];
    let mut block = 0;
    if !text.is_empty() {
        events.push(Event::preamble(event(
            json!({"type": "content_block_start", "index": block, "content_block": {"type": "text", "text": ""}}),
        )));
        events.extend(text.iter().map(|t| {
            Event::content(event(
                json!({"type": "content_block_delta", "index": block, "delta": {"type": "text_delta", "text": t}}),
            ))
        }));
        if !complete {
            return events;
        }
        events.push(Event::content(event(
            json!({"type": "content_block_stop", "index": block}),
        )));
        block += 1;
    }
    for call in calls {
        events.push(Event::content(event(json!({
            "type": "content_block_start", "index": block,
            "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
        }))));
        events.extend(call.argument_chunks.iter().map(|piece| {
            Event::content(event(
                json!({"type": "content_block_delta", "index": block, "delta": {"type": "input_json_delta", "partial_json": piece}}),
            ))
        }));
        events.push(Event::content(event(
            json!({"type": "content_block_stop", "index": block}),
        )));
        block += 1;
    }
    if complete {
        let stop = if calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        };
        events.push(Event::content(event(json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": output_tokens(text, calls)},
        }))));
        events.push(Event::content(event(json!({"type": "message_stop"}))));
    }
    events
}
