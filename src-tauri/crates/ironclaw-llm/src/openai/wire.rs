//! The Chat Completions request body.

use serde_json::{json, Map, Value};

use crate::types::{wire_temperature, ChatRequest, Message, ToolSpec};

pub(crate) fn request_body(req: &ChatRequest) -> Value {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    // A tool message's content is text only, so what tools showed follows as the user's, after
    // the last result of the turn: the API wants every result right after the call.
    let mut shown: Vec<&crate::Image> = Vec::new();
    for m in &req.messages {
        if !matches!(m, Message::Tool { .. }) {
            flush_shown(&mut shown, &mut messages);
        }
        messages.push(message(m));
        if let Message::Tool { images, .. } = m {
            shown.extend(images);
        }
    }
    flush_shown(&mut shown, &mut messages);

    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    // Several local servers reject an empty `tools` array, so it is left out instead.
    if !req.tools.is_empty() {
        body.insert("tools".into(), function_tools(&req.tools));
    }
    // `max_tokens`, not OpenAI's newer `max_completion_tokens`: every compatible server
    // (Ollama, llama.cpp, vLLM, LM Studio, OpenRouter) understands the old name.
    if let Some(max_tokens) = req.max_tokens {
        body.insert("max_tokens".into(), json!(max_tokens));
    }
    if let Some(temperature) = req.temperature {
        body.insert("temperature".into(), wire_temperature(temperature));
    }
    Value::Object(body)
}

/// Tools in the `{"type": "function", "function": {…}}` shape both OpenAI's API and Ollama's
/// native one take.
pub(crate) fn function_tools(tools: &[ToolSpec]) -> Value {
    tools
        .iter()
        .map(|tool| {
            json!({
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                },
            })
        })
        .collect()
}

fn flush_shown(shown: &mut Vec<&crate::Image>, messages: &mut Vec<Value>) {
    if shown.is_empty() {
        return;
    }
    let images: Vec<crate::Image> = shown.drain(..).cloned().collect();
    let text = if images.len() == 1 {
        "The image the tool call above showed:"
    } else {
        "The images the tool calls above showed, in order:"
    };
    messages.push(json!({"role": "user", "content": image_parts(text, &images)}));
}

/// Content parts: the text, then each image as a `data:` URL.
fn image_parts(text: &str, images: &[crate::Image]) -> Value {
    let mut parts = Vec::with_capacity(images.len() + 1);
    if !text.is_empty() {
        parts.push(json!({"type": "text", "text": text}));
    }
    parts.extend(
        images
            .iter()
            .map(|i| json!({"type": "image_url", "image_url": {"url": i.data_url()}})),
    );
    Value::Array(parts)
}

