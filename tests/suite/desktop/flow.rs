//! Ask → approval pending → decide → output → history, through the desktop core.

use ironclaw_desktop::types::{ApprovalState, HistoryItem};
use ironclaw_desktop::AppEvent;
use ironclaw_protocol::{AgentEvent, DecidedBy, Decision, ExportFormat, RiskLevel, TurnOutcome};
use ironclaw_tests::agent::{asks_to_run, says};
use pretty_assertions::assert_eq;

use super::App;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_run_streams_output_and_is_in_the_history_after_a_restart() {
    let mut app = App::start().await;
    app.open().await;
    let code = "print(6 * 7)";
    app.push_all([asks_to_run("c1", "python", code), says("It is 42.")]);
    app.send("what is 6*7?").await;

    let req = app.approval_request().await;
    assert_eq!((req.code.as_str(), req.language.as_str()), (code, "python"));
    app.pending_count_becomes(1).await;
    let pending = app.desktop.pending_approvals();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].request.approval_id, req.approval_id);
    assert_eq!(
        pending[0].title, "what is 6*7?",
        "the first message names the chat"
    );
    let view = app.open().await;
    assert_eq!(view.pending_approvals, vec![req.clone()]);
    assert!(
        app.started_code().is_empty(),
        "nothing runs before the decision"
    );

    app.desktop
        .decide(
            app.conversation,
            req.approval_id,
            req.code_hash,
            Decision::ApproveOnce,
            false,
        )
        .await
        .expect("decide");
    let resolved = app
        .next_event("approvalResolved", |e| {
            matches!(e, AgentEvent::ApprovalResolved { .. })
        })
        .await;
    assert!(matches!(
        resolved,
        AgentEvent::ApprovalResolved {
            approved: true,
            decided_by: DecidedBy::UserDialog,
            ..
        }
    ));
    let ended = app.turn_end().await;
    assert!(
        matches!(
            ended,
            AgentEvent::TurnEnded {
                status: TurnOutcome::Done,
                ..
            }
        ),
        "{ended:?}"
    );
    assert_eq!(app.stdout().trim(), "42");
    app.pending_count_becomes(0).await;
    assert!(app.desktop.pending_approvals().is_empty());
    let conv = app.conversation;
    let updated = move |e: &AppEvent| matches!(e, AppEvent::ConversationUpdated(s) if s.id == conv);
    if !app.app_seen.iter().any(updated) {
        app.next_app_event("conversation-updated", updated).await;
    }

    app.restart().await;
    let view = app.open().await;
    assert_eq!(view.conversation.title, "what is 6*7?");
    assert!(view.pending_approvals.is_empty());
    let kinds: Vec<&str> = view.items.iter().map(kind).collect();
    assert_eq!(
        kinds,
        ["user", "approval", "execution", "assistant"],
        "{:#?}",
        view.items
    );
    match &view.items[1] {
        HistoryItem::Approval {
            request,
            state,
            decided_by,
            ..
        } => {
            assert_eq!(request.code, code);
            assert_eq!(request.code_hash, req.code_hash);
            assert_eq!(*state, ApprovalState::Approved);
            assert_eq!(*decided_by, Some(DecidedBy::UserDialog));
        }
        other => panic!("{other:?}"),
    }
    match &view.items[2] {
        HistoryItem::Execution {
            code: ran,
            stdout,
            exit_code,
            ..
        } => {
            assert_eq!(ran, code);
            assert_eq!(stdout.trim(), "42");
            assert_eq!(*exit_code, Some(0));
        }
        other => panic!("{other:?}"),
    }
    let found = app.desktop.list_conversations(Some("42")).expect("search");
    assert_eq!(
        found.first().map(|s| s.id),
        Some(app.conversation),
        "{found:?}"
    );
    let md = app
        .desktop
        .export_conversation(app.conversation, ExportFormat::Markdown)
        .expect("export");
    let text = std::fs::read_to_string(&md).expect("read the export");
    assert!(text.contains(code) && text.contains("It is 42."), "{text}");
}

