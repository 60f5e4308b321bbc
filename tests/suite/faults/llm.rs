//! The model service answering garbage or hanging up: every kind fails the one turn with a
//! message that says what came back, keeps what was already committed, and leaves the session
//! usable. (A cut after some text, malformed tool arguments and rate limits are in
//! `agent::model_errors`.)

use ironclaw_llm::testing::Reply;
use ironclaw_protocol::TurnOutcome;
use ironclaw_store::{MessageRole, MessageStatus};
use ironclaw_tests::agent::*;
use pretty_assertions::assert_eq;

/// Sends `prompt` with `garbage` as the model's answer; returns the turn's error.
async fn fails_with(agent: &mut Agent, prompt: &str, garbage: Vec<Reply>) -> String {
    agent.push_all(garbage);
    agent.send(prompt);
    let (status, error) = agent.turn_end().await;
    assert_eq!(status, TurnOutcome::Failed, "{}", agent.dump());
    let error = error.unwrap_or_default();
    assert!(!error.trim().is_empty(), "a failed turn says why");
    error
}

/// Faults: an HTML page with status 200, binary noise with invalid UTF-8 on an event stream,
/// an event stream that ends before any event, JSON of the wrong shape, and a hang-up right
/// after the stream opened. Expected: each fails its turn with an error
/// naming what was wrong, no garbage is stored as the assistant's text, every user message is
/// kept, and a good answer afterwards completes normally.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_from_the_model_fails_the_turn_clearly_and_loses_nothing() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push(says("first answer"));
    agent.send("hello");
    agent.turn_done().await;

    let cases: Vec<(&str, Vec<Reply>)> = vec![
        (
            "html",
            vec![Reply::raw(
                "text/html",
                "<html><body><h1>502 Bad Gateway</h1></body></html>",
            )],
        ),
        (
            "noise",
            vec![Reply::raw(
                "text/event-stream",
                b"data: \xff\xfe\x00\x01garbage\n\ndata: {\"choices\": [{\"delta\": \xc3\x28}]}\n\n".to_vec(),
            )],
        ),
        ("empty", vec![Reply::raw("text/event-stream", Vec::new())]),
        (
            "wrong-shape",
            vec![Reply::raw(
                "text/event-stream",
                "data: {\"choices\": \"not a list\"}\n\ndata: [1, 2, 3]\n\ndata: [DONE]\n\n",
            )],
        ),
        (
            "hang-up",
            vec![Reply::disconnect(Vec::<String>::new(), 0)],
        ),
    ];
    let mut errors = Vec::new();
    for (prompt, garbage) in cases {
        let error = fails_with(&mut agent, prompt, garbage).await;
        errors.push((prompt, error));
    }
    for (prompt, error) in &errors {
        eprintln!("{prompt}: {error}");
        assert!(
            !error.contains("<html>") && !error.contains('\u{fffd}'),
            "{prompt}: the error quotes garbage verbatim: {error}"
        );
    }
    let error_of = |name: &str| {
        errors
            .iter()
            .find(|(p, _)| *p == name)
            .map(|(_, e)| e.as_str())
            .unwrap_or_default()
    };
    // A web page is named as such, with the likely cause (this read as "the connection closed
    // mid-answer" before, sending people after a network fault instead of a wrong URL).
    assert!(
        error_of("html").contains("web page") && error_of("html").contains("base URL"),
        "{}",
        error_of("html")
    );
    assert!(error_of("noise").contains("could not read"));
    assert!(error_of("wrong-shape").contains("could not read"));
    assert!(error_of("empty").contains("ended before the answer was complete"));
    assert!(error_of("hang-up").contains("closed mid-answer"));
    // Once the stream has started, a cut is not retried (that could repeat text or a call).
    assert_eq!(agent.server.remaining_replies(), 0);

    agent.push(says("all good"));
    agent.send("still there?");
    agent.turn_done().await;

    let history = agent.history();
    let users: Vec<&str> = history
        .messages
        .iter()
        .map(|m| &m.message)
        .filter(|m| m.role == MessageRole::User)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        users,
        [
            "hello",
            "html",
            "noise",
            "empty",
            "wrong-shape",
            "hang-up",
            "still there?"
        ]
    );
    let answers: Vec<(&str, MessageStatus)> = history
        .messages
        .iter()
        .map(|m| &m.message)
        .filter(|m| m.role == MessageRole::Assistant && !m.content.is_empty())
        .map(|m| (m.content.as_str(), m.status))
        .collect();
    assert_eq!(
        answers,
        [
            ("first answer", MessageStatus::Complete),
            ("all good", MessageStatus::Complete)
        ]
    );
}
