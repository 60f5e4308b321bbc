//! Cancelling a turn wherever it is: generating, waiting for a decision, or running code.

use std::time::Duration;

use ironclaw_llm::testing::Reply;
use ironclaw_protocol::{AgentEvent, Decision, TurnOutcome};
use ironclaw_store::{ApprovalStatus, MessageRole, MessageStatus};
use ironclaw_tests::agent::*;
use pretty_assertions::assert_eq;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_generation_ends_the_turn_and_keeps_the_text_as_interrupted() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    let chunks: Vec<String> = (0..40).map(|i| format!("w{i:02} ")).collect();
    let full: String = chunks.concat();
    agent.push(Reply::text(chunks).with_delay(Duration::from_millis(250)));
    agent.send("tell me a long story");
    agent
        .next_event_matching(
            "text",
            |e| matches!(e, AgentEvent::TextDelta { text, .. } if !text.is_empty()),
        )
        .await;
    agent.cancel();
    let (status, error) = agent.turn_end().await;
    assert_eq!(
        (status, error),
        (TurnOutcome::Cancelled, None),
        "{}",
        agent.dump()
    );
    // The client hung up on the stream instead of reading it to the end.
    tokio::time::timeout(EVENT_GUARD, agent.server.wait_for_hangups(1))
        .await
        .expect("the stream was dropped");

    let history = agent.history();
    assert_eq!(
        history.turns[0].status,
        ironclaw_store::TurnStatus::Cancelled
    );
    let answer = history
        .messages
        .iter()
        .map(|m| &m.message)
        .find(|m| m.role == MessageRole::Assistant)
        .expect("the answer");
    assert_eq!(answer.status, MessageStatus::Interrupted);
    assert!(
        !answer.content.is_empty() && answer.content.len() < full.len(),
        "{answer:?}"
    );
    assert!(full.starts_with(&answer.content), "{answer:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_while_waiting_for_approval_expires_the_approval() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push(asks_to_run(
        "call_1",
        "python",
        "open('/workspace/late.txt', 'w').write('x')",
    ));
    agent.send("go");
    let req = agent.approval_request().await;
    agent.cancel();
    let (status, _) = agent.turn_end().await;
    assert_eq!(status, TurnOutcome::Cancelled, "{}", agent.dump());

    // A decision arriving after the cancel finds nothing to approve.
    agent.decide(&req, Decision::ApproveOnce, true);
    let (id, _, still_pending) = agent.decision_rejected().await;
    assert_eq!((id, still_pending), (req.approval_id, false));
    assert!(started_code(&agent.seen).is_empty(), "{}", agent.dump());
    let approval = agent
        .deps
        .history
        .get_approval(req.approval_id)
        .expect("approval");
    assert_ne!(approval.status, ApprovalStatus::Pending);
    assert!(!agent.has_container().await);
    assert!(find_files_named(agent.env.root(), "late.txt").is_empty());
    assert_eq!(
        agent.history().turns[0].status,
        ironclaw_store::TurnStatus::Cancelled
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_execution_stops_the_run_and_the_interpreter_lives_on() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    let slow = "import time\nmarker = 'alive'\nprint('sleeping', flush=True)\ntime.sleep(30)\nprint('woke')";
    agent.push(asks_to_run("call_1", "python", slow));
    agent.send("sleep");
    let req = agent.approval_request().await;
    agent.approve(&req);
    agent
        .next_event_matching(
            "the run's first output",
            |e| matches!(e, AgentEvent::ExecutionOutput { text, .. } if text.contains("sleeping")),
        )
        .await;
    agent.cancel();
    let ended = agent
        .next_event_matching("ExecutionEnded", |e| {
            matches!(e, AgentEvent::ExecutionEnded { .. })
        })
        .await;
    assert!(
        matches!(
            ended,
            AgentEvent::ExecutionEnded {
                cancelled: true,
                ..
            }
        ),
        "{ended:?}"
    );
    let (status, _) = agent.turn_end().await;
    assert_eq!(status, TurnOutcome::Cancelled, "{}", agent.dump());
    assert!(!stdout_of(&agent.seen).contains("woke"));
    let run = agent
        .history()
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.clone())
        .find_map(|c| c.approvals[0].execution.clone())
        .expect("the run is recorded");
    assert!(run.cancelled, "{run:?}");

    // A later turn runs code in the same interpreter, which kept what ran before the cancel.
    agent.push_all([
        asks_to_run("call_2", "python", "print(marker)"),
        says("still here"),
    ]);
    agent.send("are you there?");
    let req = agent.approval_request().await;
    agent.approve(&req);
    agent.turn_done().await;
    assert!(
        stdout_of(&agent.seen).ends_with("alive\n"),
        "{}",
        agent.dump()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_cancelled_mid_tool_call_leaves_no_unanswered_tool_call_for_the_next_request() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push_all([
        asks_to_run("call_1", "python", "print('never')"),
        says("next turn"),
    ]);
    agent.send("go");
    agent.approval_request().await;
    agent.cancel();
    let (status, _) = agent.turn_end().await;
    assert_eq!(status, TurnOutcome::Cancelled);
    agent.send("try something else");
    agent.turn_done().await;
    let requests = agent.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        unanswered_tool_calls(&requests[1]),
        Vec::<String>::new(),
        "{:#}",
        requests[1].body["messages"]
    );
}
