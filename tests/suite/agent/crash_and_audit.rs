//! What survives and what is detected: a `kill -9` mid-answer, a hand-edited audit log, and the
//! non-interactive CLI that denies everything.

use std::process::Stdio;
use std::time::Duration;

use ironclaw_llm::testing::{Reply, ScriptedServer};
use ironclaw_protocol::DecidedBy;
use ironclaw_store::{ApprovalStatus, AuditError, ChainProblem, MessageRole, MessageStatus};
use ironclaw_tests::agent::*;
use ironclaw_tests::TestEnv;
use pretty_assertions::assert_eq;
use tokio::io::AsyncReadExt;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `ironclaw chat` against the scripted server, one message, as a real process.
fn chat(env: &TestEnv, base: &str, extra: &[&str], message: &str) -> tokio::process::Command {
    let mut cmd = env.cli();
    cmd.args([
        "chat",
        "--provider",
        "openai",
        "--base-url",
        &format!("{base}/v1"),
        "--model",
        MODEL,
    ])
    .args(extra)
    .args(["-m", message])
    .stdin(Stdio::null());
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(true);
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_keeps_the_streamed_text_after_kill_9_and_marks_the_turn_interrupted() {
    let env = TestEnv::new().await;
    let (server, base) = ScriptedServer::start().await.expect("scripted server");
    let chunks: Vec<String> = (0..60).map(|i| format!("w{i:02} ")).collect();
    let full: String = chunks.concat();
    server.push(Reply::text(chunks).with_delay(Duration::from_millis(150)));

    let mut child = chat(&env, &base, &[], "tell me a long story")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ironclaw chat");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut printed = Vec::new();
    let mut buf = [0u8; 4096];
    // Kill mid-answer, once text has been shown and a checkpoint of it is in the history.
    let waited = tokio::time::timeout(EVENT_GUARD, async {
        while !text(&printed).contains("w02 ") {
            let n = stdout.read(&mut buf).await.expect("read stdout");
            assert!(n > 0, "ironclaw chat ended early: {}", text(&printed));
            printed.extend_from_slice(&buf[..n]);
        }
        // A second reader of the live history (it skips recovery: the CLI has it open).
        let (live, _) = ironclaw_agent::state::open_history(&env.paths).expect("open the history");
        let id = live.list_conversations().expect("list")[0].conversation.id;
        loop {
            let conv = live.get_full_conversation(id).expect("conversation");
            let saved = conv
                .messages
                .iter()
                .map(|m| &m.message)
                .find(|m| m.role == MessageRole::Assistant && !m.content.is_empty());
            if let Some(saved) = saved {
                assert_eq!(saved.status, MessageStatus::Streaming);
                return saved.content.clone();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let checkpoint = match waited {
        Ok(checkpoint) => checkpoint,
        Err(_) => {
            let _ = child.start_kill();
            let out = child.wait_with_output().await.expect("wait");
            panic!(
                "no checkpointed text within {EVENT_GUARD:?}; stdout: {}\nstderr: {}",
                text(&printed),
                text(&out.stderr)
            );
        }
    };
    let pid = nix::unistd::Pid::from_raw(child.id().expect("pid") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).expect("kill -9");
    let status = child.wait().await.expect("wait");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    stdout
        .read_to_end(&mut printed)
        .await
        .expect("rest of stdout");
    let printed = text(&printed);
    drop(server);

    let (history, report) =
        ironclaw_agent::state::open_history(&env.paths).expect("open the history");
    let conversations = history.list_conversations().expect("list");
    assert_eq!(conversations.len(), 1);
    let full_conv = history
        .get_full_conversation(conversations[0].conversation.id)
        .expect("conversation");
    let messages: Vec<_> = full_conv
        .messages
        .iter()
        .map(|m| m.message.clone())
        .collect();
    assert_eq!(messages.len(), 2, "{messages:#?}");
    assert_eq!(
        (messages[0].role, messages[0].content.as_str()),
        (MessageRole::User, "tell me a long story")
    );
    assert_eq!(messages[0].status, MessageStatus::Complete);
    let answer = &messages[1];
    assert_eq!(answer.role, MessageRole::Assistant);
    assert_eq!(answer.status, MessageStatus::Interrupted);
    // At least what was checkpointed before the kill; nothing that was not shown.
    assert!(
        answer.content.starts_with(&checkpoint),
        "{answer:?}\ncheckpoint before the kill: {checkpoint:?}"
    );
    assert!(
        full.starts_with(&answer.content) && printed.contains(&answer.content),
        "{answer:?}\nprinted: {printed}"
    );

    assert_eq!(report.interrupted_turns, [full_conv.turns[0].id]);
    assert_eq!(report.interrupted_messages, [answer.id]);
    assert_eq!(
        full_conv.turns[0].status,
        ironclaw_store::TurnStatus::Interrupted
    );

    // Started again, the conversation goes on with the kept text, marked as cut off.
    let conversation = full_conv.conversation.id;
    let kept = answer.content.clone();
    drop(history);
    let mut agent = Agent::resume(env, Wire::OpenAi, conversation).await;
    assert!(agent.recovery.is_empty(), "{:?}", agent.recovery);
    agent.push(says("Where was I?"));
    agent.send("go on");
    agent.turn_done().await;
    let messages = agent.requests()[0].body["messages"].clone();
    let sent: Vec<(&str, &str)> = messages
        .as_array()
        .expect("messages")
        .iter()
        .skip(1) // the system prompt
        .map(|m| {
            (
                m["role"].as_str().unwrap_or(""),
                m["content"].as_str().unwrap_or(""),
            )
        })
        .collect();
    let cut = format!("{kept}\n[this answer was interrupted]");
    assert_eq!(
        sent,
        [
            ("user", "tell me a long story"),
            ("assistant", cut.as_str()),
            ("user", "go on")
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_audit_entry_is_reported_by_verify_and_the_cli() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push_all([asks_to_run("call_1", "python", "print(7)"), says("7")]);
    agent.send("go");
    let req = agent.approval_request().await;
    agent.approve(&req);
    agent.turn_done().await;

    let hash = req.code_hash.to_hex();
    let id = req.approval_id.to_string();
    let entries = agent.audit_entries();
    let kinds: Vec<&str> = entries.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["exec_requested", "decision", "exec_result"]);
    assert_eq!(
        (
            entries[0].data["approval_id"].as_str(),
            entries[0].data["code_hash"].as_str()
        ),
        (Some(id.as_str()), Some(hash.as_str()))
    );
    assert_eq!(entries[1].data["approved"], true);
    assert_eq!(entries[1].data["decided_by"], "user_dialog");
    assert_eq!(entries[1].data["code_hash"], hash.as_str());
    assert_eq!(entries[2].data["approval_id"], id.as_str());
    assert_eq!(entries[2].data["exit_code"], 0);
    let path = agent.audit_path();
    assert_eq!(ironclaw_store::verify(&path).expect("intact").entries, 3);
    let ok = agent
        .env
        .cli()
        .args(["audit", "verify"])
        .output()
        .expect("run ironclaw");
    assert!(ok.status.success(), "{}", text(&ok.stdout));

    // Rewrite history: the run "failed".
    let log = std::fs::read_to_string(&path).expect("read audit log");
    let mut lines: Vec<String> = log.lines().map(str::to_owned).collect();
    assert!(lines[2].contains(r#""exit_code":0"#), "{}", lines[2]);
    lines[2] = lines[2].replace(r#""exit_code":0"#, r#""exit_code":1"#);
    std::fs::write(&path, lines.join("\n") + "\n").expect("write audit log");

    match ironclaw_store::verify(&path) {
        Err(AuditError::Broken { line, seq, problem }) => {
            assert_eq!((line, seq, problem), (3, 3, ChainProblem::Edited));
        }
        other => panic!("tampering not detected: {other:?}"),
    }
    let out = agent
        .env
        .cli()
        .args(["audit", "verify"])
        .output()
        .expect("run ironclaw");
    assert!(!out.status.success(), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("line 3"),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_deny_all_runs_nothing_and_records_the_denial() {
    let env = TestEnv::new().await;
    let (server, base) = ScriptedServer::start().await.expect("scripted server");
    server.push_all([
        asks_to_run(
            "call_1",
            "python",
            "open('/workspace/deny_all.txt', 'w').write('x')",
        ),
        says("Understood."),
    ]);
    let out = tokio::time::timeout(
        EVENT_GUARD,
        chat(&env, &base, &["--deny-all"], "write a file").output(),
    )
    .await
    .expect("ironclaw chat finished")
    .expect("run ironclaw chat");
    assert!(
        out.status.success(),
        "status {:?}\nstdout: {}\nstderr: {}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("denied (--deny-all)"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("Understood."),
        "{}",
        text(&out.stdout)
    );

    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    let results = tool_results(&requests[1]);
    assert!(
        results[0].contains("The user DENIED this run") && results[0].contains("--deny-all"),
        "{results:?}"
    );

    let (history, _) = ironclaw_agent::state::open_history(&env.paths).expect("open the history");
    let conversation = history.list_conversations().expect("list")[0]
        .conversation
        .id;
    let full = history
        .get_full_conversation(conversation)
        .expect("conversation");
    let approvals: Vec<_> = full
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.clone())
        .flat_map(|c| c.approvals)
        .collect();
    assert_eq!(approvals.len(), 1);
    assert_eq!(approvals[0].approval.status, ApprovalStatus::Denied);
    assert_eq!(approvals[0].approval.decided_by, Some(DecidedBy::Cli));
    assert_eq!(
        approvals[0].approval.reason.as_deref(),
        Some("denied automatically (--deny-all)")
    );
    assert_eq!(approvals[0].execution, None);
    assert_eq!(env.container_id(&conversation.to_string()).await, None);
    assert!(find_files_named(env.root(), "deny_all.txt").is_empty());

    // What a person reading the history sees.
    drop(history);
    let shown = env
        .cli()
        .args(["history", "show", &conversation.to_string()])
        .output()
        .expect("run ironclaw history show");
    let shown = text(&shown.stdout);
    assert!(
        shown.contains("**Decision:** denied")
            && shown.contains("by cli")
            && shown.contains("(--deny-all)"),
        "{shown}"
    );
}
