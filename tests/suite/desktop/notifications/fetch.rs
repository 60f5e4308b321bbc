//! A fetch waiting on a question about a host, with the window in the background: the person
//! gets a notification (the turn would otherwise sit there unseen), answers in the window, and
//! the fetch's card comes back with the conversation, after a restart too.

use std::sync::Arc;

use ironclaw_desktop::notify::DbusNotifier;
use ironclaw_desktop::types::HistoryItem;
use ironclaw_protocol::{AgentEvent, HostDecision};
use ironclaw_tests::agent::{asks_to_fetch, says};
use ironclaw_tests::TestEnv;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::bus::Bus;
use crate::suite::desktop::App;

/// One page on loopback; returns its port.
async fn serve_once(body: &'static str) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf).await;
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = conn.write_all(head.as_bytes()).await;
            let _ = conn.write_all(body.as_bytes()).await;
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fetch_waiting_on_a_host_is_notified_and_its_card_is_kept() {
    let port = serve_once("<title>Changelog</title><p>Version 3 is out.</p>").await;
    let env = TestEnv::new().await;
    std::fs::write(
        env.paths.user_policy_file(),
        "profiles:\n  standard: { network: allowlist }\n",
    )
    .expect("write sandbox.yaml");
    let bus = Bus::start(true).await;
    let mut app = App::start_in(env, Arc::new(DbusNotifier::new())).await;
    app.desktop.set_window_focused(false);
    app.open().await;
    let url = format!("http://127.0.0.1:{port}/changes");
    app.push_all([asks_to_fetch("f1", &url), says("Version 3 is out.")]);
    app.send("what changed?").await;

    let target = format!("127.0.0.1:{port}");
    app.next_event("FetchHostAsked", |e| {
        matches!(e, AgentEvent::FetchHostAsked { .. })
    })
    .await;
    let n = bus.notification(0).await;
    assert_eq!(
        n.summary,
        "IronClaw waits for you: a fetch needs a host allowed"
    );
    assert!(
        n.body.starts_with(&format!("From {target}: {url}\n")),
        "{n:?}"
    );
    assert!(n.actions.is_empty(), "answered in the window: {n:?}");

    app.desktop
        .decide_host(app.conversation, target.clone(), HostDecision::AllowOnce)
        .await
        .expect("allow once");
    let ended = app
        .next_event("FetchEnded", |e| matches!(e, AgentEvent::FetchEnded { .. }))
        .await;
    let AgentEvent::FetchEnded { report, .. } = ended else {
        unreachable!()
    };
    assert_eq!(
        (report.status, report.title.as_deref()),
        (Some(200), Some("Changelog"))
    );
    app.turn_end().await;

    // Reopened after a restart, the card is there as it was shown.
    app.restart().await;
    let view = app.open().await;
    let kept: Vec<_> = view
        .items
        .iter()
        .filter_map(|i| match i {
            HistoryItem::Fetch { report, .. } => Some(report.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(kept, vec![report]);
}