fn message(message: &Message) -> Value {
    match message {
        Message::User { content, images } if images.is_empty() => {
            json!({"role": "user", "content": content})
        }
        Message::User { content, images } => {
            json!({"role": "user", "content": image_parts(content, images)})
        }
        Message::Assistant {
            content,
            tool_calls,
        } => {
            let mut out = Map::new();
            out.insert("role".into(), json!("assistant"));
            // OpenAI wants `null`, not "", for a turn that only calls tools.
            let content = if content.is_empty() && !tool_calls.is_empty() {
                Value::Null
            } else {
                json!(content)
            };
            out.insert("content".into(), content);
            if !tool_calls.is_empty() {
                let calls = tool_calls
                    .iter()
                    .map(|call| {
                        let mut wire = json!({
                            "id": crate::call_ids::for_openai(&call.id),
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        });
                        // Only what the provider itself sent; anything that no longer parses is
                        // dropped rather than sent as a string the provider never wrote.
                        let echo = call.echo.as_deref().map(serde_json::from_str::<Value>);
                        if let (Some(Ok(extra)), Some(obj)) = (echo, wire.as_object_mut()) {
                            obj.insert("extra_content".into(), extra);
                        }
                        wire
                    })
                    .collect();
                out.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(out)
        }
        Message::Tool {
            call_id,
            content,
            is_error,
            ..
        } => {
            // The format has no error flag; the prefix tells the model the tool failed.
            let content = if *is_error {
                format!("Error: {content}")
            } else {
                content.clone()
            };
            let call_id = crate::call_ids::for_openai(call_id);
            json!({"role": "tool", "tool_call_id": call_id, "content": content})
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::types::{ToolCall, ToolSpec};

    pub(crate) fn sample_request() -> ChatRequest {
        ChatRequest {
            model: "m1".into(),
            system: "You are IronClaw.".into(),
            messages: vec![
                Message::user("Run it"),
                Message::assistant(
                    "Running.",
                    vec![ToolCall {
                        id: "call_1".into(),
                        name: "run_python".into(),
                        arguments: r#"{"code":"print(1)"}"#.into(),
                        echo: None,
                    }],
                ),
                Message::tool_result("call_1", "1\n", false),
                Message::assistant(
                    "",
                    vec![ToolCall {
                        id: "call_2".into(),
                        name: "run_python".into(),
                        arguments: r#"{"code":"#.into(),
                        echo: None,
                    }],
                ),
                Message::tool_result("call_2", "arguments are not valid JSON", true),
            ],
            tools: vec![ToolSpec {
                name: "run_python".into(),
                description: "Run Python in the sandbox".into(),
                parameters: json!({"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}),
            }],
            max_tokens: Some(1024),
            temperature: Some(0.7),
            context_window: None,
        }
    }

    #[test]
    fn request_json_has_the_chat_completions_shape() {
        assert_eq!(
            request_body(&sample_request()),
            json!({
                "model": "m1",
                "stream": true,
                "stream_options": {"include_usage": true},
                "max_tokens": 1024,
                "temperature": 0.7,
                "messages": [
                    {"role": "system", "content": "You are IronClaw."},
                    {"role": "user", "content": "Run it"},
                    {"role": "assistant", "content": "Running.", "tool_calls": [
                        {"id": "call_1", "type": "function", "function": {"name": "run_python", "arguments": "{\"code\":\"print(1)\"}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "1\n"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_2", "type": "function", "function": {"name": "run_python", "arguments": "{\"code\":"}}
                    ]},
                    {"role": "tool", "tool_call_id": "call_2", "content": "Error: arguments are not valid JSON"},
                ],
                "tools": [{"type": "function", "function": {
                    "name": "run_python",
                    "description": "Run Python in the sandbox",
                    "parameters": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]},
                }}],
            })
        );
    }

    #[test]
    fn no_tools_and_no_system_prompt_are_left_out() {
        let req = ChatRequest {
            model: "m".into(),
            system: String::new(),
            messages: vec![Message::user("hi")],
            tools: vec![],
            max_tokens: None,
            temperature: None,
            context_window: None,
        };
        assert_eq!(
            request_body(&req),
            json!({
                "model": "m",
                "stream": true,
                "stream_options": {"include_usage": true},
                "messages": [{"role": "user", "content": "hi"}],
            })
        );
    }

    #[test]
    fn provider_data_goes_back_with_its_call_and_unparseable_data_does_not() {
        let call = |id: &str, echo: Option<&str>| ToolCall {
            id: id.into(),
            name: "run_code".into(),
            arguments: "{}".into(),
            echo: echo.map(str::to_string),
        };
        let req = ChatRequest {
            model: "m".into(),
            system: String::new(),
            messages: vec![Message::assistant(
                "",
                vec![
                    call("a", Some(r#"{"google":{"thought_signature":"c2ln"}}"#)),
                    call("b", Some("{not json")),
                    call("c", None),
                ],
            )],
            tools: vec![],
            max_tokens: None,
            temperature: None,
            context_window: None,
        };
        let body = request_body(&req);
        let calls = &body["messages"][0]["tool_calls"];
        assert_eq!(
            calls[0]["extra_content"],
            json!({"google": {"thought_signature": "c2ln"}})
        );
        assert!(calls[1].get("extra_content").is_none(), "{body}");
        assert!(calls[2].get("extra_content").is_none(), "{body}");
    }
}
