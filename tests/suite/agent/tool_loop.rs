//! The model ↔ tool loop: several runs in one turn, results fed back, state kept between runs.

use ironclaw_protocol::AgentEvent;
use ironclaw_tests::agent::*;
use pretty_assertions::assert_eq;

async fn model_runs_code_twice_then_answers(wire: Wire) {
    let mut agent = Agent::start(wire).await;
    agent.push_all([
        asks_to_run("call_1", "python", "answer = 41"),
        asks_to_run("call_2", "python", "print(answer + 1)"),
        says("The answer is 42."),
    ]);
    agent.send("What is 41 + 1? Use the sandbox.");

    let first = agent.approval_request().await;
    assert_eq!(
        (first.language.as_str(), first.code.as_str()),
        ("python", "answer = 41")
    );
    agent.approve(&first);
    let second = agent.approval_request().await;
    assert_eq!(second.code, "print(answer + 1)");
    agent.approve(&second);
    let rest = agent.collect_until_turn_end().await;
    let all = agent.seen.clone();
    assert!(
        matches!(
            rest.last(),
            Some(AgentEvent::TurnEnded {
                status: ironclaw_protocol::TurnOutcome::Done,
                ..
            })
        ),
        "{}",
        agent.dump()
    );

    assert_eq!(started_code(&all), ["answer = 41", "print(answer + 1)"]);
    // The variable from the first run was still there in the second.
    assert_eq!(stdout_of(&all), "42\n");
    assert_eq!(
        assistant_texts(&all).last().map(String::as_str),
        Some("The answer is 42.")
    );

    let requests = agent.requests();
    assert_eq!(requests.len(), 3, "three model calls in one turn");
    assert_eq!(requests[0].body["model"], MODEL);
    assert!(tool_results(&requests[0]).is_empty());
    let after_first = tool_results(&requests[1]);
    assert_eq!(after_first.len(), 1, "{after_first:?}");
    assert!(
        after_first[0].starts_with("The user approved this run."),
        "{after_first:?}"
    );
    assert!(after_first[0].contains("Exit code: 0"), "{after_first:?}");
    let after_second = tool_results(&requests[2]);
    assert_eq!(
        after_second.len(),
        2,
        "both results, in order: {after_second:?}"
    );
    assert_eq!(after_second[0], after_first[0]);
    assert!(after_second[1].contains("stdout:\n42"), "{after_second:?}");
    assert!(unanswered_tool_calls(&requests[2]).is_empty());

    let history = agent.history();
    let runs: Vec<_> = history
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .flat_map(|c| &c.approvals)
        .filter_map(|a| a.execution.as_ref())
        .collect();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1].stdout.head, "42\n");
    assert!(runs.iter().all(|r| r.exit_code == Some(0)));
    assert_eq!(history.turns.len(), 1);
    assert_eq!(history.turns[0].status, ironclaw_store::TurnStatus::Done);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_model_runs_code_twice_with_state_kept_then_answers() {
    model_runs_code_twice_then_answers(Wire::OpenAi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_model_runs_code_twice_with_state_kept_then_answers() {
    model_runs_code_twice_then_answers(Wire::Anthropic).await;
}
