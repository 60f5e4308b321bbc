//! Undoing a run from a conversation: the run's changes come with its end, `Op::UndoRun` puts
//! the files back (and says so in the audit log and the thread), and the model is told with
//! the person's next message.

use ironclaw_protocol::{AgentEvent, ApprovalPolicy, ChangeKind, FileChange, Op};
use ironclaw_tests::agent::*;
use ironclaw_tests::TestEnv;
use pretty_assertions::assert_eq;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undone_run_puts_the_files_back_is_audited_and_the_model_is_told() {
    let env = TestEnv::new().await;
    let mut agent = Agent::start_with(env, Wire::OpenAi, ApprovalPolicy::NeverAsk).await;
    agent.push_all([
        asks_to_run("c1", "shell", "echo original > notes.txt"),
        asks_to_run(
            "c2",
            "shell",
            "echo clobbered > notes.txt; rm -f nothing; echo new > extra.txt",
        ),
        says("done"),
    ]);
    agent.send("write the notes, then overwrite them");
    let events = agent.collect_until_turn_end().await;
    let runs = ended_runs(&events);
    assert_eq!(runs.len(), 2, "{events:?}");
    let (second, changes, not_undoable) = runs[1].clone();
    assert_eq!(not_undoable, None);
    assert_eq!(
        changes,
        [
            FileChange {
                path: "extra.txt".into(),
                change: ChangeKind::Added
            },
            FileChange {
                path: "notes.txt".into(),
                change: ChangeKind::Modified
            },
        ]
    );
    let ws = agent.workspace();
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "clobbered\n"
    );

    // Undo the first run: the second changed the same file, so nothing happens.
    agent.op(Op::UndoRun {
        execution_id: runs[0].0,
        force: false,
    });
    let blocked = agent
        .next_event_matching("UndoBlocked", |e| {
            matches!(e, AgentEvent::UndoBlocked { .. })
        })
        .await;
    assert_eq!(
        blocked,
        AgentEvent::UndoBlocked {
            execution_id: runs[0].0,
            later_runs: vec![second],
            paths: vec!["notes.txt".into()],
        }
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "clobbered\n"
    );

    // Undo the second: the first run's file is back, the new one gone.
    agent.op(Op::UndoRun {
        execution_id: second,
        force: false,
    });
    let undone = agent
        .next_event_matching("RunUndone", |e| matches!(e, AgentEvent::RunUndone { .. }))
        .await;
    let AgentEvent::RunUndone {
        restored,
        also_undone,
        ..
    } = undone
    else {
        unreachable!()
    };
    assert_eq!(restored.len(), 2);
    assert!(also_undone.is_empty());
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "original\n"
    );
    assert!(!ws.join("extra.txt").exists());
    let audited: Vec<String> = agent
        .audit_entries()
        .iter()
        .filter(|e| e.kind.as_str() == "run_undone")
        .map(|e| {
            e.data["execution_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(audited, [second.to_string()]);

    // The model hears of it with the next message.
    agent.push(says("noted"));
    agent.send("what now?");
    agent.turn_done().await;
    let requests = agent.requests();
    let last = requests.last().expect("a request");
    let text = last.body.to_string();
    assert!(
        text.contains("The user undid run #2") && text.contains("notes.txt (modified)"),
        "{text}"
    );

    // And back again.
    agent.op(Op::RedoRun {
        execution_id: second,
    });
    agent
        .next_event_matching("RunRedone", |e| matches!(e, AgentEvent::RunRedone { .. }))
        .await;
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "clobbered\n"
    );
    assert!(ws.join("extra.txt").exists());
}

/// A run whose container is killed mid-way ends in an error, but what it wrote before that is
/// recorded with it (its checkpoint was taken and linked before it started) and Undo takes it
/// back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_mid_way_can_still_be_undone() {
    let mut agent =
        Agent::start_with(TestEnv::new().await, Wire::OpenAi, ApprovalPolicy::NeverAsk).await;
    agent.push_all([
        asks_to_run(
            "c1",
            "python",
            "open('/workspace/half.txt', 'w').write('half done')\nimport time\nprint('started', flush=True)\ntime.sleep(600)",
        ),
        says("it went away"),
    ]);
    agent.send("run it");
    agent
        .next_event_matching(
            "the run's first output",
            |e| matches!(e, AgentEvent::ExecutionOutput { text, .. } if text.contains("started")),
        )
        .await;
    agent.kill_container().await;
    let events = agent.collect_until_turn_end().await;
    let runs = ended_runs(&events);
    assert_eq!(runs.len(), 1, "{}", agent.dump());
    let (execution_id, changes, not_undoable) = runs[0].clone();
    assert_eq!(not_undoable, None, "{}", agent.dump());
    assert_eq!(
        changes,
        [FileChange {
            path: "half.txt".into(),
            change: ChangeKind::Added
        }]
    );
    assert!(
        agent.workspace().join("half.txt").exists(),
        "the run did write it"
    );

    agent.op(Op::UndoRun {
        execution_id,
        force: false,
    });
    agent
        .next_event_matching("RunUndone", |e| matches!(e, AgentEvent::RunUndone { .. }))
        .await;
    assert!(!agent.workspace().join("half.txt").exists());
}

