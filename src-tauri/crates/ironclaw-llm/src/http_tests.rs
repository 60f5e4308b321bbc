//! Transport behaviour (retries, timeouts, cancellation, broken streams), exercised through the
//! OpenAI-compatible client against the scripted server on loopback.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use futures_util::StreamExt;
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::test_support::{closed_port_url, collect, fast_options, request, text_of, HANG_GUARD};
use crate::testing::{Reply, ScriptedServer};
use crate::{OpenAiCompatible, Provider};

async fn setup() -> (ScriptedServer, OpenAiCompatible) {
    setup_with(fast_options()).await
}

async fn setup_with(options: HttpOptions) -> (ScriptedServer, OpenAiCompatible) {
    let (server, base) = ScriptedServer::start().await.unwrap();
    let provider = OpenAiCompatible::new(&format!("{base}/v1"), None)
        .unwrap()
        .with_id("local")
        .with_options(options)
        .unwrap();
    (server, provider)
}

#[tokio::test]
async fn rate_limit_waits_at_least_retry_after_then_succeeds() {
    let (server, provider) = setup().await;
    server.push(
        Reply::status(
            429,
            r#"{"error":{"message":"slow down","type":"rate_limit_exceeded"}}"#,
        )
        .with_retry_after("1"),
    );
    server.push(Reply::text(["after the wait"]));

    let stream = provider
        .stream(&request("m1"), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = collect(stream).await;

    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "after the wait");
    let sent = server.chat_requests();
    assert_eq!(sent.len(), 2);
    let waited = sent[1].received_at.duration_since(sent[0].received_at);
    assert!(
        waited >= Duration::from_secs(1),
        "retried after only {waited:?}"
    );
}

#[tokio::test]
async fn a_retry_after_beyond_the_wait_budget_is_reported_at_once() {
    let (server, provider) = setup().await;
    server.push(Reply::status(429, "{}").with_retry_after("3600"));
    server.push(Reply::text(["never sent"]));

    let err = provider
        .stream(&request("m1"), CancellationToken::new())
        .await
        .err()
        .unwrap();

    assert!(
        matches!(err, Error::RateLimited { retry_after: Some(wait), .. } if wait == Duration::from_secs(3600)),
        "{err:?}"
    );
    assert_eq!(server.chat_requests().len(), 1);
}

#[tokio::test]
async fn server_errors_are_retried_until_the_attempts_run_out() {
    let (server, provider) = setup().await;
    server.push_all((0..4).map(|_| Reply::status(502, "bad gateway")));
    server.push(Reply::text(["too late"]));

    let err = provider
        .stream(&request("m1"), CancellationToken::new())
        .await
        .err()
        .unwrap();

    assert!(
        matches!(
            err,
            Error::Server {
                status: Some(502),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(server.chat_requests().len(), 4);
}

#[tokio::test]
async fn a_mid_stream_disconnect_delivers_the_text_then_a_protocol_error() {
    let (server, provider) = setup().await;
    server.push(Reply::disconnect(["The answer ", "is ", "42"], 2));

    let stream = provider
        .stream(&request("m1"), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = collect(stream).await;

    assert_eq!(text_of(&events), "The answer is ");
    match error {
        Some(err @ Error::Protocol(_)) => {
            assert!(err.to_string().contains("closed mid-answer"), "{err}")
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[tokio::test]
async fn cancelling_mid_stream_returns_cancelled_and_hangs_up() {
    let (server, provider) = setup().await;
    // Without cancellation the second chunk would come an hour later.
    server.push(Reply::text(["first", "second"]).with_delay(Duration::from_secs(3600)));
    let cancel = CancellationToken::new();

    let mut stream = provider
        .stream(&request("m1"), cancel.clone())
        .await
        .unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first, StreamEvent::TextDelta("first".into()));
    cancel.cancel();

    let next = tokio::time::timeout(HANG_GUARD, stream.next())
        .await
        .unwrap();
    assert!(matches!(next, Some(Err(Error::Cancelled))), "{next:?}");
    assert!(stream.next().await.is_none());
    drop(stream);
    tokio::time::timeout(HANG_GUARD, server.wait_for_hangups(1))
        .await
        .unwrap();
}

#[tokio::test]
async fn silence_longer_than_the_idle_timeout_is_a_timeout() {
    let (server, provider) = setup_with(HttpOptions {
        idle_timeout: Duration::from_millis(200),
        ..fast_options()
    })
    .await;
    server.push(Reply::text(["first", "second"]).with_delay(Duration::from_secs(3600)));

    let stream = provider
        .stream(&request("m1"), CancellationToken::new())
        .await
        .unwrap();
    let (events, error) = collect(stream).await;

    assert_eq!(text_of(&events), "first");
    assert!(matches!(error, Some(Error::Timeout { .. })), "{error:?}");
}

#[tokio::test]
async fn a_server_that_is_not_running_is_unreachable_with_a_hint() {
    let base = closed_port_url().await;
    let provider = OpenAiCompatible::new(&format!("{base}/v1"), None)
        .unwrap()
        .with_options(fast_options())
        .unwrap();

    let err = provider
        .stream(&request("m1"), CancellationToken::new())
        .await
        .err()
        .unwrap();

    assert!(matches!(err, Error::Unreachable { .. }), "{err:?}");
    assert!(err.to_string().contains("`ollama serve`"), "{err}");
}

#[tokio::test]
async fn cancelling_during_a_retry_wait_returns_cancelled() {
    let (server, provider) = setup().await;
    server.push(Reply::status(429, "{}").with_retry_after("5"));
    server.push(Reply::text(["not reached"]));
    let cancel = CancellationToken::new();
    let canceller = {
        let cancel = cancel.clone();
        let server_sees_request = async move {
            while server.chat_requests().is_empty() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            cancel.cancel();
            server
        };
        tokio::spawn(server_sees_request)
    };

    let result = tokio::time::timeout(HANG_GUARD, provider.stream(&request("m1"), cancel))
        .await
        .unwrap();

    assert!(
        matches!(result, Err(Error::Cancelled)),
        "{:?}",
        result.err()
    );
    let server = canceller.await.unwrap();
    assert_eq!(server.chat_requests().len(), 1);
}

#[tokio::test]
async fn a_json_answer_instead_of_a_stream_is_a_protocol_error() {
    let (server, provider) = setup().await;
    server.push(Reply::status(
        200,
        r#"{"id":"x","choices":[{"message":{"content":"hi"}}]}"#,
    ));

    let err = provider
        .stream(&request("m1"), CancellationToken::new())
        .await
        .err()
        .unwrap();

    assert!(
        matches!(&err, Error::Protocol(message) if message.contains("streaming")),
        "{err:?}"
    );
}
