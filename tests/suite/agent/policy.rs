//! Session approval policies: what runs without asking, and how that is shown.

use ironclaw_protocol::DecisionScope;
use ironclaw_protocol::{AgentEvent, ApprovalPolicy, DecidedBy, RiskLevel};
use ironclaw_tests::agent::*;
use pretty_assertions::assert_eq;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_unless_safe_runs_read_only_code_unasked_but_asks_for_a_write() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    let write = "open('/workspace/w.txt', 'w').write('w')";
    agent.push_all([
        asks_to_run("call_1", "python", "print(1)"),
        asks_to_run("call_2", "python", write),
        says("done"),
    ]);
    agent.set_policy(ApprovalPolicy::AskUnlessSafe);
    let changed = agent
        .next_event_matching("PolicyChanged", |e| {
            matches!(e, AgentEvent::PolicyChanged { .. })
        })
        .await;
    assert_eq!(
        changed,
        AgentEvent::PolicyChanged {
            policy: ApprovalPolicy::AskUnlessSafe,
            flagged: false
        }
    );
    agent.send("go");

    let req = agent.approval_request().await;
    assert_eq!(req.code, write, "only the write is asked about");
    assert_eq!(
        started_code(&agent.seen),
        ["print(1)"],
        "the read-only code already ran"
    );
    assert!(agent.seen.iter().any(|e| matches!(
        e,
        AgentEvent::ApprovalResolved {
            approved: true,
            auto: true,
            decided_by: DecidedBy::Policy,
            ..
        }
    )));
    agent.approve(&req);
    agent.turn_done().await;
    assert_eq!(started_code(&agent.seen), ["print(1)", write]);
    assert_eq!(approval_requests(&agent.seen).len(), 1);
    assert_eq!(
        std::fs::read_to_string(agent.workspace().join("w.txt")).expect("w.txt"),
        "w"
    );

    assert!(agent.tool_results_in(1)[0].starts_with("This run was approved automatically"));
    let history = agent.history();
    assert_eq!(
        history.conversation.approval_policy,
        ApprovalPolicy::AskUnlessSafe
    );
    let first = history
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.clone())
        .next()
        .expect("first call");
    let approval = &first.approvals[0].approval;
    assert_eq!(approval.risk, RiskLevel::ReadOnly);
    assert_eq!(approval.decided_by, Some(DecidedBy::Policy));
    assert_eq!(approval.scope, Some(DecisionScope::PolicyAuto));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn never_ask_runs_writes_unasked_and_is_flagged() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    let write = "open('/workspace/n.txt', 'w').write('unasked')";
    agent.push_all([asks_to_run("call_1", "python", write), says("done")]);
    agent.set_policy(ApprovalPolicy::NeverAsk);
    let changed = agent
        .next_event_matching("PolicyChanged", |e| {
            matches!(e, AgentEvent::PolicyChanged { .. })
        })
        .await;
    assert_eq!(
        changed,
        AgentEvent::PolicyChanged {
            policy: ApprovalPolicy::NeverAsk,
            flagged: true
        }
    );
    agent.send("go");
    let turn = agent.collect_until_turn_end().await;

    assert!(approval_requests(&turn).is_empty(), "{}", agent.dump());
    assert_eq!(started_code(&turn), [write]);
    assert!(matches!(
        turn.last(),
        Some(AgentEvent::TurnEnded {
            status: ironclaw_protocol::TurnOutcome::Done,
            ..
        })
    ));
    assert_eq!(
        std::fs::read_to_string(agent.workspace().join("n.txt")).expect("n.txt"),
        "unasked"
    );
    // Opting in is on the record.
    assert!(agent
        .audit_entries()
        .iter()
        .any(|e| e.kind.as_str() == "policy_changed" && e.data["policy"] == "never_ask"));
}

