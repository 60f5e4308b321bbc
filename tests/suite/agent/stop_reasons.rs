//! Why the model stopped decides what happens next: code in an answer cut off at the output
//! limit never reaches an approval, a cut-off text answer or a refusal is explained, and the
//! model's thinking is shown but never sent back.

use ironclaw_llm::testing::Reply;
use ironclaw_protocol::{AgentEvent, TurnOutcome};
use ironclaw_store::MessageRole;
use ironclaw_tests::agent::*;
use pretty_assertions::assert_eq;

/// An OpenAI-format answer with a `run_code` call, cut off at the output limit
/// (`finish_reason: "length"`). Its arguments are valid JSON, as when a server repairs a cut
/// call: nothing in them shows the code is not what the model meant.
fn cut_off_call(id: &str) -> Reply {
    cut_off_shell_call(id, "rm -rf /workspace/old")
}

/// [`cut_off_call`] with `code` (no quotes or backslashes) as its shell code.
fn cut_off_shell_call(id: &str, code: &str) -> Reply {
    let body = format!(
        concat!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"tool_calls\":[{{\"index\":0,\"id\":\"{id}\",\"type\":\"function\",\"function\":{{\"name\":\"run_code\",\"arguments\":\"\"}}}}]}}}}]}}\n\n",
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"{{\\\"language\\\": \\\"shell\\\", \\\"code\\\": \\\"{code}\\\"}}\"}}}}]}}}}]}}\n\n",
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"length\"}}]}}\n\n",
            "data: [DONE]\n\n"
        ),
        id = id,
        code = code
    );
    Reply::recorded(body, false)
}

