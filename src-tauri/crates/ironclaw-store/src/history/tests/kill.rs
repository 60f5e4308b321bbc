//! `kill -9` durability: a child process writes through the public API and reports each
//! message id only after its transaction committed; after SIGKILL every reported id must be
//! in the database. The child is this test binary re-run on the one "child" test below.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;

use super::*;
use crate::model::TurnStatus;
use ironclaw_protocol::MessageId;

const CHILD_DB: &str = "IRONCLAW_STORE_KILL_TEST_DB";
const CHILD_CONVERSATION: &str = "IRONCLAW_STORE_KILL_TEST_CONVERSATION";
/// Commits to see before pulling the plug.
const COMMITS_BEFORE_KILL: usize = 300;

/// The child's body. Started without the environment variables (as in a normal test run) it
/// does nothing.
#[test]
fn kill_test_child_writer() {
    let Ok(db) = std::env::var(CHILD_DB) else {
        return;
    };
    let conversation: ConversationId = std::env::var(CHILD_CONVERSATION).unwrap().parse().unwrap();
    let (history, _) = History::open(&db).unwrap();
    let turn = history.begin_turn(conversation).unwrap();
    let mut new = message(conversation, Some(turn.id), MessageRole::Assistant, "");
    new.status = MessageStatus::Streaming;
    let streaming = history.add_message(&new).unwrap();
    println!("@@streaming {}", streaming.id);
    let mut text = String::new();
    // Never outlive a parent that lost track of us.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut i = 0u64;
    while Instant::now() < deadline {
        let note = message(
            conversation,
            Some(turn.id),
            MessageRole::User,
            &format!("note {i}"),
        );
        let stored = history.add_message(&note).unwrap();
        // Printed (and line-flushed) only after the commit returned.
        println!("@@committed {}", stored.id);
        if i % 10 == 0 {
            text.push_str(&format!("chunk{i} "));
            history.update_message_content(streaming.id, &text).unwrap();
            println!("@@checkpoint {}", text.len());
        }
        i += 1;
    }
}

/// Kills the child if the test fails before it does.
struct ChildGuard(Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[derive(Default)]
struct Seen {
    committed: Vec<MessageId>,
    streaming: Option<MessageId>,
    checkpoint_len: usize,
}

impl Seen {
    /// Markers are searched anywhere in the line: the test harness prints the child test's
    /// name without a newline just before the first one.
    fn read(&mut self, line: &str) {
        if let Some((_, id)) = line.split_once("@@committed ") {
            self.committed.push(id.trim().parse().unwrap());
        } else if let Some((_, id)) = line.split_once("@@streaming ") {
            self.streaming = Some(id.trim().parse().unwrap());
        } else if let Some((_, len)) = line.split_once("@@checkpoint ") {
            self.checkpoint_len = len.trim().parse().unwrap();
        }
    }
}

#[test]
fn every_commit_reported_before_kill_9_survives_it() {
    let (_dir, path, history) = temp_history();
    let conversation = new_conversation(&history, "kill -9");
    drop(history);

    let child_test = format!(
        "{}::kill_test_child_writer",
        module_path!().trim_start_matches("ironclaw_store::")
    );
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            child_test.as_str(),
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DB, &path)
        .env(CHILD_CONVERSATION, conversation.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = ChildGuard(child);
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    let mut seen = Seen::default();
    while seen.committed.len() < COMMITS_BEFORE_KILL {
        let line = lines
            .next()
            .expect("the child stopped before writing enough messages")
            .unwrap();
        seen.read(&line);
    }

    // SIGKILL on Unix (TerminateProcess on Windows): no destructors, no SQLite close.
    child.0.kill().unwrap();
    // Lines still in the pipe were also printed after their commits.
    for line in lines {
        seen.read(&line.unwrap());
    }
    let status = child.0.wait().unwrap();
    assert!(!status.success());

    let (history, report) = History::open(&path).unwrap();
    let streaming = seen.streaming.unwrap();
    assert_eq!(report.interrupted_turns.len(), 1);
    assert_eq!(report.interrupted_messages, vec![streaming]);
    for id in &seen.committed {
        let stored = history.get_message(*id);
        assert!(
            stored.is_ok(),
            "message {id} was reported committed but is gone: {stored:?}"
        );
    }
    let partial = history.get_message(streaming).unwrap();
    assert_eq!(partial.status, MessageStatus::Interrupted);
    assert!(partial.content.len() >= seen.checkpoint_len);
    let turn = history.get_turn(partial.turn_id.unwrap()).unwrap();
    assert_eq!(turn.status, TurnStatus::Interrupted);
}
