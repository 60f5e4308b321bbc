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
    assert!(first.contains("was branched here"), "{first}");
}
