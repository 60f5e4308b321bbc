#![allow(clippy::unwrap_used)]

use super::*;
use ironclaw_protocol::ApprovalId;

/// The conversation every toy gate belongs to.
fn s1() -> ConversationId {
    static S1: std::sync::LazyLock<ConversationId> = std::sync::LazyLock::new(ConversationId::new);
    *S1
}
use ironclaw_protocol::DecisionScope;
use pretty_assertions::assert_eq;

/// Read-only: code containing "print" only. Destructive: code containing "rm ".
struct Toy;

impl Classifier for Toy {
    fn is_read_only(&self, _: Language, code: &str) -> bool {
        code.starts_with("print")
    }
    fn is_destructive(&self, _: Language, code: &str) -> bool {
        code.contains("rm ") || code.contains('>')
    }
    fn destructive_beyond_undo(&self, _: Language, code: &str) -> Option<String> {
        code.contains("rm ").then(|| "deletes files".into())
    }
}

fn gate(policy: ApprovalPolicy) -> Gate {
    Gate::new(s1(), policy, Arc::new(Toy))
}

#[test]
fn default_policy_asks_for_everything() {
    let g = gate(ApprovalPolicy::default());
    assert_eq!(g.check(Language::Python, "print(1)"), Triage::Ask);
    assert!(g.auto_ticket(Language::Python, "print(1)", false).is_none());
}

#[test]
fn the_gate_hashes_its_own_conversation_language_and_exact_code() {
    let mut g = gate(ApprovalPolicy::AskAlways);
    let p = g.request(ApprovalId::new(), Language::Python, "print(1)");
    assert_eq!(p.hash, CodeHash::of(s1(), Language::Python, "print(1)"));
    assert_ne!(
        p.hash,
        CodeHash::of(ConversationId::new(), Language::Python, "print(1)")
    );
    assert_ne!(p.hash, CodeHash::of(s1(), Language::Shell, "print(1)"));
}

#[test]
fn approval_for_other_code_hash_is_rejected_and_stays_pending() {
    let mut g = gate(ApprovalPolicy::AskAlways);
    let p = g.request(ApprovalId::new(), Language::Python, "print(1)");
    let other = CodeHash::of(s1(), Language::Python, "print(2)");
    let err = g
        .decide(
            p.id,
            &other,
            Decision::ApproveOnce,
            DecidedBy::UserDialog,
            false,
        )
        .unwrap_err();
    assert_eq!(
        err,
        GateError::HashMismatch {
            expected: p.hash,
            got: other
        }
    );
    assert_eq!(g.pending().count(), 1, "still pending after a bad decision");
}

#[test]
fn approve_once_yields_a_ticket_for_exactly_the_requested_code() {
    let mut g = gate(ApprovalPolicy::AskAlways);
    let p = g.request(ApprovalId::new(), Language::Shell, "ls -la");
    let r = g
        .decide(
            p.id,
            &p.hash,
            Decision::ApproveOnce,
            DecidedBy::UserDialog,
            false,
        )
        .unwrap();
    let Resolution::Run(t) = r else {
        panic!("expected a ticket")
    };
    assert_eq!(
        (t.code.as_str(), t.hash, t.user_edited, t.scope),
        ("ls -la", p.hash, false, DecisionScope::Once)
    );
    assert_eq!(
        g.check(Language::Shell, "ls -la"),
        Triage::Ask,
        "once means once"
    );
}

#[test]
fn a_decided_approval_cannot_be_decided_again() {
    let mut g = gate(ApprovalPolicy::AskAlways);
    let p = g.request(ApprovalId::new(), Language::Shell, "ls");
    g.decide(
        p.id,
        &p.hash,
        Decision::ApproveOnce,
        DecidedBy::UserDialog,
        false,
    )
    .unwrap();
    let again = g.decide(
        p.id,
        &p.hash,
        Decision::ApproveOnce,
        DecidedBy::Notification,
        false,
    );
    assert_eq!(
        again,
        Err(GateError::UnknownApproval(p.id)),
        "a stale notification does nothing"
    );
}

