//! Approval decisions that do not belong (extends `agent::approvals`, which covers unknown ids,
//! decided ids and a hash for other code in the same conversation; and `faults::kill9`, which
//! covers ids that expired when IronClaw was killed).

use ironclaw_agent::SessionConfig;
use ironclaw_protocol::{AgentEvent, CodeHash, DecidedBy, Decision, Op};
use ironclaw_store::ApprovalStatus;
use ironclaw_tests::agent::*;
use pretty_assertions::assert_eq;

/// Input: conversation A's pending approval, with its correct hash, decided through the session
/// of conversation B on the same installation; then decided in A with the hash of the same code
/// as B would compute it. Expected: both refused, nothing runs, A's approval stays pending and
/// is then approved normally, running exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_cannot_be_decided_from_another_conversation_or_with_its_hash() {
    let mut a = Agent::start(Wire::OpenAi).await;
    let code = "print('only in a')";
    a.push_all([asks_to_run("call_1", "python", code), says("done")]);
    a.send("go");
    let req = a.approval_request().await;

    let b_conversation = a
        .deps
        .history
        .create_conversation("other", ironclaw_protocol::ApprovalPolicy::AskAlways)
        .expect("second conversation")
        .id;
    let (b, mut b_events) =
        ironclaw_agent::start(a.deps.clone(), b_conversation, SessionConfig::default())
            .expect("second session");
    b.send(Op::Decide {
        approval_id: req.approval_id,
        code_hash: req.code_hash,
        decision: Decision::ApproveOnce,
        decided_by: DecidedBy::UserDialog,
        confirmed: true,
    })
    .expect("send");
    let rejected = tokio::time::timeout(EVENT_GUARD, async {
        loop {
            match b_events.recv().await {
                Some(AgentEvent::DecisionRejected { approval_id, .. }) => return approval_id,
                Some(AgentEvent::ExecutionStarted { code, .. }) => {
                    panic!("B ran A's code: {code}")
                }
                Some(_) => {}
                None => panic!("session B ended"),
            }
        }
    })
    .await
    .expect("B must refuse the decision");
    assert_eq!(rejected, req.approval_id);

    let b_hash = CodeHash::of(b_conversation, ironclaw_protocol::Language::Python, code);
    assert_ne!(b_hash, req.code_hash, "the hash binds the conversation");
    a.decide_raw(req.approval_id, b_hash, Decision::ApproveOnce, true);
    let (id, _, still_pending) = a.decision_rejected().await;
    assert_eq!((id, still_pending), (req.approval_id, true));
    assert!(started_code(&a.seen).is_empty(), "{}", a.dump());
    assert_eq!(
        a.deps
            .history
            .get_approval(req.approval_id)
            .expect("approval")
            .status,
        ApprovalStatus::Pending
    );

    a.approve(&req);
    a.turn_done().await;
    assert_eq!(started_code(&a.seen), [code]);
    drop(b);
}
