//! The request body of Ollama's native `/api/chat`.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use crate::types::{wire_temperature, ChatRequest, Message};

pub(crate) fn request_body(req: &ChatRequest, num_ctx: Option<u32>) -> Value {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    // Tool results name their tool, not the call's id.
    let mut names: HashMap<&str, &str> = HashMap::new();
    for message in &req.messages {
        messages.push(match message {
            Message::User { content, images } => {
                with_images(json!({"role": "user", "content": content}), images)
            }
            Message::Assistant {
                content,
                tool_calls,
            } => {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|call| {
                        names.insert(&call.id, &call.name);
                        // The arguments go as an object; text that is not one (the model wrote
                        // broken JSON, and was told so) goes as a string, which Ollama keeps.
                        let arguments = serde_json::from_str::<Value>(&call.arguments)
                            .ok()
                            .filter(Value::is_object)
                            .unwrap_or_else(|| json!({ "text": call.arguments }));
                        json!({"function": {"name": call.name, "arguments": arguments}})
                    })
                    .collect();
                let mut out = Map::new();
                out.insert("role".into(), json!("assistant"));
                out.insert("content".into(), json!(content));
                if !calls.is_empty() {
                    out.insert("tool_calls".into(), Value::Array(calls));
                }
                Value::Object(out)
            }
            Message::Tool {
                call_id,
                content,
                images,
                ..
            } => with_images(
                json!({
                    "role": "tool",
                    "content": content,
                    "tool_name": names.get(call_id.as_str()).copied().unwrap_or_default(),
                }),
                images,
            ),
        });
    }
    let mut options = Map::new();
    // Without it Ollama uses its small default window and silently drops the start of the
    // prompt: the system prompt first.
    if let Some(num_ctx) = num_ctx {
        options.insert("num_ctx".into(), json!(num_ctx));
    }
    if let Some(max_tokens) = req.max_tokens {
        options.insert("num_predict".into(), json!(max_tokens));
    }
    if let Some(temperature) = req.temperature {
        options.insert("temperature".into(), wire_temperature(temperature));
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    if !req.tools.is_empty() {
        body.insert(
            "tools".into(),
            crate::openai::wire::function_tools(&req.tools),
        );
    }
    if !options.is_empty() {
        body.insert("options".into(), Value::Object(options));
    }
    Value::Object(body)
}

/// Ollama takes a message's images as bare base64 strings beside its text, on any role.
fn with_images(mut message: Value, images: &[crate::Image]) -> Value {
    if let (false, Some(obj)) = (images.is_empty(), message.as_object_mut()) {
        let data: Vec<&str> = images.iter().map(|i| i.data.as_str()).collect();
        obj.insert("images".into(), json!(data));
    }
    message
}

/// The model's own window from `/api/show`: a `num_ctx` its Modelfile sets, else the
/// architecture's `<arch>.context_length` in `model_info`.
pub(crate) fn model_window(show: &Value) -> Option<u32> {
    let from_parameters = show
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|text| {
            text.lines().find_map(|line| {
                let mut words = line.split_whitespace();
                (words.next() == Some("num_ctx"))
                    .then(|| words.next()?.parse().ok())
                    .flatten()
            })
        });
    let from_info = show
        .get("model_info")
        .and_then(Value::as_object)
        .and_then(|info| {
            info.iter()
                .find(|(key, _)| key.ends_with(".context_length"))
                .and_then(|(_, value)| value.as_u64())
        })
        .and_then(|n| u32::try_from(n).ok());
    from_parameters.or(from_info)
}
