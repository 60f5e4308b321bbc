//! The OpenAI-compatible client against the scripted server, over real HTTP on loopback.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::test_support::{collect, fast_options, request};
use crate::testing::{Reply, ScriptedCall, ScriptedServer};
use crate::types::{StopReason, StreamEvent, ToolCall, Usage};
use crate::TurnAccumulator;

async fn setup() -> (ScriptedServer, OpenAiCompatible) {
    let (server, base) = ScriptedServer::start().await.unwrap();
    let key = ApiKey::new("sk-test-0123456789abcdef").unwrap();
    let provider = OpenAiCompatible::new(&format!("{base}/v1"), Some(key))
        .unwrap()
        .with_id("openai")
        .with_header("HTTP-Referer", "https://ironclaw.invalid")
        .unwrap()
        .with_options(fast_options())
        .unwrap();
    (server, provider)
}

#[tokio::test]
async fn text_streams_chunk_by_chunk_and_ends_with_usage() {
    let (server, provider) = setup().await;
    server.push(Reply::text(["Hel", "lo", " world"]));

    let stream = provider
        .stream(&request("m1"), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = collect(stream).await;

    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta("Hel".into()),
            StreamEvent::TextDelta("lo".into()),
            StreamEvent::TextDelta(" world".into()),
            StreamEvent::Done {
                stop_reason: StopReason::EndTurn,
                usage: Usage {
                    input_tokens: 10,
                    output_tokens: 3
                },
            },
        ]
    );
}

#[tokio::test]
async fn the_server_receives_the_chat_completions_body_and_headers() {
    let (server, provider) = setup().await;
    server.push(Reply::text(["ok"]));
    let req = request("m1");

    let stream = provider
        .stream(&req, CancellationToken::new())
        .await
        .unwrap();
    collect(stream).await;

    let sent = server.chat_requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].path, "/v1/chat/completions");
    assert_eq!(
        sent[0].headers["authorization"],
        "Bearer sk-test-0123456789abcdef"
    );
    assert_eq!(sent[0].headers["http-referer"], "https://ironclaw.invalid");
    assert_eq!(
        sent[0].body,
        json!({
            "model": "m1",
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 256,
            "messages": [
                {"role": "system", "content": "You are IronClaw."},
                {"role": "user", "content": "Say hello"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "run_python",
                "description": "Run Python in the sandbox",
                "parameters": {"type": "object", "properties": {"code": {"type": "string"}}},
            }}],
        })
    );
}

#[tokio::test]
async fn tool_call_arguments_split_over_deltas_are_reassembled() {
    let (server, provider) = setup().await;
    server.push(Reply::ToolCalls {
        text: vec!["Let me run that.".into()],
        calls: vec![ScriptedCall::new(
            "call_1",
            "run_python",
            ["{\"co", "de\": \"print(", "1)\"}"],
        )],
        delay_ms: 0,
    });

    let mut turn = TurnAccumulator::new();
    let stream = provider
        .stream(&request("m1"), CancellationToken::new())
        .await
        .unwrap();
    turn.drain(stream).await.unwrap();
    let turn = turn.finish();

    assert_eq!(turn.text, "Let me run that.");
    assert_eq!(
        turn.tool_calls,
        vec![ToolCall {
            id: "call_1".into(),
            name: "run_python".into(),
            arguments: "{\"code\": \"print(1)\"}".into(),
            echo: None,
        }]
    );
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
}

#[tokio::test]
async fn several_tool_calls_keep_their_order_ids_and_arguments() {
    let (server, provider) = setup().await;
    server.push(Reply::tool_calls(vec![
        ScriptedCall::new("call_a", "read_file", ["{\"path\":", "\"a.txt\"}"]),
        ScriptedCall::new("call_b", "run_python", ["{\"code\":", "\"2+2\"}"]),
    ]));

    let mut turn = TurnAccumulator::new();
    turn.drain(
        provider
            .stream(&request("m1"), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await
    .unwrap();

    let calls: Vec<_> = turn
        .finish()
        .tool_calls
        .into_iter()
        .map(|c| (c.id, c.name, c.arguments))
        .collect();
    assert_eq!(
        calls,
        vec![
            (
                "call_a".into(),
                "read_file".into(),
                "{\"path\":\"a.txt\"}".into()
            ),
            (
                "call_b".into(),
                "run_python".into(),
                "{\"code\":\"2+2\"}".into()
            ),
        ]
    );
}

#[tokio::test]
async fn a_rejected_key_is_unauthorized_and_not_retried() {
    let (server, provider) = setup().await;
    server.push(Reply::status(401, r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#));
    server.push(Reply::text(["never sent"]));

    let err = provider
        .stream(&request("m1"), CancellationToken::new())
        .await
        .err()
        .unwrap();

    assert!(matches!(err, Error::Unauthorized { .. }), "{err:?}");
    assert!(err.to_string().contains("check it in Settings"), "{err}");
    assert_eq!(server.remaining_replies(), 1);
}

#[tokio::test]
async fn an_unknown_model_is_model_not_found() {
    let (server, provider) = setup().await;
    server.push(Reply::status(
        404,
        r#"{"error":"model \"nope\" not found, try pulling it first"}"#,
    ));

    let err = provider
        .stream(&request("nope"), CancellationToken::new())
        .await
        .err()
        .unwrap();

    assert!(
        matches!(&err, Error::ModelNotFound { model, .. } if model == "nope"),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_context_length_error_is_context_too_long() {
    let (server, provider) = setup().await;
    server.push(Reply::status(
        400,
        r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
    ));

    let err = provider
        .stream(&request("m1"), CancellationToken::new())
        .await
        .err()
        .unwrap();

    assert!(matches!(err, Error::ContextTooLong { .. }), "{err:?}");
}

#[tokio::test]
async fn a_malformed_chunk_is_a_protocol_error_after_the_text_before_it() {
    let (server, provider) = setup().await;
    server.push(Reply::malformed(
        ["fine so far"],
        "data: {\"choices\": [{\"delta\": ",
    ));

    let stream = provider
        .stream(&request("m1"), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = collect(stream).await;

    assert_eq!(events, vec![StreamEvent::TextDelta("fine so far".into())]);
    assert!(matches!(error, Some(Error::Protocol(_))), "{error:?}");
}

#[tokio::test]
async fn list_models_reads_the_model_ids() {
    let (server, provider) = setup().await;
    server.set_models(["llama3.2:3b", "qwen3:8b"]);

    assert_eq!(
        provider.list_models().await.unwrap(),
        vec!["llama3.2:3b", "qwen3:8b"]
    );
    assert_eq!(server.requests()[0].path, "/v1/models");
}

#[tokio::test]
async fn list_models_on_a_wrong_base_url_says_to_check_it() {
    let (_server, base) = ScriptedServer::start().await.unwrap();
    let provider = OpenAiCompatible::new(&format!("{base}/wrong"), None).unwrap();

    let err = provider.list_models().await.err().unwrap();

    assert!(matches!(err, Error::Config { .. }), "{err:?}");
}
