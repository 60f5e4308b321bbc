//! `ask_unless_undoable` under pressure, through the agent: a run let through unasked because
//! Undo can take it back is taken back, byte for byte, whatever shape it gave the workspace
//! (more folders than a desktop's descriptor limit, sparse files, a file still growing, more
//! folders than the watch's share), and the host writes at most the cap for it. Each test
//! shows the shape was really made before it checks the outcome.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use ironclaw_protocol::{AgentEvent, ApprovalPolicy};
use ironclaw_tests::agent::*;
use ironclaw_tests::TestEnv;
use pretty_assertions::assert_eq;

const THESIS: &str = "Chapter 1: the person's own words, which no run may lose.\n";

/// An agent under `ask_unless_undoable` whose workspace holds the person's thesis (written by
/// a first run, which ran unasked too).
async fn agent_with_thesis(env: TestEnv) -> Agent {
    let mut agent = Agent::start_with(env, Wire::OpenAi, ApprovalPolicy::AskUnlessUndoable).await;
    agent.push_all([
        asks_to_run(
            "t",
            "python",
            &format!("open('/workspace/thesis.txt', 'w').write({THESIS:?})"),
        ),
        says("saved"),
    ]);
    agent.send("save my thesis");
    agent.turn_done().await;
    assert_eq!(read(&agent.workspace().join("thesis.txt")), THESIS);
    agent
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| format!("<{e}>"))
}

/// Runs `code` as one turn; it must run unasked. Returns the run's execution id and the
/// events of the turn.
async fn unasked(
    agent: &mut Agent,
    code: &str,
) -> (ironclaw_protocol::ExecutionId, Vec<AgentEvent>) {
    agent.push_all([asks_to_run("p", "python", code), says("done")]);
    agent.send("go");
    let events = agent.collect_until_turn_end().await;
    assert!(
        approval_requests(&events).is_empty(),
        "it was asked: {events:?}"
    );
    let runs = ended_runs(&events);
    assert_eq!(runs.len(), 1, "{events:?}");
    assert_eq!(
        runs[0].2, None,
        "let through as undoable, then not undoable: {events:?}"
    );
    (runs[0].0, events)
}