#[test]
fn deny_carries_the_reason_and_runs_nothing() {
    let mut g = gate(ApprovalPolicy::AskAlways);
    let p = g.request(ApprovalId::new(), Language::Shell, "ls");
    let r = g
        .decide(
            p.id,
            &p.hash,
            Decision::Deny {
                reason: Some("not now".into()),
            },
            DecidedBy::UserDialog,
            false,
        )
        .unwrap();
    assert_eq!(
        r,
        Resolution::Denied {
            approval_id: p.id,
            reason: Some("not now".into())
        }
    );
    assert_eq!(g.pending().count(), 0);
}

#[test]
fn edited_code_gets_its_own_hash_and_is_marked_user_edited() {
    let mut g = gate(ApprovalPolicy::AskAlways);
    let p = g.request(ApprovalId::new(), Language::Python, "print(1)");
    let r = g
        .decide(
            p.id,
            &p.hash,
            Decision::EditAndApprove {
                code: "print(2)".into(),
            },
            DecidedBy::UserDialog,
            false,
        )
        .unwrap();
    let Resolution::Run(t) = r else { panic!() };
    assert_eq!(t.code, "print(2)");
    assert!(t.user_edited);
    assert_eq!(t.hash, CodeHash::of(s1(), Language::Python, "print(2)"));
    assert_eq!(t.requested_hash, p.hash);
}

#[test]
fn destructive_code_needs_the_second_confirmation() {
    let mut g = gate(ApprovalPolicy::AskAlways);
    let p = g.request(ApprovalId::new(), Language::Shell, "rm -rf build");
    assert!(p.destructive);
    let first = g.decide(
        p.id,
        &p.hash,
        Decision::ApproveOnce,
        DecidedBy::UserDialog,
        false,
    );
    assert_eq!(first, Err(GateError::NeedsConfirmation));
    let second = g
        .decide(
            p.id,
            &p.hash,
            Decision::ApproveOnce,
            DecidedBy::UserDialog,
            true,
        )
        .unwrap();
    assert!(matches!(second, Resolution::Run(_)));
}

#[test]
fn an_edit_that_becomes_destructive_needs_confirmation_too() {
    let mut g = gate(ApprovalPolicy::AskAlways);
    let p = g.request(ApprovalId::new(), Language::Shell, "ls");
    let edit = Decision::EditAndApprove {
        code: "rm -rf /workspace".into(),
    };
    assert_eq!(
        g.decide(p.id, &p.hash, edit, DecidedBy::UserDialog, false),
        Err(GateError::NeedsConfirmation)
    );
}

#[test]
fn always_allow_saves_a_revocable_rule_for_that_exact_code_only() {
    let mut g = gate(ApprovalPolicy::AskAlways);
    let p = g.request(ApprovalId::new(), Language::Shell, "make test");
    g.decide(
        p.id,
        &p.hash,
        Decision::AlwaysAllowInSession,
        DecidedBy::UserDialog,
        false,
    )
    .unwrap();
    assert!(matches!(
        g.check(Language::Shell, "make test"),
        Triage::AutoApproved { .. }
    ));
    assert_eq!(
        g.auto_ticket(Language::Shell, "make test", false)
            .unwrap()
            .scope,
        DecisionScope::SessionRule
    );
    assert_eq!(g.check(Language::Shell, "make test2"), Triage::Ask);
    assert_eq!(g.check(Language::Python, "make test"), Triage::Ask);
    assert!(g.revoke_rule(&p.hash));
    assert_eq!(g.check(Language::Shell, "make test"), Triage::Ask);
}