/// Under ask-unless-undoable a write runs unasked (its checkpoint taken first, its changes
/// recorded), destructive code is still asked with its confirmation, and once a run leaves a
/// thread running (it could write later, outside any run's checkpoint) the next run is asked,
/// saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_unless_undoable_runs_undoable_code_unasked_and_says_why_it_asks_otherwise() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    let thread = "import threading, time\nthreading.Thread(target=time.sleep, args=(600,), daemon=True).start()";
    agent.push_all([
        asks_to_run("c1", "shell", "echo draft > notes.txt"),
        asks_to_run("c2", "shell", "rm -rf notes.txt"),
        asks_to_run("c3", "python", thread),
        asks_to_run("c4", "shell", "echo after > after.txt"),
        says("done"),
    ]);
    agent.set_policy(ApprovalPolicy::AskUnlessUndoable);
    agent
        .next_event_matching("PolicyChanged", |e| {
            matches!(e, AgentEvent::PolicyChanged { flagged: false, .. })
        })
        .await;
    agent.send("go");

    let destructive = agent.approval_request().await;
    assert_eq!(destructive.code, "rm -rf notes.txt", "{}", agent.dump());
    assert_eq!(
        started_code(&agent.seen),
        ["echo draft > notes.txt"],
        "the write ran unasked"
    );
    let because = destructive.asked_because.clone().expect("why it asked");
    assert!(because.contains("destructive"), "{because}");
    assert!(destructive
        .choices
        .iter()
        .all(|c| c.kind != ironclaw_protocol::DecisionKind::AlwaysAllowInSession));
    agent.decide(&destructive, ironclaw_protocol::Decision::ApproveOnce, true);

    let after_thread = agent.approval_request().await;
    assert_eq!(after_thread.code, "echo after > after.txt");
    assert_eq!(
        started_code(&agent.seen),
        ["echo draft > notes.txt", "rm -rf notes.txt", thread],
        "the thread-starting run itself could be undone, so it ran unasked"
    );
    let because = after_thread.asked_because.clone().expect("why it asked");
    assert!(
        because.contains("run #3 left") && because.contains("thread"),
        "{because}"
    );
    agent.deny(&after_thread, "not now");
    agent.turn_done().await;

    let auto: Vec<bool> = agent
        .seen
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ApprovalResolved { auto, .. } => Some(*auto),
            _ => None,
        })
        .collect();
    assert_eq!(auto, [true, false, true, false], "{}", agent.dump());
    let runs = ended_runs(&agent.seen);
    assert_eq!(runs.len(), 3);
    assert_eq!(
        runs[0].1,
        [ironclaw_protocol::FileChange {
            path: "notes.txt".into(),
            change: ironclaw_protocol::ChangeKind::Added
        }]
    );
    assert!(runs.iter().all(|r| r.2.is_none()), "all undoable: {runs:?}");
    assert!(!agent.workspace().join("after.txt").exists());
}

/// A run that turns out bigger than the undo cap is reported as not undoable (never hidden),
/// and from then on the workspace cannot be checkpointed within the cap, so the next run is
/// asked with that reason instead of running unasked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_unless_undoable_asks_once_the_workspace_cannot_be_checkpointed() {
    let env = ironclaw_tests::TestEnv::new().await;
    std::fs::write(env.paths.user_policy_file(), "undo: { keep: 16k }\n").expect("sandbox.yaml");
    let mut agent = Agent::start_with(env, Wire::OpenAi, ApprovalPolicy::AskUnlessUndoable).await;
    agent.push_all([
        asks_to_run("c1", "shell", "head -c 65536 /dev/zero > big.bin"),
        asks_to_run("c2", "shell", "echo small > small.txt"),
        says("done"),
    ]);
    agent.send("go");
    let req = agent.approval_request().await;
    assert_eq!(req.code, "echo small > small.txt", "{}", agent.dump());
    let runs = ended_runs(&agent.seen);
    assert_eq!(runs.len(), 1, "the big write ran unasked");
    // Let through as undoable, it stays undoable: its changes could not be recorded within
    // the cap, but it is linked to the state before it, and never reported as "no changes".
    assert_eq!(runs[0].2, None, "{}", agent.dump());
    let unrecorded = unrecorded_runs(&agent.seen);
    assert_eq!(unrecorded.len(), 1, "{}", agent.dump());
    assert!(unrecorded[0].1.contains("cap"), "{}", unrecorded[0].1);
    assert!(agent.workspace().join("big.bin").exists());
    let because = req.asked_because.clone().expect("why it asked");
    assert!(
        because.contains("could not be checkpointed") && because.contains("cap"),
        "{because}"
    );
    agent.deny(&req, "no");
    agent.turn_done().await;
    assert!(!agent.workspace().join("small.txt").exists());
    // Undo puts it back as it was before it, though no scan could record it.
    agent.undo_run(runs[0].0).await;
    assert!(!agent.workspace().join("big.bin").exists());
}

