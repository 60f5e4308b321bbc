//! What a notification shows is what its Approve approves: all of the code, character for
//! character as the server draws it (markup read or not), or no Approve at all.

use ironclaw_protocol::AgentEvent;
use pretty_assertions::assert_eq;

use super::bus::{rendered_as_markup, Bus};
use super::{app_notifying, approve_from, click_until_focused};

/// Markup a server would read: a span that hides what it wraps, an entity that draws as
/// another character, and comparisons that look like tags.
const MARKUP_CODE: &str = "print('<span alpha=\"1\">', 'ran', '</span>')\n\
                           print(1 < 2 > 0, '&lt;', '&amp;')";

async fn approved_from_a_notification_on(bus: Bus) -> (String, Vec<String>, String) {
    let (mut app, bus) = app_notifying(bus, MARKUP_CODE).await;
    let req = app.approval_request().await;
    let n = bus.notification(0).await;
    assert_eq!(
        n.actions,
        ["default", "Open", "approve", "Approve", "deny", "Deny"]
    );
    approve_from(&mut app, &bus, n.id, req.approval_id).await;
    app.turn_end().await;
    (n.body, app.started_code(), app.stdout())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_reads_markup_draws_every_character_of_the_code_it_approves() {
    // Sent as it is, this code would draw as other text.
    assert_ne!(rendered_as_markup(MARKUP_CODE), MARKUP_CODE);
    let (body, ran, stdout) =
        approved_from_a_notification_on(Bus::start_reading_markup().await).await;
    let drawn = rendered_as_markup(&body);
    assert!(
        drawn.starts_with(&format!("{MARKUP_CODE}\n— ")),
        "drawn:\n{drawn}\nsent:\n{body}"
    );
    assert_eq!(ran, [MARKUP_CODE]);
    assert_eq!(stdout, "<span alpha=\"1\"> ran </span>\nTrue &lt; &amp;\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_shows_plain_text_gets_the_code_as_it_is() {
    let (body, ran, _) = approved_from_a_notification_on(Bus::start(true).await).await;
    assert!(body.starts_with(&format!("{MARKUP_CODE}\n— ")), "{body}");
    assert_eq!(ran, [MARKUP_CODE]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_a_notification_cannot_show_whole_is_approved_only_in_the_window() {
    let lines: Vec<String> = (1..=12).map(|i| format!("print({i})")).collect();
    let code = lines.join("\n");
    let (mut app, bus) = app_notifying(Bus::start(true).await, &code).await;
    let req = app.approval_request().await;
    let n = bus.notification(0).await;
    assert_eq!(
        n.actions,
        ["default", "Open", "review", "Review…", "deny", "Deny"]
    );
    assert!(
        n.body.starts_with(&format!(
            "{}\n… 4 more lines: review it in IronClaw\n— ",
            lines[..8].join("\n")
        )),
        "{}",
        n.body
    );
    // "Approve" was not offered: a server (or anything on the bus) that sends it anyway only
    // brings the approval to the window ("Review…" does the same: `action_for`'s unit test).
    click_until_focused(&mut app, &bus, n.id, "approve", req.approval_id).await;
    // Used, it does not linger: IronClaw closes it (a server may keep it after an action).
    bus.closed(n.id).await;
    assert!(app.started_code().is_empty(), "{:#?}", app.seen);
    assert!(
        !app.seen
            .iter()
            .any(|e| matches!(e, AgentEvent::ApprovalResolved { .. })),
        "{:#?}",
        app.seen
    );
    assert_eq!(app.desktop.pending_approvals().len(), 1);
}
