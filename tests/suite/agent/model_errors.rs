//! What the model gets wrong, and what the network does: neither crashes the turn silently.

use ironclaw_llm::testing::{Reply, ScriptedCall};
use ironclaw_protocol::{AgentEvent, TurnOutcome};
use ironclaw_store::MessageStatus;
use ironclaw_tests::agent::*;
use pretty_assertions::assert_eq;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_arguments_and_unknown_tools_become_tool_errors_and_the_turn_goes_on() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    let broken = r#"{"language": "python", "code": "print(1)""#;
    agent.push_all([
        Reply::tool_calls(vec![
            ScriptedCall::new(
                "call_bad",
                "run_code",
                [r#"{"language": "py"#, r#"thon", "code": "print(1)""#],
            ),
            ScriptedCall::new("call_unknown", "delete_everything", ["{}"]),
        ]),
        says("Sorry, let me fix that."),
    ]);
    agent.send("go");
    let turn = agent.collect_until_turn_end().await;

    assert!(approval_requests(&turn).is_empty(), "{}", agent.dump());
    assert!(started_code(&turn).is_empty());
    assert!(
        matches!(
            turn.last(),
            Some(AgentEvent::TurnEnded {
                status: TurnOutcome::Done,
                ..
            })
        ),
        "{}",
        agent.dump()
    );
    assert_eq!(
        assistant_texts(&turn).last().map(String::as_str),
        Some("Sorry, let me fix that.")
    );

    let results = agent.tool_results_in(1);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0].contains("the arguments were not valid JSON"),
        "{results:?}"
    );
    assert!(
        results[1].contains("unknown tool `delete_everything`"),
        "{results:?}"
    );
    assert!(unanswered_tool_calls(&agent.requests()[1]).is_empty());

    let calls: Vec<_> = agent
        .history()
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.clone())
        .map(|c| {
            (
                c.tool_call.name,
                c.tool_call.arguments,
                c.tool_call.arguments_parsed,
                c.approvals.len(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("run_code".to_string(), broken.to_string(), false, 0),
            ("delete_everything".to_string(), "{}".to_string(), false, 0),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_mid_answer_fails_the_turn_and_keeps_the_partial_text() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push(Reply::disconnect(
        ["Partial ", "answer ", "never finished"],
        2,
    ));
    agent.send("go");
    let (status, error) = agent.turn_end().await;
    assert_eq!(status, TurnOutcome::Failed, "{}", agent.dump());
    assert!(error.as_deref().is_some_and(|e| !e.is_empty()), "{error:?}");
    assert_eq!(agent.requests().len(), 1, "a cut after text is not retried");

    let history = agent.history();
    let answer = history
        .messages
        .iter()
        .map(|m| &m.message)
        .find(|m| m.role == ironclaw_store::MessageRole::Assistant)
        .expect("the answer");
    assert_eq!(answer.status, MessageStatus::Interrupted);
    assert_eq!(answer.content, "Partial answer ");
    assert_eq!(history.turns[0].status, ironclaw_store::TurnStatus::Failed);

    // The session is still usable.
    agent.push(says("Back again."));
    agent.send("again");
    agent.turn_done().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limited_request_is_retried_after_retry_after_and_the_turn_completes() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push_all([
        Reply::status(
            429,
            r#"{"error": {"type": "rate_limit_error", "message": "slow down"}}"#,
        )
        .with_retry_after("1"),
        says("Made it."),
    ]);
    agent.send("go");
    let turn = agent.collect_until_turn_end().await;
    assert!(
        matches!(
            turn.last(),
            Some(AgentEvent::TurnEnded {
                status: TurnOutcome::Done,
                ..
            })
        ),
        "{}",
        agent.dump()
    );
    assert_eq!(assistant_texts(&turn), ["Made it."]);
    assert!(
        !turn.iter().any(|e| matches!(e, AgentEvent::Error { .. })),
        "{}",
        agent.dump()
    );
    let requests = agent.requests();
    assert_eq!(requests.len(), 2, "one refused, one answered");
    assert_eq!(
        requests[0].body, requests[1].body,
        "the same request, sent again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_error_reaches_an_openai_model_with_one_error_prefix() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push_all([
        Reply::tool_calls(vec![ScriptedCall::new(
            "call_1",
            "delete_everything",
            ["{}"],
        )]),
        says("ok"),
    ]);
    agent.send("go");
    agent.turn_done().await;
    let results = agent.tool_results_in(1);
    assert!(!results[0].starts_with("Error: Error:"), "{results:?}");
}
