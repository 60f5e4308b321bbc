//! Editing an earlier message branches the conversation: the branch has what came before it,
//! its files as they were at that point (the later runs taken back in a copy, never in the
//! original), a fresh interpreter, and none of the original's approvals.

use ironclaw_protocol::{AgentEvent, ApprovalPolicy};
use ironclaw_store::{branch_key, BranchOrigin, MessageRole};
use ironclaw_tests::agent::*;
use ironclaw_tests::TestEnv;
use pretty_assertions::assert_eq;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_has_the_earlier_messages_the_files_as_they_were_and_a_fresh_interpreter() {
    let env = TestEnv::new().await;
    let mut agent = Agent::start_with(env, Wire::OpenAi, ApprovalPolicy::NeverAsk).await;
    agent.push_all([
        asks_to_run(
            "call_1",
            "python",
            "kept = 41\nopen('/workspace/a.txt', 'w').write('one')",
        ),
        says("Wrote a.txt."),
    ]);
    agent.send("write one");
    agent.turn_done().await;
    agent.push_all([
        asks_to_run(
            "call_2",
            "python",
            "open('/workspace/a.txt', 'w').write('two')\nopen('/workspace/b.txt', 'w').write('b')",
        ),
        says("Changed it."),
    ]);
    agent.send("now change it");
    agent.turn_done().await;
    let original = agent.history();
    let second = original
        .messages
        .iter()
        .filter(|m| m.message.role == MessageRole::User)
        .nth(1)
        .expect("the second message")
        .message
        .id;
    let before = original.messages.len();

    // The model the original switched to comes along.
    let chosen = ["openai", "other-model"];
    agent
        .deps
        .history
        .set_setting(
            &ironclaw_agent::session::model_key(agent.conversation),
            &chosen,
        )
        .expect("remember a model");
    let branched = ironclaw_agent::branch::branch(
        &agent.deps.history,
        Some(&agent.sandbox),
        agent.conversation,
        second,
    )
    .await
    .expect("branch");
    assert!(
        branched.note.contains("1 later run taken back") && branched.note.contains("starts fresh"),
        "{}",
        branched.note
    );

    // The original is as it was: its files and its messages.
    let ws = agent.workspace();
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).expect("a"), "two");
    assert!(ws.join("b.txt").exists());
    assert_eq!(agent.history().messages.len(), before);
    // The branch's files are as they were before the second run.
    let branch_ws = agent
        .env
        .paths
        .workspaces_dir()
        .join(branched.conversation.to_string());
    assert_eq!(
        std::fs::read_to_string(branch_ws.join("a.txt")).expect("the branch's a.txt"),
        "one"
    );
    assert!(!branch_ws.join("b.txt").exists());
    let origin: BranchOrigin = agent
        .deps
        .history
        .get_setting(&branch_key(branched.conversation))
        .expect("read")
        .expect("the branch says where it came from");
    assert_eq!((origin.from, origin.at), (agent.conversation, second));
    let full = agent
        .deps
        .history
        .get_full_conversation(branched.conversation)
        .expect("the branch");
    let users: Vec<&str> = full
        .messages
        .iter()
        .filter(|m| m.message.role == MessageRole::User)
        .map(|m| m.message.content.as_str())
        .collect();
    assert_eq!(users, ["write one"]);
    assert!(
        full.messages
            .iter()
            .all(|m| m.tool_calls.iter().all(|c| c.approvals.is_empty())),
        "no approval comes along"
    );

    let carried: Option<Vec<String>> = agent
        .deps
        .history
        .get_setting(&ironclaw_agent::session::model_key(branched.conversation))
        .expect("read");
    assert_eq!(carried, Some(vec!["openai".into(), "other-model".into()]));
    // (This test's runtime offers no other model: the branch goes on with the scripted one.)
    agent
        .deps
        .history
        .delete_setting(&ironclaw_agent::session::model_key(branched.conversation))
        .expect("forget it");

    // The branch goes on: the edited message, in a fresh interpreter, on the old files.
    let Agent { env, .. } = agent;
    let mut branch = Agent::resume(env, Wire::OpenAi, branched.conversation).await;
    branch.push_all([
        asks_to_run(
            "call_3",
            "python",
            "print(open('/workspace/a.txt').read(), 'kept' in globals())",
        ),
        says("It says one."),
    ]);
    branch.send("change it differently");
    let events = branch.collect_until_turn_end().await;
    let approvals = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ApprovalRequested(_)))
        .count();
    assert_eq!(approvals, 0, "the policy came along (never ask)");
    let results = branch.tool_results_in(1);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[1].contains("one False"), "{results:?}");
    let first = branch.requests()[0].body.to_string();
    assert!(first.contains("write one") && first.contains("Wrote a.txt."));
    assert!(!first.contains("now change it"), "{first}");
    assert!(first.contains("branched from"), "{first}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ironclaw_history_branch_makes_the_branch_that_chat_goes_on_with() {
    let env = TestEnv::new().await;
    let (server, base) = ironclaw_llm::testing::ScriptedServer::start()
        .await
        .expect("scripted server");
    let base = format!("{base}/v1");
    let args = |rest: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "--provider",
            "openai",
            "--base-url",
            &base,
            "--model",
            "mock",
            "--policy",
            "never-ask",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(rest.iter().map(|s| s.to_string()));
        v
    };
    server.push_all([
        asks_to_run("c1", "shell", "echo one > /workspace/a.txt"),
        says("one written"),
        asks_to_run("c2", "shell", "echo two > /workspace/a.txt"),
        says("two written"),
    ]);
    let first = args(&["-m", "write one", "-m", "write two"]);
    let first: Vec<&str> = first.iter().map(String::as_str).collect();
    let (_, stderr) = chat_cli(&env, &first).await;
    let original = stderr
        .split("conversation ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no conversation id in: {stderr}"))
        .to_string();

    let mut cmd = tokio::process::Command::from(env.cli());
    let out = cmd
        .args(["history", "branch", &original, "--at", "2"])
        .output()
        .await
        .expect("run ironclaw history branch");
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{said}");
    assert!(said.contains("1 later run taken back"), "{said}");
    let branch = String::from_utf8_lossy(&out.stdout).trim().to_string();

    server.push_all([
        asks_to_run("c3", "shell", "cat /workspace/a.txt"),
        says("it says one"),
    ]);
    let more = args(&["--conversation", &branch, "-m", "what does it say?"]);
    let more: Vec<&str> = more.iter().map(String::as_str).collect();
    chat_cli(&env, &more).await;
    let last = server.chat_requests().last().expect("a request").clone();
    let results = tool_results(&last);
    assert_eq!(
        results.last().map(|r| r.contains("one")),
        Some(true),
        "{results:?}"
    );
    let body = last.body.to_string();
    assert!(
        body.contains("write one") && !body.contains("write two"),
        "{body}"
    );

    // Out of range: said, nothing made.
    let mut cmd = tokio::process::Command::from(env.cli());
    let out = cmd
        .args(["history", "branch", &original, "--at", "3"])
        .output()
        .await
        .expect("run ironclaw history branch");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("has 2 messages of yours"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
