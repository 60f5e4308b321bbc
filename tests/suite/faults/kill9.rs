//! `kill -9` of a real `ironclaw chat` process while it waits for an approval and while the
//! approved code runs (the kill during generation is in `agent::crash_and_audit`). After each:
//! the history says what was cut off, nothing decided or shown is lost, the stale approval can
//! no longer be used, the audit chain verifies, and the conversation goes on in the same
//! container with no run of the dead process still occupying it.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use ironclaw_protocol::{AgentEvent, Decision};
use ironclaw_store::{ApprovalStatus, MessageRole, TurnStatus};
use ironclaw_tests::agent::*;
use ironclaw_tests::TestEnv;
use pretty_assertions::assert_eq;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A live `ironclaw chat` whose stdin we type into and whose output we watch.
pub struct Chat {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl Chat {
    pub fn start(env: &TestEnv, base: &str) -> Self {
        let mut cmd = env.cli();
        cmd.args([
            "chat",
            "--provider",
            "openai",
            "--base-url",
            &format!("{base}/v1"),
            "--model",
            MODEL,
        ]);
        let mut cmd = tokio::process::Command::from(cmd);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("start ironclaw chat");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        pump(child.stdout.take().expect("stdout"), Arc::clone(&stdout));
        pump(child.stderr.take().expect("stderr"), Arc::clone(&stderr));
        Self {
            child,
            stdin,
            stdout,
            stderr,
        }
    }

    pub async fn type_line(&mut self, line: &str) {
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("type into ironclaw chat");
        self.stdin.flush().await.expect("flush");
    }

    fn text(buf: &Mutex<Vec<u8>>) -> String {
        String::from_utf8_lossy(&buf.lock().expect("output buffer")).into_owned()
    }

