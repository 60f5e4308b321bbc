//! The approval gate: only a decision naming the pending approval's id *and* code hash runs
//! code, and exactly the approved code runs.

use ironclaw_protocol::{
    AgentEvent, ApprovalId, CodeHash, DecidedBy, Decision, DecisionScope, RiskLevel,
};
use ironclaw_store::ApprovalStatus;
use ironclaw_tests::agent::*;
use pretty_assertions::assert_eq;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_runs_exactly_the_requested_code_and_tells_the_model() {
    let mut agent = Agent::start(Wire::Anthropic).await;
    let code = "print('exact', 6 * 7)";
    agent.push_all([
        asks_to_run("toolu_1", "python", code),
        says("It printed 42."),
    ]);
    agent.send("print something");

    let req = agent.approval_request().await;
    assert_eq!(req.code, code);
    // The request is bound to this conversation, language and code, byte for byte.
    assert_eq!(
        req.code_hash,
        ironclaw_protocol::CodeHash::of(
            agent.conversation,
            ironclaw_protocol::Language::Python,
            code
        )
    );
    agent.approve(&req);
    agent.turn_done().await;
    let events = agent.seen.clone();

    let resolved: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ApprovalResolved {
                approval_id,
                approved,
                decided_by,
                auto,
                ..
            } => Some((*approval_id, *approved, *decided_by, *auto)),
            _ => None,
        })
        .collect();
    assert_eq!(
        resolved,
        [(req.approval_id, true, DecidedBy::UserDialog, false)]
    );
    let started: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ExecutionStarted {
                approval_id, code, ..
            } => Some((*approval_id, code.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(started, [(req.approval_id, code.to_string())]);
    assert_eq!(stdout_of(&events), "exact 42\n");

    let results = agent.tool_results_in(1);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].starts_with("The user approved this run."),
        "{results:?}"
    );
    assert!(results[0].contains("exact 42"), "{results:?}");

    let approval = agent
        .deps
        .history
        .get_approval(req.approval_id)
        .expect("approval");
    assert_eq!(approval.status, ApprovalStatus::Approved);
    assert_eq!(approval.decided_by, Some(DecidedBy::UserDialog));
    assert_eq!(approval.scope, Some(DecisionScope::Once));
    assert_eq!(approval.code, code);
    assert!(!approval.user_edited);
    let entry = agent
        .history()
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.clone())
        .next()
        .expect("tool call");
    let run = entry.approvals[0]
        .execution
        .clone()
        .expect("the approved code ran");
    assert_eq!((run.code.as_str(), run.exit_code), (code, Some(0)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denying_runs_nothing_and_tells_the_model_the_reason() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    let code = "open('/workspace/denied.txt', 'w').write('should never exist')";
    agent.push_all([
        asks_to_run("call_1", "python", code),
        says("Understood, I won't."),
    ]);
    agent.send("write a file");

    let req = agent.approval_request().await;
    assert_eq!(
        req.risk,
        RiskLevel::Normal,
        "a write is not read-only: {req:?}"
    );
    agent.deny(&req, "not on my machine");
    agent.turn_done().await;
    let events = agent.seen.clone();

    assert!(
        started_code(&events).is_empty(),
        "nothing may run:\n{}",
        agent.dump()
    );
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::ApprovalResolved { approved: false, reason: Some(r), .. } if r == "not on my machine")));
    let results = agent.tool_results_in(1);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].contains("The user DENIED this run; it did not execute."),
        "{results:?}"
    );
    assert!(
        results[0].contains("Their reason: not on my machine"),
        "{results:?}"
    );

    // Proof nothing ran: no container was ever made, and the file is nowhere on the host.
    assert!(!agent.has_container().await);
    assert_eq!(
        find_files_named(agent.env.root(), "denied.txt"),
        Vec::<std::path::PathBuf>::new()
    );
    let approval = agent
        .deps
        .history
        .get_approval(req.approval_id)
        .expect("approval");
    assert_eq!(approval.status, ApprovalStatus::Denied);
    assert_eq!(approval.reason.as_deref(), Some("not on my machine"));
    let entry = agent
        .history()
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.clone())
        .next()
        .expect("tool call");
    assert_eq!(entry.approvals[0].execution, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edited_code_runs_instead_of_the_proposal_and_is_recorded_as_edited() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    let proposed = "open('/workspace/original.txt', 'w').write('model')";
    let edited = "open('/workspace/edited.txt', 'w').write('person')";
    agent.push_all([asks_to_run("call_1", "python", proposed), says("Done.")]);
    agent.send("write a file");

    let req = agent.approval_request().await;
    agent.edit(&req, edited);
    agent.turn_done().await;
    let events = agent.seen.clone();

    assert_eq!(started_code(&events), [edited]);
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::ApprovalResolved {
            approved: true,
            user_edited: true,
            ..
        }
    )));
    let workspace = agent.workspace();
    assert_eq!(
        std::fs::read_to_string(workspace.join("edited.txt")).expect("edited.txt"),
        "person"
    );
    assert!(
        !workspace.join("original.txt").exists(),
        "the model's version must not run"
    );

    let approval = agent
        .deps
        .history
        .get_approval(req.approval_id)
        .expect("approval");
    assert_eq!(approval.status, ApprovalStatus::Approved);
    assert!(approval.user_edited);
    assert_eq!(approval.code, edited);
    assert_eq!(approval.original_hash, Some(req.code_hash));
    assert_eq!(
        approval.code_hash,
        ironclaw_protocol::CodeHash::of(
            agent.conversation,
            ironclaw_protocol::Language::Python,
            edited
        )
    );
    let results = agent.tool_results_in(1);
    assert!(
        results[0].starts_with("The user edited your code and approved the edited version."),
        "{results:?}"
    );
    assert!(
        results[0].contains(edited),
        "the model is told what ran: {results:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_allow_runs_the_same_code_unasked_in_a_later_turn_but_still_asks_for_other_code() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    let same = "print('same')";
    agent.push_all([
        asks_to_run("call_1", "python", same),
        says("First done."),
        asks_to_run("call_2", "python", same),
        asks_to_run("call_3", "python", "print('different')"),
        says("Second done."),
    ]);
    agent.send("run it");
    let req = agent.approval_request().await;
    agent.always(&req);
    agent.turn_done().await;

    agent.send("run it again");
    let before_question = agent.seen.len();
    let other = agent.approval_request().await;
    assert_eq!(other.code, "print('different')");
    let second_turn_so_far = agent.seen[before_question..].to_vec();
    assert!(
        approval_requests(&second_turn_so_far).len() == 1,
        "only the different code is asked about:\n{}",
        agent.dump()
    );
    assert_eq!(started_code(&second_turn_so_far), [same]);
    assert!(second_turn_so_far.iter().any(|e| matches!(
        e,
        AgentEvent::ApprovalResolved {
            approved: true,
            auto: true,
            decided_by: DecidedBy::Policy,
            user_edited: false,
            ..
        }
    )));
    agent.approve(&other);
    agent.turn_done().await;
    assert_eq!(stdout_of(&agent.seen), "same\nsame\ndifferent\n");

    let results = agent.tool_results_in(3);
    assert!(
        results[1].starts_with("This run was approved automatically"),
        "{results:?}"
    );
    let rules = agent
        .deps
        .history
        .list_session_rules(agent.conversation, false)
        .expect("rules");
    assert_eq!(rules.len(), 1, "{rules:?}");
    assert_eq!(rules[0].pattern, req.code_hash.to_hex());
    let auto = agent
        .history()
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.clone())
        .find(|c| c.tool_call.model_call_id == "call_2")
        .expect("second call");
    let approval = &auto.approvals[0].approval;
    assert_eq!(approval.decided_by, Some(DecidedBy::Policy));
    assert_eq!(approval.scope, Some(DecisionScope::SessionRule));
    assert!(auto.approvals[0].execution.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_for_different_code_is_rejected_and_the_approval_stays_pending() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push_all([
        asks_to_run("call_1", "python", "print('bound')"),
        says("ok"),
    ]);
    agent.send("go");
    let req = agent.approval_request().await;

    let other = CodeHash::of(
        agent.conversation,
        ironclaw_protocol::Language::Python,
        "print('other')",
    );
    agent.decide_raw(req.approval_id, other, Decision::ApproveOnce, true);
    let (id, message, still_pending) = agent.decision_rejected().await;
    assert_eq!(id, req.approval_id);
    assert!(still_pending);
    assert!(message.contains("different code"), "{message}");
    assert!(started_code(&agent.seen).is_empty(), "{}", agent.dump());
    let approval = agent
        .deps
        .history
        .get_approval(req.approval_id)
        .expect("approval");
    assert_eq!(approval.status, ApprovalStatus::Pending);

    agent.approve(&req);
    agent.turn_done().await;
    assert_eq!(started_code(&agent.seen), ["print('bound')"]);
    assert_eq!(stdout_of(&agent.seen), "bound\n");
    let resolved = agent
        .seen
        .iter()
        .filter(|e| matches!(e, AgentEvent::ApprovalResolved { .. }))
        .count();
    assert_eq!(resolved, 1);
    // The refusal is on the record too.
    assert!(agent
        .audit_entries()
        .iter()
        .any(|e| e.kind.as_str() == "decision"
            && e.data["rejected"] == true
            && e.data["presented_hash"] == other.to_hex()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_already_decided_approval_ids_are_rejected() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    let never = ApprovalId::new();
    let hash = CodeHash::of(
        agent.conversation,
        ironclaw_protocol::Language::Python,
        "print(1)",
    );
    agent.decide_raw(never, hash, Decision::ApproveOnce, true);
    let (id, _, still_pending) = agent.decision_rejected().await;
    assert_eq!((id, still_pending), (never, false));

    let code = "open('/workspace/stale.txt', 'w').write('x')";
    agent.push_all([asks_to_run("call_1", "python", code), says("ok")]);
    agent.send("go");
    let req = agent.approval_request().await;
    agent.deny(&req, "no");
    agent.turn_done().await;

    // The same, correct id and hash, once the approval was decided: stale.
    agent.decide(&req, Decision::ApproveOnce, true);
    let (id, message, still_pending) = agent.decision_rejected().await;
    assert_eq!((id, still_pending), (req.approval_id, false));
    assert!(message.contains("nothing was run"), "{message}");
    assert!(started_code(&agent.seen).is_empty(), "{}", agent.dump());
    assert_eq!(
        agent
            .deps
            .history
            .get_approval(req.approval_id)
            .expect("approval")
            .status,
        ApprovalStatus::Denied
    );
    assert!(!agent.has_container().await);
    assert!(find_files_named(agent.env.root(), "stale.txt").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destructive_code_runs_only_after_the_second_confirmation() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    let setup = "mkdir -p /workspace/x && touch /workspace/x/keep";
    let destroy = "rm -rf /workspace/x";
    agent.push_all([
        asks_to_run("call_1", "shell", setup),
        asks_to_run("call_2", "shell", destroy),
        says("Removed."),
    ]);
    agent.send("clean up x");
    let req = agent.approval_request().await;
    assert!(!req.destructive, "{req:?}");
    agent.approve(&req);

    let req = agent.approval_request().await;
    assert_eq!(req.code, destroy);
    assert!(req.destructive, "{req:?}");
    assert_eq!(req.risk, RiskLevel::Destructive);
    let keep = agent.workspace().join("x/keep");
    assert!(keep.exists(), "the setup ran");

    agent.decide(&req, Decision::ApproveOnce, false);
    let (id, message, still_pending) = agent.decision_rejected().await;
    assert_eq!(id, req.approval_id);
    assert!(still_pending);
    assert!(message.contains("second confirmation"), "{message}");
    assert_eq!(started_code(&agent.seen), [setup]);
    assert!(keep.exists(), "nothing ran without the confirmation");

    agent.decide(&req, Decision::ApproveOnce, true);
    agent.turn_done().await;
    assert_eq!(started_code(&agent.seen), [setup, destroy]);
    assert!(
        !agent.workspace().join("x").exists(),
        "the confirmed code ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destructive_code_is_never_always_allowed_even_with_the_confirmation() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    let setup = "mkdir -p /workspace/y && touch /workspace/y/keep";
    let destroy = "rm -rf /workspace/y";
    agent.push_all([
        asks_to_run("call_1", "shell", setup),
        asks_to_run("call_2", "shell", destroy),
        says("Removed."),
        asks_to_run("call_3", "shell", destroy),
        says("Asked again."),
    ]);
    agent.send("clean up y");
    let req = agent.approval_request().await;
    agent.approve(&req);
    let req = agent.approval_request().await;
    assert!(req.destructive, "{req:?}");
    let keep = agent.workspace().join("y/keep");
    assert!(keep.exists(), "the setup ran");

    // The rule is asked for with the second confirmation given: the gate refuses it, says
    // why, and the request stays pending with nothing run.
    agent.decide(&req, Decision::AlwaysAllowInSession, true);
    let (id, message, still_pending) = agent.decision_rejected().await;
    assert_eq!(id, req.approval_id);
    assert!(still_pending);
    assert!(message.contains("cannot be always allowed"), "{message}");
    assert_eq!(started_code(&agent.seen), [setup]);
    assert!(keep.exists(), "nothing ran on the refused decision");
    let rules = agent
        .deps
        .history
        .list_session_rules(agent.conversation, false)
        .expect("rules");
    assert!(rules.is_empty(), "no rule was saved: {rules:?}");

    // Approved once, it runs; the same deletion asked for again is asked about again.
    agent.decide(&req, Decision::ApproveOnce, true);
    agent.turn_done().await;
    assert!(!keep.exists(), "the approved run happened");
    agent.send("and again");
    let again = agent.approval_request().await;
    assert_eq!(again.code, destroy);
    agent.deny(&again, "once was enough");
    agent.turn_done().await;
    assert_eq!(started_code(&agent.seen), [setup, destroy]);
}
