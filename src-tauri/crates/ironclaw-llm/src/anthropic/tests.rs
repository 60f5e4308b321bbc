//! The Anthropic client against the scripted server, over real HTTP on loopback.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::test_support::{collect, fast_options, request, text_of};
use crate::testing::{Reply, ScriptedCall, ScriptedServer};
use crate::types::{StopReason, StreamEvent, ToolCall, Usage};
use crate::TurnAccumulator;

async fn setup() -> (ScriptedServer, Anthropic) {
    let (server, base) = ScriptedServer::start().await.unwrap();
    let key = ApiKey::new("sk-ant-test-0123456789abcdef").unwrap();
    let provider = Anthropic::with_base_url(&base, key)
        .unwrap()
        .with_options(fast_options())
        .unwrap();
    (server, provider)
}

#[tokio::test]
async fn text_streams_chunk_by_chunk_and_ends_with_usage() {
    let (server, provider) = setup().await;
    server.push(Reply::text(["Hel", "lo"]));

    let stream = provider
        .stream(&request("claude-x"), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = collect(stream).await;

    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta("Hel".into()),
            StreamEvent::TextDelta("lo".into()),
            StreamEvent::Done {
                stop_reason: StopReason::EndTurn,
                usage: Usage {
                    input_tokens: 10,
                    output_tokens: 2
                },
            },
        ]
    );
}

#[tokio::test]
async fn the_server_receives_the_messages_body_key_and_version() {
    let (server, provider) = setup().await;
    server.push(Reply::text(["ok"]));

    collect(
        provider
            .stream(&request("claude-x"), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await;

    let sent = server.chat_requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].path, "/v1/messages");
    assert_eq!(sent[0].headers["x-api-key"], "sk-ant-test-0123456789abcdef");
    assert_eq!(sent[0].headers["anthropic-version"], "2023-06-01");
    assert!(!sent[0].headers.contains_key("authorization"));
    assert_eq!(
        sent[0].body,
        json!({
            "model": "claude-x",
            "max_tokens": 256,
            "stream": true,
            "system": "You are IronClaw.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Say hello"}]}],
            "tools": [{
                "name": "run_python",
                "description": "Run Python in the sandbox",
                "input_schema": {"type": "object", "properties": {"code": {"type": "string"}}},
            }],
        })
    );
}

#[tokio::test]
async fn tool_use_input_split_over_deltas_is_reassembled_after_the_text() {
    let (server, provider) = setup().await;
    server.push(Reply::ToolCalls {
        text: vec!["Running ".into(), "it.".into()],
        calls: vec![
            ScriptedCall::new(
                "toolu_1",
                "run_python",
                ["{\"code\":", " \"print(", "1)\"}"],
            ),
            ScriptedCall::new("toolu_2", "read_file", ["{\"path\":\"a\"}"]),
        ],
        delay_ms: 0,
    });

    let mut turn = TurnAccumulator::new();
    turn.drain(
        provider
            .stream(&request("claude-x"), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    let turn = turn.finish();

    assert_eq!(turn.text, "Running it.");
    assert_eq!(
        turn.tool_calls,
        vec![
            ToolCall {
                id: "toolu_1".into(),
                name: "run_python".into(),
                arguments: "{\"code\": \"print(1)\"}".into(),
                echo: None,
            },
            ToolCall {
                id: "toolu_2".into(),
                name: "read_file".into(),
                arguments: "{\"path\":\"a\"}".into(),
                echo: None,
            },
        ]
    );
    assert_eq!(turn.stop_reason, StopReason::ToolUse);
    assert_eq!(
        turn.usage,
        Usage {
            input_tokens: 10,
            output_tokens: 6
        }
    );
}

#[tokio::test]
async fn overloaded_529_is_retried_then_succeeds() {
    let (server, provider) = setup().await;
    server.push(Reply::status(
        529,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    ));
    server.push(Reply::text(["second try"]));

    let (events, error) = collect(
        provider
            .stream(&request("claude-x"), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await;

    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "second try");
    assert_eq!(server.chat_requests().len(), 2);
}

#[tokio::test]
async fn an_overloaded_error_event_before_any_content_is_retried() {
    let (server, provider) = setup().await;
    let error_event = r#"event: error
data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    server.push(Reply::malformed(Vec::<String>::new(), error_event));
    server.push(Reply::text(["recovered"]));

    let (events, error) = collect(
        provider
            .stream(&request("claude-x"), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await;

    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "recovered");
    assert_eq!(server.chat_requests().len(), 2);
}

#[tokio::test]
async fn http_errors_map_to_what_a_person_can_act_on() {
    let (server, provider) = setup().await;
    server.push_all([
        Reply::status(401, r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#),
        Reply::status(404, r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}"#),
        Reply::status(400, r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#),
    ]);
    let attempt = |model: &'static str| {
        let provider = &provider;
        async move {
            provider
                .stream(&request(model), CancellationToken::new())
                .await
                .err()
                .unwrap()
        }
    };

    let unauthorized = attempt("claude-x").await;
    let not_found = attempt("claude-nope").await;
    let too_long = attempt("claude-x").await;

    assert!(
        matches!(unauthorized, Error::Unauthorized { .. }),
        "{unauthorized:?}"
    );
    assert!(
        unauthorized.to_string().contains("anthropic"),
        "{unauthorized}"
    );
    assert!(
        matches!(&not_found, Error::ModelNotFound { model, .. } if model == "claude-nope"),
        "{not_found:?}"
    );
    assert!(
        matches!(too_long, Error::ContextTooLong { .. }),
        "{too_long:?}"
    );
    assert_eq!(server.chat_requests().len(), 3);
}

#[tokio::test]
async fn a_mid_stream_disconnect_delivers_the_text_then_a_protocol_error() {
    let (server, provider) = setup().await;
    server.push(Reply::disconnect(["one ", "two ", "three"], 2));

    let (events, error) = collect(
        provider
            .stream(&request("claude-x"), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await;

    assert_eq!(text_of(&events), "one two ");
    assert!(matches!(error, Some(Error::Protocol(_))), "{error:?}");
}

#[tokio::test]
async fn a_malformed_event_is_a_protocol_error() {
    let (server, provider) = setup().await;
    server.push(Reply::malformed(
        ["ok"],
        "event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 0, \"del",
    ));

    let (events, error) = collect(
        provider
            .stream(&request("claude-x"), CancellationToken::new())
            .await
            .unwrap(),
    )
    .await;

    assert_eq!(text_of(&events), "ok");
    assert!(matches!(error, Some(Error::Protocol(_))), "{error:?}");
}

#[tokio::test]
async fn list_models_reads_the_model_ids() {
    let (server, provider) = setup().await;
    server.set_models(["claude-a", "claude-b"]);

    assert_eq!(
        provider.list_models().await.unwrap(),
        vec!["claude-a", "claude-b"]
    );
    assert_eq!(
        server.requests()[0].headers["anthropic-version"],
        "2023-06-01"
    );
}