fn notes(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Note { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn saved_notes(agent: &Agent) -> Vec<String> {
    agent
        .history()
        .messages
        .iter()
        .filter(|m| m.message.role == MessageRole::SystemNote)
        .map(|m| m.message.content.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_cut_off_at_the_output_limit_is_never_offered_for_approval() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push_all([
        cut_off_call("call_cut"),
        says("I will do it in smaller steps."),
    ]);
    agent.send("clean up the old folder");
    let turn = agent.collect_until_turn_end().await;

    // The cut-off call was read whole (it is in the history with its partial code)...
    let calls: Vec<_> = agent
        .history()
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.clone())
        .map(|c| c.tool_call.arguments)
        .collect();
    assert_eq!(calls.len(), 1, "{}", agent.dump());
    assert!(calls[0].contains("rm -rf /workspace/old"), "{calls:?}");
    // ...and yet nothing was offered or run.
    assert!(approval_requests(&turn).is_empty(), "{}", agent.dump());
    assert!(started_code(&turn).is_empty());
    // The model was told why, and went on.
    let results = agent.tool_results_in(1);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].contains("output token limit"), "{results:?}");
    assert!(unanswered_tool_calls(&agent.requests()[1]).is_empty());
    assert!(matches!(
        turn.last(),
        Some(AgentEvent::TurnEnded {
            status: TurnOutcome::Done,
            ..
        })
    ));
    let told = notes(&turn);
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].contains("nothing ran"), "{told:?}");
    assert_eq!(saved_notes(&agent), told);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_off_twice_the_turn_stops_and_says_what_to_do() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push_all([cut_off_call("call_a"), cut_off_call("call_b")]);
    agent.send("write a long script");
    let turn = agent.collect_until_turn_end().await;

    assert_eq!(agent.requests().len(), 2, "{}", agent.dump());
    assert!(approval_requests(&turn).is_empty());
    match turn.last() {
        Some(AgentEvent::TurnEnded {
            status: TurnOutcome::Failed,
            error: Some(error),
            ..
        }) => assert!(error.contains("smaller steps"), "{error}"),
        other => panic!("{other:?}\n{}", agent.dump()),
    }
    assert_eq!(saved_notes(&agent).len(), 2, "{:?}", saved_notes(&agent));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_off_answer_a_silent_refusal_and_an_empty_answer_are_each_explained() {
    let mut agent = Agent::start(Wire::Anthropic).await;
    let message_start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n";
    let text_block = |text: &str| {
        format!(
            "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"text\",\"text\":{text:?}}}}}\n\nevent: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":0}}\n\n"
        )
    };
    let end = |stop: &str| {
        format!(
            "event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"{stop}\"}},\"usage\":{{\"output_tokens\":9}}}}\n\nevent: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
        )
    };
    agent.push_all([
        Reply::recorded(
            format!(
                "{message_start}{}{}",
                text_block("The first half"),
                end("max_tokens")
            ),
            false,
        ),
        Reply::recorded(format!("{message_start}{}", end("refusal")), false),
        Reply::recorded(format!("{message_start}{}", end("end_turn")), false),
    ]);
    let mut told = Vec::new();
    for ask in [
        "explain everything",
        "do the forbidden thing",
        "say nothing",
    ] {
        agent.send(ask);
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
        told.extend(notes(&turn));
    }
    assert_eq!(told.len(), 3, "{told:?}");
    assert!(
        told[0].contains("cut off") && told[0].contains("continue"),
        "{told:?}"
    );
    assert!(told[1].contains("declined"), "{told:?}");
    assert!(told[2].contains("empty answer"), "{told:?}");
    assert_eq!(saved_notes(&agent), told);
    // Notes are the person's; the model never sees them.
    let last = agent.requests().last().cloned().map(|r| r.body.to_string());
    assert!(!last.unwrap_or_default().contains("declined"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_is_streamed_to_the_person_and_never_sent_back_to_the_model() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push_all([
        Reply::recorded(
            concat!(
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"PRIVATE-THOUGHT\"}}]}\n\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Four.\"},\"finish_reason\":\"stop\"}]}\n\n",
                "data: [DONE]\n\n"
            ),
            false,
        ),
        says("Five."),
    ]);
    agent.send("2+2?");
    let turn = agent.collect_until_turn_end().await;
    let thought: String = turn
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ReasoningDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thought, "PRIVATE-THOUGHT");
    assert_eq!(assistant_texts(&turn), ["Four."]);
    agent.send("and 2+3?");
    agent.turn_done().await;
    let second = agent.requests()[1].body.to_string();
    assert!(second.contains("Four."), "{second}");
    assert!(!second.contains("PRIVATE-THOUGHT"), "{second}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ironclaw_chat_never_runs_code_cut_off_at_the_output_limit_even_when_nothing_asks() {
    let env = ironclaw_tests::TestEnv::new().await;
    let (server, base) = ironclaw_llm::testing::ScriptedServer::start()
        .await
        .expect("scripted server");
    // Under never-ask a complete call would run at once: the control proves the path is open.
    server.push_all([
        asks_to_run("call_ok", "shell", "touch /workspace/probe-control"),
        says("Done."),
        cut_off_shell_call("call_cut", "touch /workspace/probe-cut"),
        says("I will do it in smaller steps."),
    ]);
    let (stdout, stderr) = chat_cli(
        &env,
        &[
            "--provider",
            "openai",
            "--base-url",
            &format!("{base}/v1"),
            "--model",
            MODEL,
            "--policy",
            "never-ask",
            "-m",
            "make the control file",
            "-m",
            "clean up the old folder",
        ],
    )
    .await;
    assert_eq!(
        find_files_named(env.root(), "probe-control").len(),
        1,
        "the control run did not happen: {stderr}"
    );
    assert!(find_files_named(env.root(), "probe-cut").is_empty());
    assert!(stderr.contains("nothing ran"), "{stderr}");
    assert!(
        stdout.contains("I will do it in smaller steps."),
        "{stdout}"
    );
    let results = tool_results(&server.chat_requests()[3]);
    assert!(
        results.iter().any(|r| r.contains("output token limit")),
        "{results:?}"
    );
    assert_eq!(server.chat_requests().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ironclaw_chat_shows_thinking_apart_and_a_cut_connection_fails_one_turn_not_the_chat() {
    let env = ironclaw_tests::TestEnv::new().await;
    let (server, base) = ironclaw_llm::testing::ScriptedServer::start()
        .await
        .expect("scripted server");
    server.push_all([
        Reply::recorded(
            concat!(
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"PRIVATE-THOUGHT\"}}]}\n\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Four.\"},\"finish_reason\":\"stop\"}]}\n\n",
                "data: [DONE]\n\n"
            ),
            false,
        ),
        Reply::disconnect(["Once upon", " a time"], 2),
        says("Yes, still here."),
    ]);
    let base = format!("{base}/v1");
    let (status, stdout, stderr) = chat_cli_status(
        &env,
        &[
            "--provider",
            "openai",
            "--base-url",
            &base,
            "--model",
            MODEL,
            "--deny-all",
            "-m",
            "2+2?",
            "-m",
            "tell me a story",
            "-m",
            "still there?",
        ],
    )
    .await;
    // Thinking goes to stderr, apart from the answer on stdout.
    assert!(stderr.contains("PRIVATE-THOUGHT"), "{stderr}");
    assert!(!stdout.contains("PRIVATE-THOUGHT"), "{stdout}");
    assert!(stdout.contains("Four."), "{stdout}");
    // The cut turn keeps what arrived, says what happened, and the next message still works.
    assert!(stdout.contains("Once upon a time"), "{stdout}");
    assert!(stderr.contains("closed mid-answer"), "{stderr}");
    assert!(stdout.contains("Yes, still here."), "{stdout}");
    // A turn failed, and the exit status says so.
    assert!(!status.success());
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    assert!(!requests[2].body.to_string().contains("PRIVATE-THOUGHT"));
}
