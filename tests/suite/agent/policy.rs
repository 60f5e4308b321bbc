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
