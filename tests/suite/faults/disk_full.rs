//! The disk holding the history filling up mid-conversation. The data folder is a small tmpfs
//! mounted over the installation's data dir (needs root, which the suite's engine needs too).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use ironclaw_protocol::AgentEvent;
use ironclaw_store::{MessageRole, MessageStatus};
use ironclaw_tests::agent::*;
use ironclaw_tests::TestEnv;
use pretty_assertions::assert_eq;

/// A tmpfs of `size` over `dir`; lazily unmounted on drop (also when the test fails).
pub(crate) struct Tmpfs(PathBuf);

impl Tmpfs {
    pub(crate) fn mount(dir: &Path, size: &str) -> Self {
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ])
            .arg(dir)
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "mounting a tmpfs needs root: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Self(dir.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).output();
    }
}

/// Writes zeros into `path` until the file system is full.
pub(crate) fn fill(path: &Path) {
    let mut file = std::fs::File::create(path).expect("filler");
    let chunk = vec![0u8; 64 * 1024];
    loop {
        if file
            .write_all(&chunk)
            .and_then(|()| file.sync_all())
            .is_err()
        {
            break;
        }
    }
    // The last bytes too: small writes until nothing fits.
    while file
        .write_all(&[0u8; 512])
        .and_then(|()| file.sync_all())
        .is_ok()
    {}
}

/// Fault: the disk under the history (SQLite + audit log) fills up mid-conversation.
/// Expected: the next turn fails with an error saying the disk is full and to free space; code
/// the model asks for does not run (no record, no run); every turn committed before is intact;
/// once space is freed the same session goes on, and the audit chain verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_fails_the_turn_clearly_runs_nothing_and_loses_nothing_committed() {
    let env = TestEnv::new().await;
    let _tmpfs = Tmpfs::mount(&env.paths.data_dir, "6m");
    let mut agent = Agent::start_with(
        env,
        Wire::OpenAi,
        ironclaw_protocol::ApprovalPolicy::AskAlways,
    )
    .await;
    agent.push(says("committed answer"));
    agent.send("before the disk filled");
    agent.turn_done().await;

    // Full before a turn: the message cannot be saved, so the turn does not start at all.
    let filler = agent.env.paths.data_dir.join("filler");
    fill(&filler);
    agent.send("while the disk is full");
    let error = match agent
        .next_event_matching("the message refused", |e| {
            matches!(
                e,
                AgentEvent::MessageNotSaved { .. } | AgentEvent::TurnStarted { .. }
            )
        })
        .await
    {
        AgentEvent::MessageNotSaved { message, .. } => message,
        other => panic!("a turn started with nowhere to save it: {other:?}"),
    };
    assert!(
        error.contains("full") && error.contains("free"),
        "the error must say the disk is full and to free space: {error}"
    );
    std::fs::remove_file(&filler).expect("free the space");

    // Full while an approval waits: the decision cannot be recorded, so the code must not run.
    agent.push(asks_to_run("call_1", "python", "print('must not run')"));
    agent.send("run this");
    let req = agent.approval_request().await;
    fill(&filler);
    agent.approve(&req);
    let turn = agent.collect_until_turn_end().await;
    assert!(
        started_code(&turn).is_empty(),
        "code ran although its approval could not be recorded:\n{}",
        agent.dump()
    );
    let said: Vec<String> = turn
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Error { message } => Some(message.clone()),
            AgentEvent::DecisionRejected { message, .. } => Some(message.clone()),
            AgentEvent::TurnEnded { error, .. } => error.clone(),
            _ => None,
        })
        .collect();
    assert!(
        said.iter().any(|e| e.contains("full")),
        "nothing said the disk is full: {said:?}\n{}",
        agent.dump()
    );
    std::fs::remove_file(&filler).expect("free the space");
    agent.push(says("after the space was freed"));
    agent.send("space again");
    agent.turn_done().await;

    let history = agent.history();
    let messages: Vec<(MessageRole, &str, MessageStatus)> = history
        .messages
        .iter()
        .map(|m| (m.message.role, m.message.content.as_str(), m.message.status))
        .filter(|(_, text, _)| !text.is_empty())
        .collect();
    assert_eq!(
        messages.first(),
        Some(&(
            MessageRole::User,
            "before the disk filled",
            MessageStatus::Complete
        ))
    );
    assert_eq!(
        messages.get(1),
        Some(&(
            MessageRole::Assistant,
            "committed answer",
            MessageStatus::Complete
        ))
    );
    assert_eq!(
        messages.last(),
        Some(&(
            MessageRole::Assistant,
            "after the space was freed",
            MessageStatus::Complete
        ))
    );
    assert_eq!(history.turns[0].status, ironclaw_store::TurnStatus::Done);
    let report = ironclaw_store::verify(agent.audit_path()).expect("the audit chain verifies");
    assert!(report.torn_tail_bytes.is_none(), "{report:?}");
}