#[test]
fn always_allowing_an_mcp_call_covers_its_tool_as_defined_then_and_nothing_else() {
    let mut g = gate(ApprovalPolicy::AskAlways);
    let tokyo = "mcp time/now (definition aaaa)\n{\"tz\": \"Asia/Tokyo\"}";
    let p = g.request(ApprovalId::new(), Language::Mcp, tokyo);
    g.decide(
        p.id,
        &p.hash,
        Decision::AlwaysAllowInSession,
        DecidedBy::UserDialog,
        false,
    )
    .unwrap();
    // The same tool with other arguments: covered.
    let paris = "mcp time/now (definition aaaa)\n{\"tz\": \"Europe/Paris\"}";
    assert_eq!(
        g.auto_ticket(Language::Mcp, paris, false).unwrap().scope,
        DecisionScope::SessionRule
    );
    // Its definition changed, another tool, another server, a shell line spelled the same,
    // or arguments the classifier finds destructive: asked about.
    for other in [
        "mcp time/now (definition bbbb)\n{}",
        "mcp time/convert (definition aaaa)\n{}",
        "mcp clock/now (definition aaaa)\n{}",
        "mcp time/now (definition aaaa)\n{\"cmd\": \"rm -rf /\"}",
    ] {
        assert_eq!(g.check(Language::Mcp, other), Triage::Ask, "{other}");
    }
    assert_eq!(
        g.check(Language::Shell, "mcp time/now (definition aaaa)\n{}"),
        Triage::Ask
    );
    assert!(g.revoke_rule(&p.hash));
    assert_eq!(g.check(Language::Mcp, paris), Triage::Ask);
}

#[test]
fn ask_unless_safe_auto_approves_only_read_only_code() {
    let g = gate(ApprovalPolicy::AskUnlessSafe);
    assert!(matches!(
        g.check(Language::Python, "print(1)"),
        Triage::AutoApproved { .. }
    ));
    assert_eq!(g.check(Language::Python, "open('x','w')"), Triage::Ask);
}

#[test]
fn ask_unless_undoable_runs_writes_only_when_proven_undoable_and_asks_for_destructive_code() {
    let mut g = gate(ApprovalPolicy::AskUnlessUndoable);
    assert!(!g.policy().is_flagged());
    let write = "open('x','w')";
    assert!(matches!(
        g.check(Language::Python, write),
        Triage::IfUndoable { .. }
    ));
    assert!(
        g.auto_ticket(Language::Python, write, false).is_none(),
        "not proven undoable: asked"
    );
    let t = g.auto_ticket(Language::Python, write, true).unwrap();
    assert_eq!(
        (t.scope, t.source, t.code.as_str()),
        (DecisionScope::PolicyAuto, DecidedBy::Policy, write)
    );
    let overwrite = "echo x > notes.txt";
    assert!(
        g.auto_ticket(Language::Shell, overwrite, true).is_some(),
        "replacing a file is what Undo takes back"
    );
    match g.check(Language::Shell, "rm -rf build") {
        Triage::AskBecause(why) => assert!(why.contains("deletes files"), "{why}"),
        other => panic!("a deletion must be asked: {other:?}"),
    }
    assert!(g
        .auto_ticket(Language::Shell, "rm -rf build", true)
        .is_none());
    // What made ask-unless-safe ask (the text no longer proves what runs) does not make an
    // effect less undoable; a live thread does, and the caller says so with `undoable`.
    g.taint("defined an alias");
    assert!(g.auto_ticket(Language::Python, write, true).is_some());
}

#[test]
fn never_ask_is_flagged_and_approves_everything() {
    let g = gate(ApprovalPolicy::NeverAsk);
    assert!(g.policy().is_flagged());
    let t = g.auto_ticket(Language::Shell, "rm -rf x", false).unwrap();
    assert_eq!(
        (t.scope, t.source),
        (DecisionScope::PolicyAuto, DecidedBy::Policy)
    );
}

