//! The Messages API request body.

use serde_json::{json, Map, Value};

use crate::types::{wire_temperature, ChatRequest, Message, ToolCall};

/// The API requires `max_tokens`; 4096 is within every current model's output limit.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 4096;

pub(crate) fn request_body(req: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert(
        "max_tokens".into(),
        json!(req.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    body.insert("stream".into(), json!(true));
    if !req.system.is_empty() {
        body.insert("system".into(), json!(req.system));
    }
    body.insert("messages".into(), Value::Array(messages(&req.messages)));
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(temperature) = req.temperature {
        body.insert("temperature".into(), wire_temperature(temperature));
    }
    Value::Object(body)
}

/// Tool results travel as `tool_result` blocks in a user message, and the API wants all results
/// of one assistant turn in the *same* user message, so consecutive user-side messages merge.
fn messages(messages: &[Message]) -> Vec<Value> {
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks) = match message {
            Message::User { content, images } => {
                let mut blocks: Vec<Value> = text_block(content).into_iter().collect();
                blocks.extend(images.iter().map(image_block));
                ("user", blocks)
            }
            Message::Tool {
                call_id,
                content,
                is_error,
                images,
            } => {
                let call_id = crate::call_ids::for_anthropic(call_id);
                // A tool result's content may hold images itself.
                let content = if images.is_empty() {
                    json!(content)
                } else {
                    let mut parts: Vec<Value> = text_block(content).into_iter().collect();
                    parts.extend(images.iter().map(image_block));
                    Value::Array(parts)
                };
                let block = if *is_error {
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": true})
                } else {
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content})
                };
                ("user", vec![block])
            }
            Message::Assistant {
                content,
                tool_calls,
            } => {
                let mut blocks: Vec<Value> = text_block(content).into_iter().collect();
                blocks.extend(tool_calls.iter().map(tool_use_block));
                ("assistant", blocks)
            }
        };
        // The API rejects empty content; a message with nothing to say is left out.
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
}

fn image_block(image: &crate::Image) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.data}})
}

fn tool_use_block(call: &ToolCall) -> Value {
    let id = crate::call_ids::for_anthropic(&call.id);
    json!({"type": "tool_use", "id": id, "name": call.name, "input": tool_input(&call.arguments)})
}

/// `input` must be a JSON object. Arguments the model got wrong are kept as text under one key,
/// so the model can see what it sent when it reads the error result that follows.
fn tool_input(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return json!({});
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(object @ Value::Object(_)) => object,
        Ok(_) | Err(_) => json!({"_unparsed_arguments": arguments}),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::types::ToolSpec;

    fn sample_request() -> ChatRequest {
        ChatRequest {
            model: "claude-x".into(),
            system: "You are IronClaw.".into(),
            messages: vec![
                Message::user("Run both"),
                Message::assistant(
                    "Running.",
                    vec![
                        ToolCall {
                            id: "toolu_1".into(),
                            name: "run_python".into(),
                            arguments: r#"{"code":"print(1)"}"#.into(),
                            echo: None,
                        },
                        ToolCall {
                            id: "toolu_2".into(),
                            name: "run_python".into(),
                            arguments: r#"{"code":"#.into(),
                            echo: None,
                        },
                    ],
                ),
                Message::tool_result("toolu_1", "1\n", false),
                Message::tool_result("toolu_2", "arguments are not valid JSON", true),
                Message::user("Thanks"),
            ],
            tools: vec![ToolSpec {
                name: "run_python".into(),
                description: "Run Python in the sandbox".into(),
                parameters: json!({"type": "object", "properties": {"code": {"type": "string"}}}),
            }],
            max_tokens: None,
            temperature: Some(0.2),
            context_window: None,
        }
    }

    #[test]
    fn request_json_has_the_messages_api_shape() {
        assert_eq!(
            request_body(&sample_request()),
            json!({
                "model": "claude-x",
                "max_tokens": 4096,
                "stream": true,
                "temperature": 0.2,
                "system": "You are IronClaw.",
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "Run both"}]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Running."},
                        {"type": "tool_use", "id": "toolu_1", "name": "run_python", "input": {"code": "print(1)"}},
                        {"type": "tool_use", "id": "toolu_2", "name": "run_python", "input": {"_unparsed_arguments": "{\"code\":"}},
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "1\n"},
                        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "arguments are not valid JSON", "is_error": true},
                        {"type": "text", "text": "Thanks"},
                    ]},
                ],
                "tools": [{
                    "name": "run_python",
                    "description": "Run Python in the sandbox",
                    "input_schema": {"type": "object", "properties": {"code": {"type": "string"}}},
                }],
            })
        );
    }

    #[test]
    fn empty_assistant_turns_are_left_out_and_empty_arguments_become_an_empty_object() {
        let messages = messages(&[
            Message::user("a"),
            Message::assistant("", vec![]),
            Message::assistant(
                "",
                vec![ToolCall {
                    id: "t".into(),
                    name: "now".into(),
                    arguments: String::new(),
                    echo: None,
                }],
            ),
        ]);
        assert_eq!(
            messages,
            vec![
                json!({"role": "user", "content": [{"type": "text", "text": "a"}]}),
                json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "now", "input": {}}]}),
            ]
        );
    }
}
