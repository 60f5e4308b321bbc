//! Pictures in each wire format: the person's in a user message, a tool's with its result.

use pretty_assertions::assert_eq;
use serde_json::{json, Value};

use crate::types::{ChatRequest, Image, Message, ToolCall};

fn request() -> ChatRequest {
    let png = Image {
        media_type: "image/png".into(),
        data: "iVBORw0K".into(),
    };
    ChatRequest {
        model: "m".into(),
        system: String::new(),
        messages: vec![
            Message::User {
                content: "What is this?".into(),
                images: vec![png.clone()],
            },
            Message::assistant(
                "",
                vec![ToolCall {
                    id: "call_1".into(),
                    name: "view_image".into(),
                    arguments: r#"{"path":"plot.png"}"#.into(),
                    echo: None,
                }],
            ),
            Message::Tool {
                call_id: "call_1".into(),
                content: "plot.png is shown below".into(),
                is_error: false,
                images: vec![png],
            },
        ],
        tools: vec![],
        max_tokens: None,
        temperature: None,
        context_window: None,
    }
}

#[test]
fn openai_sends_content_parts_and_a_tool_s_picture_as_the_next_user_message() {
    let body = crate::openai::wire::request_body(&request());
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        messages[0],
        json!({"role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
        ]})
    );
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[2]["content"], "plot.png is shown below");
    assert_eq!(messages[3]["role"], "user");
    assert_eq!(
        messages[3]["content"][1]["image_url"]["url"],
        "data:image/png;base64,iVBORw0K"
    );
    assert_eq!(messages.len(), 4);
}

#[test]
fn openai_puts_what_tools_showed_after_the_last_result_of_the_turn() {
    let mut req = request();
    // A second call in the same answer, without a picture.
    if let Message::Assistant { tool_calls, .. } = &mut req.messages[1] {
        tool_calls.push(ToolCall {
            id: "call_2".into(),
            name: "run_code".into(),
            arguments: "{}".into(),
            echo: None,
        });
    }
    req.messages
        .push(Message::tool_result("call_2", "done", false));
    req.messages.push(Message::user("thanks"));
    let body = crate::openai::wire::request_body(&req);
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .map(|m| m.iter().filter_map(|m| m["role"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "user", "user"]);
    assert_eq!(
        body["messages"][4]["content"][1]["image_url"]["url"],
        "data:image/png;base64,iVBORw0K"
    );
}

#[test]
fn anthropic_sends_image_blocks_in_the_message_and_in_the_tool_result() {
    let body = crate::anthropic::wire::request_body(&request());
    let image = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}});
    assert_eq!(
        body["messages"][0]["content"],
        json!([{"type": "text", "text": "What is this?"}, image.clone()])
    );
    let result = &body["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "plot.png is shown below"}, image])
    );
}

#[test]
fn ollama_sends_bare_base64_beside_the_text_on_any_role() {
    let body = crate::ollama::wire::request_body(&request(), None);
    assert_eq!(body["messages"][0]["images"], json!(["iVBORw0K"]));
    assert_eq!(body["messages"][2]["role"], "tool");
    assert_eq!(body["messages"][2]["images"], json!(["iVBORw0K"]));
    assert_eq!(body["messages"][1].get("images"), None::<&Value>);
}