/// Rewinding to the first run undoes every later one, newest first, whether or not it touched
/// the same files; each is its own `RunUndone` (and audited), the answer is `Rewound`, and the
/// model hears of it with the next message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewinding_to_a_run_undoes_every_later_run_and_the_model_is_told() {
    let env = TestEnv::new().await;
    let mut agent = Agent::start_with(env, Wire::OpenAi, ApprovalPolicy::NeverAsk).await;
    agent.push_all([
        asks_to_run("c1", "shell", "echo v1 > report.txt"),
        asks_to_run("c2", "shell", "echo v2 > report.txt"),
        // Touches nothing the first two did: an undo of either would not take it along.
        asks_to_run(
            "c3",
            "python",
            "open('/workspace/plot.svg', 'w').write('<svg/>')",
        ),
        says("done"),
    ]);
    agent.send("write the report twice, then a plot");
    let events = agent.collect_until_turn_end().await;
    let runs = ended_runs(&events);
    assert_eq!(runs.len(), 3, "{}", agent.dump());
    let ws = agent.workspace();
    assert!(ws.join("plot.svg").exists());

    agent.op(Op::RewindTo {
        execution_id: runs[0].0,
    });
    let answer = agent
        .next_event_matching("Rewound", |e| matches!(e, AgentEvent::Rewound { .. }))
        .await;
    assert_eq!(
        answer,
        AgentEvent::Rewound {
            execution_id: runs[0].0,
            undone: vec![runs[2].0, runs[1].0],
        }
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("report.txt")).unwrap(),
        "v1\n"
    );
    assert!(
        !ws.join("plot.svg").exists(),
        "the unrelated later run is undone too"
    );
    let audited: Vec<String> = agent
        .audit_entries()
        .iter()
        .filter(|e| e.kind.as_str() == "run_undone")
        .map(|e| {
            e.data["execution_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(audited, [runs[2].0.to_string(), runs[1].0.to_string()]);

    agent.push(says("noted"));
    agent.send("where are we?");
    agent.turn_done().await;
    let text = agent.requests().last().expect("a request").body.to_string();
    assert!(
        text.contains("The user rewound the workspace to how it was right after run #1"),
        "{text}"
    );

    // Each undone run can be redone on its own.
    agent.op(Op::RedoRun {
        execution_id: runs[2].0,
    });
    agent
        .next_event_matching("RunRedone", |e| matches!(e, AgentEvent::RunRedone { .. }))
        .await;
    assert!(ws.join("plot.svg").exists());
}