    /// Waits until `needle` shows on stdout (`on_stdout`) or stderr.
    pub async fn wait_for(&mut self, needle: &str, on_stdout: bool) {
        let buf = if on_stdout {
            Arc::clone(&self.stdout)
        } else {
            Arc::clone(&self.stderr)
        };
        let found = tokio::time::timeout(EVENT_GUARD, async {
            loop {
                if Self::text(&buf).contains(needle) {
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        })
        .await;
        if found.is_err() {
            panic!(
                "ironclaw chat never showed {needle:?}\nstdout: {}\nstderr: {}",
                Self::text(&self.stdout),
                Self::text(&self.stderr)
            );
        }
    }

    pub async fn kill_9(mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id().expect("pid") as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).expect("kill -9");
        let status = self.child.wait().await.expect("wait");
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
    }
}

fn pump(mut from: impl AsyncReadExt + Unpin + Send + 'static, into: Arc<Mutex<Vec<u8>>>) {
    tokio::spawn(async move {
        let mut buf = [0u8; 4096];
        while let Ok(n) = from.read(&mut buf).await {
            if n == 0 {
                break;
            }
            into.lock()
                .expect("output buffer")
                .extend_from_slice(&buf[..n]);
        }
    });
}

/// `ironclaw audit verify` on this installation: exits 0 and says the chain is intact.
fn audit_verifies(env: &TestEnv) {
    let out = env
        .cli()
        .args(["audit", "verify"])
        .output()
        .expect("audit verify");
    assert!(
        out.status.success(),
        "audit verify failed\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Fault: `kill -9` while the approval prompt waits for the person.
/// Expected: on restart the turn is `interrupted`, the approval `expired` (it can never be
/// used: a decision naming it is rejected and nothing runs), the user's message is kept, the
/// audit chain verifies, and no container was ever made for code nobody approved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_an_approval_wait_expires_the_approval_and_runs_nothing() {
    let env = TestEnv::new().await;
    let (server, base) = ironclaw_llm::testing::ScriptedServer::start()
        .await
        .expect("scripted server");
    server.push(asks_to_run(
        "call_1",
        "python",
        "open('/workspace/ran.txt', 'w').write('ran')",
    ));
    let mut chat = Chat::start(&env, &base);
    chat.type_line("write a file").await;
    chat.wait_for("Run it?", false).await;
    chat.kill_9().await;
    drop(server);

    let (history, report) =
        ironclaw_agent::state::open_history(&env.paths).expect("open the history");
    let conversation = history.list_conversations().expect("list")[0]
        .conversation
        .id;
    let full = history.get_full_conversation(conversation).expect("read");
    assert_eq!(full.turns.len(), 1);
    assert_eq!(full.turns[0].status, TurnStatus::Interrupted);
    assert_eq!(report.interrupted_turns, [full.turns[0].id]);
    let user = &full.messages[0].message;
    assert_eq!(
        (user.role, user.content.as_str()),
        (MessageRole::User, "write a file")
    );
    let approvals: Vec<_> = full
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .flat_map(|t| &t.approvals)
        .collect();
    assert_eq!(approvals.len(), 1, "{full:#?}");
    let stale = approvals[0].approval.clone();
    assert_eq!(stale.status, ApprovalStatus::Expired);
    assert_eq!(report.expired_approvals, [stale.id]);
    assert!(approvals[0].execution.is_none());
    drop(history);
    audit_verifies(&env);

    // Restarted, the old approval id and its hash are refused and nothing runs.
    let mut agent = Agent::resume(env, Wire::OpenAi, conversation).await;
    let hash = stale.code_hash;
    agent.decide_raw(stale.id, hash, Decision::ApproveOnce, false);
    let (id, message, still_pending) = agent.decision_rejected().await;
    assert_eq!((id, still_pending), (stale.id, false));
    assert!(!message.is_empty());
    assert!(
        !agent.has_container().await,
        "nothing approved, nothing ran"
    );
    assert!(find_files_named(agent.env.root(), "ran.txt").is_empty());

    // And the conversation goes on.
    agent.push(says("Shall I try again?"));
    agent.send("what happened?");
    agent.turn_done().await;
}

/// Fault: `kill -9` while approved code runs (it prints, then sleeps for ten minutes).
/// Expected: on restart the execution is marked interrupted with the output shown so far
/// kept, the approval stays `approved` (it was decided) and cannot be used again, the audit
/// chain verifies, the model is told the run's result is unknown, and the next run in the
/// same conversation works at once in the same container: the dead process's run does not
/// keep the session busy until its timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_an_execution_marks_it_interrupted_and_the_session_runs_again() {
    let env = TestEnv::new().await;
    let (server, base) = ironclaw_llm::testing::ScriptedServer::start()
        .await
        .expect("scripted server");
    server.push(asks_to_run(
        "call_1",
        "python",
        "import time\nprint('started', flush=True)\ntime.sleep(600)",
    ));
    let mut chat = Chat::start(&env, &base);
    chat.type_line("run something long").await;
    chat.wait_for("Run it?", false).await;
    chat.type_line("a").await;
    chat.wait_for("started", true).await;
    // The output is in the history before the kill (checkpointed as it streams)? Not
    // promised: only what was committed. The run itself must be.
    chat.kill_9().await;
    drop(server);

    let (history, report) =
        ironclaw_agent::state::open_history(&env.paths).expect("open the history");
    let conversation = history.list_conversations().expect("list")[0]
        .conversation
        .id;
    let full = history.get_full_conversation(conversation).expect("read");
    assert_eq!(full.turns[0].status, TurnStatus::Interrupted);
    let entries: Vec<_> = full
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .flat_map(|t| &t.approvals)
        .collect();
    assert_eq!(entries.len(), 1, "{full:#?}");
    assert_eq!(entries[0].approval.status, ApprovalStatus::Approved);
    let run = entries[0].execution.clone().expect("the run is recorded");
    assert!(run.interrupted, "{run:#?}");
    assert_eq!(report.interrupted_executions, [run.id]);
    drop(history);
    audit_verifies(&env);
    let container = env
        .container_id(&conversation.to_string())
        .await
        .expect("the session's container");

    let mut agent = Agent::resume(env, Wire::OpenAi, conversation).await;
    agent.push_all([
        asks_to_run("call_2", "python", "print('after')"),
        says("done"),
    ]);
    agent.send("try something short");
    let req = agent.approval_request().await;
    agent.approve(&req);
    let turn = agent.collect_until_turn_end().await;
    assert_eq!(stdout_of(&turn).trim(), "after", "{}", agent.dump());
    assert!(
        matches!(
            turn.last(),
            Some(AgentEvent::TurnEnded {
                status: ironclaw_protocol::TurnOutcome::Done,
                ..
            })
        ),
        "{}",
        agent.dump()
    );
    // The model was told the interrupted run's result is unknown (never left unanswered).
    let first = &agent.requests()[0];
    assert!(unanswered_tool_calls(first).is_empty(), "{:?}", first.body);
    assert!(
        tool_results(first)
            .iter()
            .any(|r| r.contains("interrupted")),
        "{:?}",
        tool_results(first)
    );
    // Same container, and only that one: nothing orphaned.
    assert_eq!(
        agent.env.container_id(&conversation.to_string()).await,
        Some(container)
    );
    let all = ironclaw_sandbox::container::list(agent.env.docker(), &agent.env.instance)
        .await
        .expect("list");
    assert_eq!(all.len(), 1, "{all:?}");
}
