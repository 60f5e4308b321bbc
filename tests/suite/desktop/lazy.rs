//! A conversation's session starts from the history and the audit log alone. What changes a
//! conversation (its policy, its rules, a decision) therefore works with no Docker engine and
//! no model server, through the one path the live session uses, with one audit entry each;
//! only a turn, which needs the sandbox, says Docker is missing.

use ironclaw_protocol::{
    AgentEvent, ApprovalId, ApprovalPolicy, CodeHash, Decision, Language, TurnOutcome,
};
use ironclaw_tests::agent::audit_entries;

use super::App;

#[tokio::test]
async fn policy_rules_and_decisions_need_no_docker_engine_and_each_is_audited_once() {
    let mut app = App::start().await;
    // From here on no engine answers this process (nextest runs each test in its own).
    std::env::set_var("DOCKER_HOST", "unix:///nonexistent/ironclaw-no-docker.sock");
    app.open().await;
    let id = app.conversation;

    app.desktop
        .set_policy(id, ApprovalPolicy::NeverAsk)
        .await
        .expect("a policy change needs no engine");
    app.next_event("policyChanged", |e| {
        matches!(
            e,
            AgentEvent::PolicyChanged {
                policy: ApprovalPolicy::NeverAsk,
                flagged: true
            }
        )
    })
    .await;
    let unknown = CodeHash::of(id, Language::Python, "print(1)");
    app.desktop
        .revoke_rule(id, unknown)
        .await
        .expect("revoking needs no engine");
    app.desktop
        .decide(id, ApprovalId::new(), unknown, Decision::ApproveOnce, false)
        .await
        .expect("a decision is answered, not failed");
    // Ops are handled in order: once this arrives, the revoke was handled too.
    app.next_event("decisionRejected", |e| {
        matches!(
            e,
            AgentEvent::DecisionRejected {
                still_pending: false,
                ..
            }
        )
    })
    .await;

    let policy = app
        .desktop
        .history()
        .get_conversation(id)
        .expect("conversation")
        .approval_policy;
    assert_eq!(policy, ApprovalPolicy::NeverAsk);
    let entries = audit_entries(&ironclaw_agent::state::audit_path(&app.env.paths));
    let kinds: Vec<&str> = entries.iter().map(|e| e.kind.as_str()).collect();
    for kind in ["policy_changed", "session_rule_revoked", "decision"] {
        assert_eq!(
            kinds.iter().filter(|k| **k == kind).count(),
            1,
            "one {kind} entry: {kinds:?}"
        );
    }

    // The engine really is unreachable: the first turn, which needs the sandbox, says so.
    app.send("hello").await;
    let ended = app.turn_end().await;
    std::env::remove_var("DOCKER_HOST");
    match ended {
        AgentEvent::TurnEnded {
            status: TurnOutcome::Failed,
            error: Some(error),
            ..
        } => assert!(error.to_lowercase().contains("docker"), "{error}"),
        other => panic!("the turn should fail for want of Docker: {other:?}"),
    }
}

#[tokio::test]
async fn files_can_be_attached_and_a_model_chosen_while_no_docker_engine_answers() {
    let mut app = App::start().await;
    std::env::set_var("DOCKER_HOST", "unix:///nonexistent/ironclaw-no-docker.sock");
    app.open().await;
    let id = app.conversation;
    let src = tempfile::tempdir().expect("source");
    std::fs::write(src.path().join("notes.txt"), "hello").expect("notes");

    let items = app
        .desktop
        .attach_paths(id, vec![src.path().join("notes.txt")], |_| {})
        .await
        .expect("attaching copies files and needs no engine");
    assert_eq!(items[0].name, "notes.txt");
    let workspace = app.desktop.workspace_dir(id).expect("workspace");
    assert_eq!(
        std::fs::read_to_string(workspace.join("notes.txt")).expect("copied"),
        "hello"
    );

    // The same provider (named as the header names it), another model: resolved without the
    // sandbox.
    let current = app.desktop.current_model(id).expect("the model in use");
    app.desktop
        .use_model(id, current.provider, "other-model".into())
        .await
        .expect("sent");
    let changed = app
        .next_event("modelChanged or an error", |e| {
            matches!(
                e,
                AgentEvent::ModelChanged { .. } | AgentEvent::Error { .. }
            )
        })
        .await;
    assert!(
        matches!(&changed, AgentEvent::ModelChanged { model, .. } if model == "other-model"),
        "{changed:?}"
    );
}
