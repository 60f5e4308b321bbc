//! The tray icon's click: the window is asked for the OLDEST approval still waiting, across
//! conversations, whichever one is on screen.

use ironclaw_protocol::Decision;
use ironclaw_tests::agent::asks_to_run;
use pretty_assertions::assert_eq;

use super::App;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tray_click_asks_the_window_for_the_oldest_pending_approval() {
    use ironclaw_desktop::AppEvent;
    let mut app = App::start().await;
    let first = app.conversation;
    let second = app.desktop.create_conversation().expect("create").id;
    assert!(
        app.desktop.focus_oldest_pending().is_none(),
        "nothing waits: the window only comes forward"
    );

    let mut waiting = Vec::new();
    for id in [first, second] {
        app.conversation = id;
        app.open().await;
        app.push_all([asks_to_run("c1", "python", "print(1)")]);
        app.send("run it").await;
        waiting.push(app.approval_request().await);
    }
    app.pending_count_becomes(2).await;

    // Whichever conversation is on screen, the oldest approval is the one asked for.
    let oldest = app.desktop.focus_oldest_pending().expect("one waits");
    assert_eq!(
        (oldest.conversation_id, oldest.request.approval_id),
        (first, waiting[0].approval_id)
    );
    let asked = app
        .next_app_event("focus-approval", |e| {
            matches!(e, AppEvent::FocusApproval(_))
        })
        .await;
    match asked {
        AppEvent::FocusApproval(f) => {
            assert_eq!(
                (f.conversation_id, f.approval_id),
                (first, waiting[0].approval_id)
            )
        }
        _ => unreachable!(),
    }

    // Once it is decided, the next oldest is the other conversation's.
    app.desktop
        .decide(
            first,
            waiting[0].approval_id,
            waiting[0].code_hash,
            Decision::Deny { reason: None },
            false,
        )
        .await
        .expect("deny");
    app.pending_count_becomes(1).await;
    let next = app.desktop.focus_oldest_pending().expect("one waits");
    assert_eq!(
        (next.conversation_id, next.request.approval_id),
        (second, waiting[1].approval_id)
    );
}
