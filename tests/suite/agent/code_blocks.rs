//! A model without tool calling answers with fenced code: each ```python / ```bash block
//! becomes a run request through the same approval gate (same hash of the exact code), its
//! result goes back as IronClaw's message, and what such a model is sent has no tools and no
//! tool messages. The mode is found from the first answer, said once, and kept.

use ironclaw_llm::testing::Reply;
use ironclaw_protocol::{AgentEvent, ApprovalPolicy, CodeHash, Language, TurnOutcome};
use ironclaw_tests::agent::*;
use ironclaw_tests::TestEnv;
use pretty_assertions::assert_eq;

fn notes(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Note { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_blocks_are_run_requests_through_the_same_gate_and_results_come_back_as_text() {
    let env = TestEnv::new().await;
    let mut agent = Agent::start_with(env, Wire::Ollama, ApprovalPolicy::AskAlways).await;
    agent.push_all([
        Reply::text([
            "Let me compute it.\n```python\nprint(6 * 7)\n```\nAn example, not to run:\n```text\nrm -rf /\n```",
        ]),
        says("It is 42."),
    ]);
    agent.send("what is 6 times 7?");
    let request = agent.approval_request().await;
    // Exactly the block's code, bound to its hash like any run.
    assert_eq!(request.language, Language::Python);
    assert_eq!(request.code, "print(6 * 7)");
    assert_eq!(
        request.code_hash,
        CodeHash::of(agent.conversation, Language::Python, "print(6 * 7)")
    );
    agent.approve(&request);
    let events = agent.collect_until_turn_end().await;
    assert!(
        matches!(
            events.last(),
            Some(AgentEvent::TurnEnded {
                status: TurnOutcome::Done,
                ..
            })
        ),
        "{}",
        agent.dump()
    );
    assert_eq!(stdout_of(&agent.seen).trim(), "42");
    let told = notes(&agent.seen);
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].contains("code blocks"), "{told:?}");

    // What the model was sent next: no tools, no tool messages, the result as IronClaw's text.
    let requests = agent.requests();
    assert_eq!(requests.len(), 2);
    let second = &requests[1].body;
    assert!(second.get("tools").is_none(), "{second}");
    let messages = second["messages"].as_array().cloned().unwrap_or_default();
    assert!(messages.iter().all(|m| m["role"] != "tool"), "{second}");
    assert!(
        messages.iter().all(|m| m.get("tool_calls").is_none()),
        "{second}"
    );
    assert!(messages[0]["content"]
        .as_str()
        .is_some_and(|s| s.contains("fenced code block")));
    let last = messages
        .last()
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    assert!(
        last.contains("results of your code blocks") && last.contains("42"),
        "{last}"
    );

    // Kept: after a restart the mode holds, without a second note, and a denial is told.
    let Agent {
        env, conversation, ..
    } = agent;
    let mut agent = Agent::resume(env, Wire::Ollama, conversation).await;
    agent.push_all([
        Reply::text(["```bash\ntouch /workspace/nope\n```"]),
        says("Understood."),
    ]);
    agent.send("make a file");
    let request = agent.approval_request().await;
    assert_eq!(request.code, "touch /workspace/nope");
    agent.deny(&request, "not now");
    let events = agent.collect_until_turn_end().await;
    assert!(notes(&events).is_empty());
    // The session has run code before, so its workspace exists; the denied file is not in it.
    assert!(!agent.workspace().join("nope").exists());
    let sent = agent
        .requests()
        .last()
        .map(|r| r.body.to_string())
        .unwrap_or_default();
    assert!(sent.contains("DENIED"), "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ironclaw_chat_with_an_ollama_model_without_tools_asks_to_run_its_code_blocks() {
    let env = TestEnv::new().await;
    let (server, base) = ironclaw_llm::testing::ScriptedServer::start()
        .await
        .expect("scripted server");
    server.set_models(["tiny:1b"]);
    server.set_model_without_tools();
    server.push_all([
        Reply::text(["I will list the files.\n```bash\nls /workspace\n```"]),
        says("You did not want that; fine."),
    ]);
    let (stdout, stderr) = chat_cli(
        &env,
        &[
            "--provider",
            "ollama",
            "--base-url",
            &base,
            "--model",
            "tiny:1b",
            "--deny-all",
            "-m",
            "what is in my folder?",
        ],
    )
    .await;
    assert!(stderr.contains("no tool calling"), "{stderr}");
    assert!(stdout.contains("You did not want that; fine."), "{stdout}");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(requests
        .iter()
        .all(|r| r.path == "/api/chat" && r.body.get("tools").is_none()));
    // The block was a run request, and it was denied: the model was told.
    let told = requests[1].body.to_string();
    assert!(told.contains("DENIED"), "{told}");
}