/// Bytes a folder takes on the disk, all of it.
fn disk_use(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(meta) = e.metadata() else { continue };
            if meta.is_dir() {
                stack.push(e.path());
            } else {
                total += meta.blocks() * 512;
            }
        }
    }
    total
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_folders_than_a_desktops_descriptor_limit_are_still_undone() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let mut agent = agent_with_thesis(TestEnv::new().await).await;
    // This test process is the host side, at a desktop's soft limit.
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("limits");
    setrlimit(Resource::RLIMIT_NOFILE, 1024, hard).expect("a desktop's limit");
    let (run, events) = unasked(
        &mut agent,
        "import os\nopen('/workspace/thesis.txt', 'w').write('lost')\n\
         for i in range(1600): os.mkdir(f'/workspace/node_modules_{i}')\nprint('made')",
    )
    .await;
    assert!(stdout_of(&events).contains("made"));
    let folders = std::fs::read_dir(agent.workspace()).expect("ws").count();
    assert!(folders > 1024, "{folders} entries, limit 1024");
    assert!(unrecorded_runs(&events).is_empty(), "{events:?}");
    let changes = &ended_runs(&events)[0].1;
    assert!(changes.len() > 1024, "{} changes", changes.len());
    agent.undo_run(run).await;
    assert_eq!(read(&agent.workspace().join("thesis.txt")), THESIS);
    assert_eq!(std::fs::read_dir(agent.workspace()).expect("ws").count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sparse_files_cost_the_undo_store_their_data_and_a_branch_copies_them_sparse() {
    let mut agent = agent_with_thesis(TestEnv::new().await).await;
    let checkpoints = agent.env.paths.checkpoints_dir();
    let before = disk_use(&checkpoints);
    // The strict profile's probe, on the default profile: 24 files of 64 MiB apparent size
    // with a few bytes each, and one of 256 MiB (the profile's `fsize` stops larger ones).
    let (run, events) = unasked(
        &mut agent,
        "open('/workspace/thesis.txt', 'w').write('lost')\n\
         for i in range(24):\n    f = open(f'/workspace/sparse{i}', 'wb'); f.truncate(64 << 20); f.seek(i << 20); f.write(b'data'); f.close()\n\
         f = open('/workspace/huge', 'wb'); f.truncate(256 << 20); f.close()\nprint('made')",
    )
    .await;
    assert!(stdout_of(&events).contains("made"), "{events:?}");
    let ws = agent.workspace();
    let apparent: u64 = std::fs::read_dir(&ws)
        .expect("ws")
        .map(|e| e.expect("entry").metadata().expect("meta").len())
        .sum();
    assert!(
        apparent > 1 << 30,
        "the files are {apparent} bytes apparent"
    );
    assert!(disk_use(&ws) < 1 << 20, "and hold {} bytes", disk_use(&ws));
    let grown = disk_use(&checkpoints) - before;
    assert!(grown < 4 << 20, "the undo store grew by {grown} bytes");

    // A branch copies them as they are on the disk, and says so.
    let workspaces = agent.env.paths.workspaces_dir();
    let before = disk_use(&workspaces);
    let last_user = agent
        .history()
        .messages
        .iter()
        .rfind(|m| m.message.role == ironclaw_store::MessageRole::User)
        .expect("a message")
        .message
        .id;
    let branched = ironclaw_agent::branch::branch(
        &agent.deps.history,
        Some(&agent.sandbox),
        agent.conversation,
        last_user,
    )
    .await
    .expect("branch");
    let grown = disk_use(&workspaces) - before;
    assert!(grown < 8 << 20, "the branch took {grown} bytes");
    let branch_ws = workspaces.join(branched.conversation.to_string());
    assert_eq!(
        read(&branch_ws.join("thesis.txt")),
        THESIS,
        "{}",
        branched.note
    );

    agent.undo_run(run).await;
    assert_eq!(read(&ws.join("thesis.txt")), THESIS);
    assert!(!ws.join("huge").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_still_growing_costs_at_most_the_cap_and_the_run_is_put_back() {
    let env = TestEnv::new().await;
    std::fs::write(env.paths.user_policy_file(), "undo: { keep: 32m }\n").expect("sandbox.yaml");
    let mut agent = agent_with_thesis(env).await;
    let checkpoints = agent.env.paths.checkpoints_dir();
    let before = disk_use(&checkpoints);
    // A thread the run leaves behind keeps appending (up to 256 MiB, so the test's disk is
    // not what is tried), while the host records the run.
    let (run, events) = unasked(
        &mut agent,
        "import threading, os, time\nopen('/workspace/thesis.txt', 'w').write('lost')\n\
         def grow():\n    f = open('/workspace/growing.log', 'ab')\n    while f.tell() < (256 << 20):\n        f.write(b'g' * (1 << 20)); f.flush(); time.sleep(0.01)\n\
         threading.Thread(target=grow, daemon=True).start()\ntime.sleep(0.3)\nprint(os.path.getsize('/workspace/growing.log') > 0)",
    )
    .await;
    assert!(stdout_of(&events).contains("True"), "{events:?}");
    let grown = disk_use(&checkpoints).saturating_sub(before);
    assert!(
        grown <= (32 << 20) + (1 << 20),
        "the undo store grew by {grown} bytes"
    );
    // Recorded (the copy won the race) or not, Undo takes the run back: with its thread
    // still writing, the next run is asked first.
    agent.undo_run(run).await;
    assert_eq!(read(&agent.workspace().join("thesis.txt")), THESIS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_folders_than_the_watch_share_leave_the_users_inotify_watches_to_others() {
    let mut agent = agent_with_thesis(TestEnv::new().await).await;
    let share = ironclaw_workspace_watch_share();
    let (run, _) = unasked(
        &mut agent,
        &format!(
            "import os\nopen('/workspace/thesis.txt', 'w').write('lost')\n\
             for i in range({}): os.mkdir(f'/workspace/d{{i}}')",
            share + 500
        ),
    )
    .await;
    let folders = std::fs::read_dir(agent.workspace()).expect("ws").count();
    assert!(folders > share, "{folders} folders, share {share}");
    let held = watches_held();
    assert!(
        held <= share,
        "this process holds {held} watches, share {share}"
    );
    let other = nix::sys::inotify::Inotify::init(nix::sys::inotify::InitFlags::IN_CLOEXEC)
        .expect("another program's inotify");
    other
        .add_watch(
            agent.env.paths.checkpoints_dir().as_path(),
            nix::sys::inotify::AddWatchFlags::IN_CREATE,
        )
        .expect("another program still gets a watch");
    agent.undo_run(run).await;
    assert_eq!(read(&agent.workspace().join("thesis.txt")), THESIS);
}

fn ironclaw_workspace_watch_share() -> usize {
    std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .ok()
        .and_then(|t| t.trim().parse::<usize>().ok())
        .unwrap_or(8_192)
        / 8
}

/// Inotify watches this process holds, from the kernel's own account.
fn watches_held() -> usize {
    std::fs::read_dir("/proc/self/fdinfo")
        .expect("fdinfo")
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .map(|t| t.lines().filter(|l| l.starts_with("inotify wd:")).count())
        .sum()
}