/// A shared writable mapping kept by the interpreter after its run can change a file with no
/// event and no change-time update: no later run can be proven undoable while it is held, so
/// `ask_unless_undoable` asks, naming the file; a fresh interpreter lets go of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_unless_undoable_asks_while_the_interpreter_keeps_a_file_mapped_for_writing() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    let map = "import mmap\nopen('/workspace/data.bin', 'wb').write(bytes(4096))\n\
               f = open('/workspace/data.bin', 'r+b')\nm = mmap.mmap(f.fileno(), 0)\nf.close()\nm[0] = 1\nprint('mapped')";
    agent.push_all([
        asks_to_run("c1", "python", map),
        asks_to_run("c2", "shell", "echo later > later.txt"),
        says("done"),
    ]);
    agent.set_policy(ApprovalPolicy::AskUnlessUndoable);
    agent
        .next_event_matching("PolicyChanged", |e| {
            matches!(e, AgentEvent::PolicyChanged { flagged: false, .. })
        })
        .await;
    agent.send("go");

    let asked = agent.approval_request().await;
    assert_eq!(asked.code, "echo later > later.txt", "{}", agent.dump());
    assert_eq!(
        started_code(&agent.seen),
        [map],
        "the run that made the mapping could itself be undone, so it ran unasked"
    );
    let because = asked.asked_because.clone().expect("why it asked");
    assert!(
        because.contains("data.bin") && because.contains("open for writing"),
        "{because}"
    );
    agent.deny(&asked, "not now");
    agent.turn_done().await;
}

/// The same hold with no descriptor and no mapping in any process: a descriptor open for
/// writing, sent over a socket the interpreter keeps and never received. A later run can
/// receive and map it, so it holds the file as much as a mapping does. The host's lease sees
/// the open file description under runc; under gVisor, where the sandbox is asked, no process
/// shows it, and the socket is what makes that answer unknowable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_unless_undoable_asks_while_a_descriptor_for_writing_is_in_flight() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    let send = "import os, socket\nopen('/workspace/flight.bin', 'wb').write(bytes(4096))\n\
                a, b = socket.socketpair()\nfd = os.open('/workspace/flight.bin', os.O_RDWR)\n\
                socket.send_fds(a, [b'x'], [fd])\nos.close(fd)\n\
                held = []\nfor n in os.listdir('/proc/self/fd'):\n    try:\n        held.append(os.readlink('/proc/self/fd/' + n))\n    except OSError:\n        pass\n\
                print('in flight:', held.count('/workspace/flight.bin'))";
    agent.push_all([
        asks_to_run("c1", "python", send),
        asks_to_run("c2", "shell", "echo later > later.txt"),
        says("done"),
    ]);
    agent.set_policy(ApprovalPolicy::AskUnlessUndoable);
    agent
        .next_event_matching("PolicyChanged", |e| {
            matches!(e, AgentEvent::PolicyChanged { flagged: false, .. })
        })
        .await;
    agent.send("go");

    let asked = agent.approval_request().await;
    assert_eq!(asked.code, "echo later > later.txt", "{}", agent.dump());
    // The attack ran: sent, and no descriptor of the file left in the interpreter.
    let out = ironclaw_tests::agent::stdout_of(&agent.seen);
    assert!(out.contains("in flight: 0"), "{}", agent.dump());
    let because = asked.asked_because.clone().expect("why it asked");
    assert!(
        because.contains("flight.bin") && because.contains("open for writing"),
        "{because}"
    );
    agent.deny(&asked, "not now");
    agent.turn_done().await;
}

/// Rated by what it does: `echo one > first.txt` in an empty workspace makes a new file and is
/// not called destructive; the same write once the file is there replaces it, and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_to_a_new_name_is_not_destructive_and_over_an_existing_file_it_is() {
    let env = ironclaw_tests::TestEnv::new().await;
    let mut agent = Agent::start_with(env, Wire::OpenAi, ApprovalPolicy::AskAlways).await;
    agent.push_all([
        asks_to_run("c1", "shell", "echo one > first.txt"),
        asks_to_run("c2", "shell", "echo one > first.txt"),
        says("done"),
    ]);
    agent.send("go");
    let first = agent.approval_request().await;
    assert_eq!(
        first.risk,
        ironclaw_protocol::RiskLevel::Normal,
        "{first:?}"
    );
    assert!(
        first
            .reasons
            .iter()
            .any(|r| r.message.starts_with("makes a new file (first.txt)")),
        "{first:?}"
    );
    agent.approve(&first);
    let second = agent.approval_request().await;
    assert!(
        agent.workspace().join("first.txt").exists(),
        "the first write ran"
    );
    assert_eq!(
        second.risk,
        ironclaw_protocol::RiskLevel::Destructive,
        "{second:?}"
    );
    assert!(
        second
            .reasons
            .iter()
            .any(|r| r.message.starts_with("replaces the contents of a file")),
        "{second:?}"
    );
    agent.deny(&second, "no");
    agent.turn_done().await;
}
