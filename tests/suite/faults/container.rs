//! The session's container killed (`docker kill`) while approved code runs in it.

use ironclaw_protocol::{AgentEvent, OutputStream, TurnOutcome};
use ironclaw_tests::agent::*;
use pretty_assertions::assert_eq;

/// Fault: `docker kill` of the session's container mid-execution.
/// Expected: the run ends with an error that says the container went away and the workspace is
/// intact; the model is told so and the turn still finishes; the history records the run as
/// failed, not as done; the next run recreates the container and finds the workspace files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn container_killed_mid_execution_is_reported_and_the_next_run_recreates_it() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push_all([
        asks_to_run(
            "call_1",
            "python",
            "open('/workspace/kept.txt', 'w').write('kept')\nimport time\nprint('started', flush=True)\ntime.sleep(600)",
        ),
        says("The sandbox went away."),
        asks_to_run("call_2", "python", "print(open('/workspace/kept.txt').read())"),
        says("It is back."),
    ]);
    agent.send("run it");
    let req = agent.approval_request().await;
    agent.approve(&req);
    agent
        .next_event_matching("the run's first output", |e| {
            matches!(e, AgentEvent::ExecutionOutput { stream: OutputStream::Stdout, text, .. } if text.contains("started"))
        })
        .await;
    agent.kill_container().await;
    agent.turn_done().await;

    let results = agent.tool_results_in(1);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].contains("went away") && results[0].contains("workspace is intact"),
        "the model must be told what happened: {results:?}"
    );
    let history = agent.history();
    let run = history
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .flat_map(|t| &t.approvals)
        .find_map(|a| a.execution.clone())
        .expect("the run is in the history");
    assert!(
        run.exit_code != Some(0) || run.interrupted,
        "a killed run is not recorded as a success: {run:#?}"
    );

    agent.send("again");
    let req = agent.approval_request().await;
    agent.approve(&req);
    let turn = agent.collect_until_turn_end().await;
    assert_eq!(stdout_of(&turn), "kept\n", "{}", agent.dump());
    assert!(matches!(
        turn.last(),
        Some(AgentEvent::TurnEnded {
            status: TurnOutcome::Done,
            ..
        })
    ));
    let new_id = agent
        .env
        .container_id(&agent.conversation.to_string())
        .await
        .expect("a container again");
    let state = agent
        .env
        .docker()
        .inspect_container(&new_id, None)
        .await
        .expect("inspect")
        .state
        .and_then(|s| s.running);
    assert_eq!(state, Some(true));
}
