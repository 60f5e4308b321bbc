//! A run that leaves something behind in its interpreter is named, by its number in the
//! conversation, in the next approval, the model's result note and the audit log; a fresh
//! interpreter clears it.

use ironclaw_protocol::{AgentEvent, Op};
use ironclaw_store::AuditKind;
use ironclaw_tests::agent::*;

/// Leaves a thread in the Python interpreter that outlives the run.
const LEAVES_A_THREAD: &str = "import threading, time\n\
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()\n\
    print('thread left, alive:', threading.active_count())";

fn numbers_started(events: &[AgentEvent]) -> Vec<u32> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ExecutionStarted { number, .. } => Some(*number),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_that_altered_the_interpreter_is_named_until_a_fresh_one_clears_it() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push_all([
        asks_to_run("call_1", "python", LEAVES_A_THREAD),
        says("Started it."),
        asks_to_run("call_2", "python", "print('second')"),
        says("Printed."),
        asks_to_run("call_3", "python", "print('third')"),
        says("Printed again."),
        asks_to_run("call_4", "python", "print('fourth')"),
        says("Done."),
    ]);

    // Run #1 leaves the thread; its own approval had nothing to warn about.
    agent.send("start a background thread");
    let first = agent.approval_request().await;
    assert!(first.altered_session.is_empty(), "{first:?}");
    agent.approve(&first);
    agent.turn_done().await;
    // The attack ran: the thread was alive when the run ended.
    assert!(
        stdout_of(&agent.seen).contains("thread left, alive: 2"),
        "{}",
        agent.dump()
    );

    // The next approval names run #1 and what it left.
    agent.send("print something");
    let second = agent.approval_request().await;
    assert!(
        second
            .altered_session
            .iter()
            .any(|a| a.starts_with("run #1 left: ") && a.contains("thread")),
        "{:?}",
        second.altered_session
    );
    agent.approve(&second);
    agent.turn_done().await;
    // The model is told, in the same words.
    let note = agent.tool_results_in(3).pop().unwrap_or_default();
    assert!(
        note.contains("earlier runs had altered (run #1 left: "),
        "{note}"
    );

    // Still altered (the thread sleeps on): named again; this time the person asks for a
    // fresh interpreter.
    agent.send("again");
    let third = agent.approval_request().await;
    assert!(
        third
            .altered_session
            .iter()
            .any(|a| a.starts_with("run #1 left: ")),
        "{:?}",
        third.altered_session
    );
    agent.op(Op::FreshInterpreter {
        approval_id: third.approval_id,
    });
    agent.approve(&third);
    agent.turn_done().await;

    agent.send("once more");
    let fourth = agent.approval_request().await;
    assert!(
        fourth.altered_session.is_empty(),
        "a fresh interpreter has nothing left behind: {:?}",
        fourth.altered_session
    );
    agent.approve(&fourth);
    agent.turn_done().await;
    assert_eq!(numbers_started(&agent.seen), [1, 2, 3, 4]);

    // The audit log records, per run, whether it ran altered and which runs altered it.
    let integrity: Vec<_> = agent
        .audit_entries()
        .into_iter()
        .filter(|e| e.kind == AuditKind::ExecResult)
        .map(|e| {
            (
                e.data["integrity"]["altered_by_runs"].clone(),
                e.data["integrity"]["fresh_interpreter"].clone(),
            )
        })
        .collect();
    use serde_json::json;
    assert_eq!(
        integrity,
        [
            (json!([]), json!(false)),
            (json!([1]), json!(false)),
            (json!([]), json!(true)),
            (json!([]), json!(false)),
        ]
    );
}

/// `ironclaw chat` numbers its runs, names the one that altered the interpreter in the next
/// prompt, and answers `f` with a fresh interpreter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_names_the_altering_run_and_f_runs_the_next_code_in_a_fresh_interpreter() {
    use ironclaw_llm::testing::ScriptedServer;
    use tokio::io::AsyncWriteExt;

    let env = ironclaw_tests::TestEnv::new().await;
    let (server, base) = ScriptedServer::start().await.expect("scripted server");
    server.push_all([
        asks_to_run("call_1", "python", LEAVES_A_THREAD),
        asks_to_run(
            "call_2",
            "python",
            "import threading\nprint('threads now:', threading.active_count())",
        ),
        says("Done."),
    ]);
    let mut cmd = env.cli();
    cmd.args([
        "chat",
        "--provider",
        "openai",
        "--base-url",
        &format!("{base}/v1"),
        "--model",
        MODEL,
        "-m",
        "leave a thread, then count threads",
    ])
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(true);
    let mut child = cmd.spawn().expect("start ironclaw chat");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(b"a\nf\n")
        .await
        .expect("answer the prompts");
    drop(stdin);
    let out = tokio::time::timeout(EVENT_GUARD, child.wait_with_output())
        .await
        .expect("ironclaw chat finished")
        .expect("run ironclaw chat");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");

    assert!(stderr.contains("── run #1 (python) ──"), "{stderr}");
    assert!(stderr.contains("── run #2 (python) ──"), "{stderr}");
    // The first run did leave its thread; the prompt for the second says so, by number.
    assert!(stdout.contains("thread left, alive: 2"), "{stdout}");
    assert!(
        stderr.contains("!   • run #1 left: ") && stderr.contains("thread"),
        "{stderr}"
    );
    // `f` restarted the interpreter: the thread is gone when the second run counts.
    assert!(stdout.contains("threads now: 1"), "{stdout}");
}

/// After IronClaw restarts, the interpreter still carries what a run left in it: the first
/// approval of the new session says so, and code the policy would run without asking is
/// asked about instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restart_the_first_approval_still_warns_and_nothing_is_auto_approved() {
    use ironclaw_protocol::ApprovalPolicy;

    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push_all([
        asks_to_run("call_1", "python", LEAVES_A_THREAD),
        says("Started it."),
    ]);
    agent.send("start a background thread");
    let first = agent.approval_request().await;
    agent.approve(&first);
    agent.turn_done().await;
    assert!(
        stdout_of(&agent.seen).contains("thread left, alive: 2"),
        "{}",
        agent.dump()
    );

    // From now on, read-only code runs without asking.
    agent.set_policy(ApprovalPolicy::AskUnlessSafe);
    agent
        .next_event_matching("PolicyChanged", |e| {
            matches!(e, AgentEvent::PolicyChanged { .. })
        })
        .await;

    // IronClaw stops; the sandbox (and the thread in its interpreter) lives on.
    let Agent {
        env, conversation, ..
    } = agent;
    let mut agent = Agent::resume(env, Wire::OpenAi, conversation).await;
    agent.push_all([
        asks_to_run("call_2", "python", "print('read only')"),
        says("Printed."),
    ]);
    agent.send("print something");
    // Read-only code runs without asking under this policy, unless the interpreter is altered.
    let req = agent.approval_request().await;
    assert!(
        req.altered_session
            .iter()
            .any(|a| a.starts_with("an earlier run left: ") && a.contains("thread")),
        "{:?}",
        req.altered_session
    );
    agent.approve(&req);
    agent.turn_done().await;
    assert_eq!(numbers_started(&agent.seen), [2]);
}
