#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::test_support::{collect, fast_options, request, text_of};
use crate::testing::{ContextLimit, Reply, ScriptedCall, ScriptedServer};
use crate::types::{Message, StopReason, StreamEvent, ToolCall};

async fn setup() -> (ScriptedServer, Ollama) {
    let (server, base) = ScriptedServer::start().await.unwrap();
    let provider = Ollama::new(&format!("{base}/v1"))
        .unwrap()
        .with_options(fast_options())
        .unwrap();
    (server, provider)
}

#[tokio::test]
async fn the_native_api_gets_num_ctx_the_system_prompt_first_and_named_tool_results() {
    let (server, provider) = setup().await;
    server.push(Reply::tool_calls(vec![ScriptedCall::new(
        "call_7",
        "run_python",
        [r#"{"code": "#, r#""print(1)"}"#],
    )]));
    let mut req = request("qwen3:8b");
    req.context_window = Some(16_384);
    req.messages.push(Message::assistant(
        "",
        vec![ToolCall {
            id: "c0".into(),
            name: "run_python".into(),
            arguments: r#"{"code":"1"}"#.into(),
            echo: None,
        }],
    ));
    req.messages.push(Message::tool_result("c0", "1", false));
    let stream = provider
        .stream(&req, CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = collect(stream).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        events,
        vec![
            StreamEvent::ToolCallStart {
                index: 0,
                id: "call_7".into(),
                name: "run_python".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: r#"{"code":"print(1)"}"#.into()
            },
            StreamEvent::Done {
                stop_reason: StopReason::ToolUse,
                usage: crate::types::Usage {
                    input_tokens: 10,
                    output_tokens: 2
                }
            },
        ]
    );
    let sent = &server.chat_requests()[0];
    assert_eq!(sent.path, "/api/chat");
    assert_eq!(sent.body["options"]["num_ctx"], json!(16_384));
    assert_eq!(sent.body["messages"][0]["role"], json!("system"));
    assert_eq!(
        sent.body["messages"][2]["tool_calls"][0]["function"]["arguments"],
        json!({"code": "1"})
    );
    assert_eq!(sent.body["messages"][3]["tool_name"], json!("run_python"));
}

#[tokio::test]
async fn thinking_text_and_a_mid_stream_error_are_decoded() {
    let (server, provider) = setup().await;
    server.push(Reply::recorded(
        concat!(
            "{\"model\":\"qwen3\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"thinking\":\"Hmm.\"},\"done\":false}\n",
            "{\"model\":\"qwen3\",\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"done\":false}\n",
            "{\"model\":\"qwen3\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"length\",\"prompt_eval_count\":5,\"eval_count\":1}\n",
        ),
        false,
    ));
    server.push(Reply::recorded(
        "{\"model\":\"qwen3\",\"message\":{\"role\":\"assistant\",\"content\":\"Par\"},\"done\":false}\n{\"error\":\"an error was encountered while running the model: unexpected EOF\"}\n",
        false,
    ));
    let stream = provider
        .stream(&request("qwen3"), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = collect(stream).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(events[0], StreamEvent::ReasoningDelta("Hmm.".into()));
    assert_eq!(text_of(&events), "Hi");
    assert!(matches!(
        events.last(),
        Some(StreamEvent::Done {
            stop_reason: StopReason::MaxTokens,
            ..
        })
    ));
    let stream = provider
        .stream(&request("qwen3"), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = collect(stream).await;
    assert_eq!(text_of(&events), "Par");
    assert!(matches!(error, Some(Error::Server { .. })), "{error:?}");
}

#[tokio::test]
async fn the_window_is_the_models_capped_by_memory_and_without_num_ctx_ollama_truncates() {
    let (server, provider) = setup().await;
    assert_eq!(
        provider.context_window("qwen3").await,
        Some(default_window_cap().min(131_072))
    );
    let capped = provider.clone().with_window_cap(8_192);
    assert_eq!(capped.context_window("qwen3").await, Some(8_192));
    server.set_model_context_length(2_048);
    assert_eq!(capped.context_window("qwen3").await, Some(2_048));

    // The scripted server behaves like Ollama: over its window, the start is dropped silently.
    server.enforce_window(ContextLimit {
        tokens: 1_000_000,
        bytes_per_token: 3.0,
    });
    let mut long = request("qwen3");
    long.messages = vec![Message::user("x".repeat(20_000))];
    server.push(Reply::text(["ok"]));
    server.push(Reply::text(["ok"]));
    for window in [None, Some(16_384)] {
        long.context_window = window;
        let stream = provider
            .stream(&long, CancellationToken::new())
            .await
            .unwrap();
        let (_, error) = collect(stream).await;
        assert!(error.is_none(), "{error:?}");
    }
    let truncated: Vec<bool> = server.chat_requests().iter().map(|r| r.truncated).collect();
    assert_eq!(truncated, [true, false]);
}
