//! The desktop core with its data folder on a full disk: a message that cannot be saved is
//! answered in the conversation with what is full and what to free (no turn left "running"),
//! and the list views still read.

use ironclaw_protocol::AgentEvent;
use ironclaw_tests::agent::says;

use super::App;
use crate::suite::faults::disk_full::{fill, Tmpfs};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_is_told_in_the_conversation_and_the_lists_still_read() {
    let mut app = App::start().await;
    let _tmpfs = Tmpfs::mount(&app.env.paths.data_dir, "6m");
    // Reopened on the small disk, as the app starting on it.
    app.restart().await;
    app.conversation = app.desktop.create_conversation().expect("create").id;
    app.open().await;
    app.push_all([says("saved before the disk filled")]);
    app.send("before the disk filled").await;
    app.turn_end().await;

    fill(&app.env.paths.data_dir.join("filler"));
    app.send("while the disk is full").await;
    let event = app
        .next_event("the message refused", |e| {
            matches!(
                e,
                AgentEvent::MessageNotSaved { .. } | AgentEvent::TurnStarted { .. }
            )
        })
        .await;
    let AgentEvent::MessageNotSaved { text, message } = event else {
        panic!("a turn started with nowhere to save it: {event:?}");
    };
    assert_eq!(text, "while the disk is full");
    let data = app.env.paths.data_dir.display().to_string();
    assert!(
        message.contains(&format!("{data}/history.sqlite3 is full"))
            && message.contains("bytes free")
            && message.contains("Free space on that disk"),
        "{message}"
    );

    // The list views read while the disk is full.
    let listed = app
        .desktop
        .list_conversations(None)
        .expect("list while full");
    assert!(
        listed.iter().any(|c| c.id == app.conversation),
        "{listed:?}"
    );
    let searched = app
        .desktop
        .list_conversations(Some("filled"))
        .expect("search while full");
    assert!(!searched.is_empty());
    let view = app.open().await;
    assert!(!view.items.is_empty());
}