#[test]
fn expired_approvals_reject_late_decisions() {
    let mut g = gate(ApprovalPolicy::AskAlways);
    let p = g.request(ApprovalId::new(), Language::Shell, "ls");
    assert_eq!(g.expire_all(), vec![p.id]);
    assert_eq!(
        g.decide(
            p.id,
            &p.hash,
            Decision::ApproveOnce,
            DecidedBy::UserDialog,
            false
        ),
        Err(GateError::UnknownApproval(p.id))
    );
}

#[test]
fn unreadable_decisions_default_to_deny() {
    assert_eq!(Decision::default(), Decision::Deny { reason: None });
}

#[test]
fn after_session_altering_code_ran_ask_unless_safe_asks_for_everything() {
    let mut g = gate(ApprovalPolicy::AskUnlessSafe);
    assert!(matches!(
        g.check(Language::Python, "print(1)"),
        Triage::AutoApproved { .. }
    ));
    g.taint("defined an alias");
    assert_eq!(g.check(Language::Python, "print(1)"), Triage::Ask);
    assert!(g.auto_ticket(Language::Python, "print(1)", false).is_none());
}

#[test]
fn destructive_code_is_never_always_allowed_even_when_confirmed() {
    for confirmed in [false, true] {
        let mut g = gate(ApprovalPolicy::AskAlways);
        let p = g.request(ApprovalId::new(), Language::Shell, "rm -rf build");
        assert!(p.destructive);
        assert_eq!(
            g.decide(
                p.id,
                &p.hash,
                Decision::AlwaysAllowInSession,
                DecidedBy::UserDialog,
                confirmed,
            ),
            Err(GateError::DestructiveNotAlwaysAllowed),
            "confirmed={confirmed}"
        );
        assert_eq!(g.rules().count(), 0, "no rule was saved");
        assert_eq!(g.check(Language::Shell, "rm -rf build"), Triage::Ask);
        // Refused, the request is still pending and can be approved once.
        let once = g
            .decide(
                p.id,
                &p.hash,
                Decision::ApproveOnce,
                DecidedBy::UserDialog,
                true,
            )
            .unwrap();
        let Resolution::Run(ticket) = once else {
            panic!("expected a run, got {once:?}")
        };
        assert_eq!(ticket.scope, DecisionScope::Once);
        assert_eq!(g.check(Language::Shell, "rm -rf build"), Triage::Ask);
    }
}

#[test]
fn destructive_python_is_not_always_allowed_from_any_front_end() {
    // The refusal is the gate's, whatever sent the decision.
    for source in [
        DecidedBy::Notification,
        DecidedBy::Cli,
        DecidedBy::UserDialog,
    ] {
        let mut g = gate(ApprovalPolicy::NeverAsk);
        let p = g.request(
            ApprovalId::new(),
            Language::Python,
            "os.system('rm -r data')",
        );
        assert_eq!(
            g.decide(p.id, &p.hash, Decision::AlwaysAllowInSession, source, true,),
            Err(GateError::DestructiveNotAlwaysAllowed),
            "{source:?}"
        );
        assert_eq!(g.pending().count(), 1, "the request stays pending");
        assert_eq!(g.rules().count(), 0);
    }
}

#[test]
fn a_saved_rule_for_destructive_code_does_not_let_it_run_unasked() {
    // Rules restored from the history may predate the refusal above.
    for policy in [ApprovalPolicy::AskAlways, ApprovalPolicy::AskUnlessSafe] {
        let mut g = gate(policy);
        g.add_rule(Language::Shell, "rm -rf build");
        g.add_rule(Language::Shell, "make test");
        assert_eq!(
            g.check(Language::Shell, "rm -rf build"),
            Triage::Ask,
            "{policy:?}"
        );
        assert!(g
            .auto_ticket(Language::Shell, "rm -rf build", false)
            .is_none());
        assert!(matches!(
            g.check(Language::Shell, "make test"),
            Triage::AutoApproved { .. }
        ));
    }
}