fn kind(item: &HistoryItem) -> &'static str {
    match item {
        HistoryItem::User { .. } => "user",
        HistoryItem::Assistant { .. } => "assistant",
        HistoryItem::Note { .. } => "note",
        HistoryItem::Compacted { .. } => "compacted",
        HistoryItem::Approval { .. } => "approval",
        HistoryItem::Execution { .. } => "execution",
        HistoryItem::Fetch { .. } => "fetch",
        HistoryItem::Viewed { .. } => "viewed",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_request_never_runs() {
    let mut app = App::start().await;
    app.open().await;
    app.push_all([
        asks_to_run("c1", "shell", "touch /workspace/should-not-exist"),
        says("Understood, I will not."),
    ]);
    app.send("make a file").await;
    let req = app.approval_request().await;
    app.desktop
        .decide(
            app.conversation,
            req.approval_id,
            req.code_hash,
            Decision::Deny {
                reason: Some("not today".into()),
            },
            false,
        )
        .await
        .expect("decide");
    app.turn_end().await;
    assert!(app.started_code().is_empty(), "{:#?}", app.seen);
    let view = app.open().await;
    let denied = view.items.iter().any(|i| {
        matches!(i, HistoryItem::Approval { state: ApprovalState::Denied, reason: Some(r), .. } if r == "not today")
    });
    assert!(denied, "{:#?}", view.items);
    assert!(!view
        .items
        .iter()
        .any(|i| matches!(i, HistoryItem::Execution { .. })));
    let files = app.desktop.list_workspace(app.conversation).expect("list");
    assert!(
        files.iter().all(|f| f.path != "should-not-exist"),
        "{files:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_request_runs_the_edited_code_only() {
    let mut app = App::start().await;
    app.open().await;
    app.push_all([
        asks_to_run("c1", "python", "print('original')"),
        says("Done."),
    ]);
    app.send("print something").await;
    let req = app.approval_request().await;
    let edited = "print('edited')";
    app.desktop
        .decide(
            app.conversation,
            req.approval_id,
            req.code_hash,
            Decision::EditAndApprove {
                code: edited.into(),
            },
            false,
        )
        .await
        .expect("decide");
    app.turn_end().await;
    assert_eq!(app.started_code(), [edited]);
    assert_eq!(app.stdout().trim(), "edited");
    let view = app.open().await;
    assert!(view.items.iter().any(|i| matches!(
        i,
        HistoryItem::Approval {
            user_edited: true,
            ..
        }
    )));

    // Deleting the conversation takes its sandbox with it.
    let id = app.conversation;
    let workspace = app.desktop.workspace_dir(id).expect("workspace");
    assert!(app.env.container_id(&id.to_string()).await.is_some());
    app.desktop.delete_conversation(id).await.expect("delete");
    assert!(app.env.container_id(&id.to_string()).await.is_none());
    assert!(!workspace.exists(), "{}", workspace.display());
    assert!(app
        .desktop
        .list_conversations(None)
        .expect("list")
        .is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destructive_code_needs_the_confirmation_and_a_wrong_hash_runs_nothing() {
    let mut app = App::start().await;
    app.open().await;
    let destroy = "rm -rf /workspace/x";
    app.push_all([asks_to_run("c1", "shell", destroy), says("Removed.")]);
    app.send("clean up x").await;
    let req = app.approval_request().await;
    assert!(
        req.destructive && req.risk == RiskLevel::Destructive,
        "{req:?}"
    );
    let id = app.conversation;

    app.desktop
        .decide(
            id,
            req.approval_id,
            req.code_hash,
            Decision::ApproveOnce,
            false,
        )
        .await
        .expect("decide");
    let rejected = app
        .next_event("decisionRejected", |e| {
            matches!(e, AgentEvent::DecisionRejected { .. })
        })
        .await;
    assert!(
        matches!(
            rejected,
            AgentEvent::DecisionRejected {
                still_pending: true,
                ..
            }
        ),
        "{rejected:?}"
    );
    assert_eq!(app.desktop.pending_approvals().len(), 1, "still pending");

    let wrong = ironclaw_protocol::CodeHash::of(
        ironclaw_protocol::ConversationId::new(),
        ironclaw_protocol::Language::Shell,
        destroy,
    );
    app.desktop
        .decide(id, req.approval_id, wrong, Decision::ApproveOnce, true)
        .await
        .expect("decide");
    let rejected = app
        .next_event("decisionRejected", |e| {
            matches!(e, AgentEvent::DecisionRejected { .. })
        })
        .await;
    assert!(
        matches!(
            rejected,
            AgentEvent::DecisionRejected {
                still_pending: true,
                ..
            }
        ),
        "{rejected:?}"
    );
    assert!(app.started_code().is_empty());

    app.desktop
        .decide(
            id,
            req.approval_id,
            req.code_hash,
            Decision::ApproveOnce,
            true,
        )
        .await
        .expect("decide");
    app.turn_end().await;
    assert_eq!(app.started_code(), [destroy]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_rules_are_listed_and_revocable_and_the_policy_is_kept() {
    let mut app = App::start().await;
    let id = app.conversation;
    app.desktop
        .set_policy(id, ironclaw_protocol::ApprovalPolicy::AskUnlessSafe)
        .await
        .expect("policy without a session");
    let view = app.open().await;
    assert_eq!(
        view.policy,
        ironclaw_protocol::ApprovalPolicy::AskUnlessSafe
    );
    assert!(!view.policy_flagged);

    let code = "open('/workspace/n', 'a').write('x')";
    app.push_all([asks_to_run("c1", "python", code), says("Saved.")]);
    app.send("append").await;
    let req = app.approval_request().await;
    app.desktop
        .decide(
            id,
            req.approval_id,
            req.code_hash,
            Decision::AlwaysAllowInSession,
            false,
        )
        .await
        .expect("decide");
    app.turn_end().await;
    let rules = app.desktop.list_rules(id).expect("rules");
    assert_eq!(rules.len(), 1, "{rules:?}");
    assert_eq!(
        (rules[0].code.as_str(), rules[0].code_hash),
        (code, req.code_hash)
    );

    app.desktop
        .revoke_rule(id, rules[0].code_hash)
        .await
        .expect("revoke");
    assert!(app.desktop.list_rules(id).expect("rules").is_empty());
    // Revoked in the live gate too: the same code asks again.
    app.push_all([asks_to_run("c2", "python", code), says("Asked.")]);
    app.send("append again").await;
    let again = app.approval_request().await;
    assert_eq!(again.code_hash, req.code_hash);
    app.desktop.cancel(id).await.expect("cancel");
    let ended = app.turn_end().await;
    assert!(
        matches!(
            ended,
            AgentEvent::TurnEnded {
                status: TurnOutcome::Cancelled,
                ..
            }
        ),
        "{ended:?}"
    );
    app.pending_count_becomes(0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_pending_in_several_conversations_are_counted_together() {
    let mut app = App::start().await;
    let other = app.desktop.create_conversation().expect("create").id;
    app.push_all([
        asks_to_run("a", "python", "print('a')"),
        asks_to_run("b", "python", "print('b')"),
    ]);
    app.open().await;
    app.send("first").await;
    app.approval_request().await;
    app.pending_count_becomes(1).await;
    app.desktop
        .send_message(other, "second", Vec::new())
        .await
        .expect("send to the other conversation");
    app.pending_count_becomes(2).await;

    let mut owners: Vec<_> = app
        .desktop
        .pending_approvals()
        .into_iter()
        .map(|p| p.conversation_id)
        .collect();
    owners.sort();
    let mut expected = vec![app.conversation, other];
    expected.sort();
    assert_eq!(owners, expected);
    let listed = app.desktop.list_conversations(None).expect("list");
    assert!(
        listed.iter().all(|s| s.pending_approvals == 1),
        "{listed:?}"
    );

    app.desktop
        .delete_conversation(other)
        .await
        .expect("delete");
    app.pending_count_becomes(1).await;
    assert_eq!(app.desktop.pending_approvals().len(), 1);
}
