//! Quitting the app stops the sandboxes it started, and only those: a session the CLI runs on
//! the same data folder — under its own name, or under a conversation's name the app never
//! opened — keeps running. What a run wrote stays in the workspace for the next start.

use ironclaw_protocol::{AgentEvent, ConversationId, Decision};
use ironclaw_sandbox::container::{self, State};
use ironclaw_tests::agent::{asks_to_run, says};
use ironclaw_tests::{ok, py, TestEnv};
use pretty_assertions::assert_eq;

use super::App;

/// One approved run in `id`, so its sandbox container exists and runs.
async fn run_approved(app: &mut App, id: ConversationId, code: &str) -> String {
    app.conversation = id;
    app.open().await;
    app.push_all([asks_to_run("c1", "python", code), says("Done.")]);
    app.send("run it").await;
    let req = app.approval_request().await;
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
    app.turn_end().await;
    let out = app.stdout();
    app.seen.clear();
    out
}

/// Session name → state, for every session container of this data folder.
async fn states(env: &TestEnv) -> Vec<(String, State)> {
    let mut all: Vec<(String, State)> = container::list(env.docker(), &env.instance)
        .await
        .expect("list containers")
        .into_iter()
        .map(|c| (c.session, c.state))
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

fn state_of(all: &[(String, State)], session: &str) -> Option<State> {
    all.iter()
        .find(|(s, _)| s == session)
        .map(|(_, st)| st.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quitting_stops_the_sandboxes_the_app_started_and_leaves_the_others_running() {
    let mut app = App::start().await;
    let first = app.conversation;
    let second = app.desktop.create_conversation().expect("create").id;
    // A conversation the app lists but never opened: the CLI chats in it.
    let cli_chat = app.desktop.create_conversation().expect("create").id;

    let wrote = run_approved(
        &mut app,
        first,
        "open('/workspace/kept.txt', 'w').write('still here'); print('one')",
    )
    .await;
    assert_eq!(wrote.trim(), "one");
    assert_eq!(
        run_approved(&mut app, second, "print('two')").await.trim(),
        "two"
    );
    // Other processes' sessions on the same data folder (same instance label).
    assert_eq!(
        ok(&py(&app.env, "cli-job", "print('cli')").await).trim(),
        "cli"
    );
    assert_eq!(
        ok(&py(&app.env, &cli_chat.to_string(), "print('cli chat')").await).trim(),
        "cli chat"
    );

    let before = states(&app.env).await;
    let (first_s, second_s, cli_chat_s) =
        (first.to_string(), second.to_string(), cli_chat.to_string());
    for s in [&first_s, &second_s, "cli-job", &cli_chat_s] {
        assert_eq!(
            state_of(&before, s),
            Some(State::Running),
            "{s} runs before quitting: {before:?}"
        );
    }
    assert_eq!(
        app.desktop.running_sandboxes().await.expect("count"),
        2,
        "Settings counts the app's two, not the CLI's: {before:?}"
    );

    let began = std::time::Instant::now();
    let report = app.desktop.shutdown().await;
    eprintln!(
        "shutdown stopped {} sandboxes in {:?}",
        report.stopped.len(),
        began.elapsed()
    );

    let mut expected = vec![first_s.clone(), second_s.clone()];
    expected.sort();
    assert_eq!(report.stopped, expected, "{report:?}");
    assert!(report.failed.is_empty(), "{report:?}");
    assert!(!report.relay_removed, "no relay was running: {report:?}");
    let after = states(&app.env).await;
    assert_eq!(
        state_of(&after, &first_s),
        Some(State::Stopped),
        "{after:?}"
    );
    assert_eq!(
        state_of(&after, &second_s),
        Some(State::Stopped),
        "{after:?}"
    );
    assert_eq!(
        state_of(&after, "cli-job"),
        Some(State::Running),
        "a CLI session is not the app's to stop: {after:?}"
    );
    assert_eq!(
        state_of(&after, &cli_chat_s),
        Some(State::Running),
        "a conversation's sandbox the app never started is not the app's to stop: {after:?}"
    );

    // Started again: the interpreter is new, the workspace is what the last run left.
    app.restart().await;
    assert_eq!(app.desktop.running_sandboxes().await.expect("count"), 0);
    let reread = run_approved(&mut app, first, "print(open('/workspace/kept.txt').read())").await;
    assert_eq!(reread.trim(), "still here");
    let again = states(&app.env).await;
    assert_eq!(
        state_of(&again, &first_s),
        Some(State::Running),
        "{again:?}"
    );
    assert_eq!(app.desktop.running_sandboxes().await.expect("count"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quitting_before_any_run_touches_no_container() {
    let mut app = App::start().await;
    // A session the app started that never ran code has no container to stop.
    app.open().await;
    app.push_all([says("Hello.")]);
    app.send("hi").await;
    app.next_event("the reply", |e| matches!(e, AgentEvent::TurnEnded { .. }))
        .await;
    assert_eq!(ok(&py(&app.env, "cli-job", "print(1)").await).trim(), "1");

    let report = app.desktop.shutdown().await;

    assert!(
        report.stopped.is_empty() && report.failed.is_empty(),
        "{report:?}"
    );
    let after = states(&app.env).await;
    assert_eq!(after, vec![("cli-job".to_string(), State::Running)]);
}

/// Whether the egress relay of this data folder runs (`ironclaw.role=egress-relay`).
async fn relay_running(env: &TestEnv) -> bool {
    use bollard::query_parameters::ListContainersOptionsBuilder;
    let filters = std::collections::HashMap::from([(
        "label".to_string(),
        vec![
            format!("ironclaw.instance={}", env.instance),
            "ironclaw.role=egress-relay".to_string(),
        ],
    )]);
    let found = env
        .docker()
        .list_containers(Some(
            ListContainersOptionsBuilder::default()
                .all(false)
                .filters(&filters)
                .build(),
        ))
        .await
        .expect("list the relay");
    !found.is_empty()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quitting_removes_the_egress_relay_only_once_no_sandbox_needs_it() {
    // Every sandbox in allowlist mode, so each one uses the data folder's relay.
    let env = TestEnv::with_policy(
        "network:\n  allowlist:\n    - example.invalid:443\nprofiles:\n  standard: { network: allowlist }\n",
    )
    .await;
    let mut app = App::start_in(env, std::sync::Arc::new(ironclaw_desktop::notify::Silent)).await;
    let id = app.conversation;
    assert_eq!(
        run_approved(&mut app, id, "print('app')").await.trim(),
        "app"
    );
    assert_eq!(
        ok(&py(&app.env, "cli-job", "print('cli')").await).trim(),
        "cli"
    );
    assert!(relay_running(&app.env).await, "the relay serves both");

    let report = app.desktop.shutdown().await;
    assert_eq!(report.stopped, vec![id.to_string()], "{report:?}");
    assert!(!report.relay_removed, "{report:?}");
    assert!(
        relay_running(&app.env).await,
        "the CLI's sandbox still runs, so its relay stays"
    );

    // The CLI's session ends; the app runs once more and quits: nothing needs the relay now.
    app.env
        .sandbox
        .stop(&ironclaw_tests::name("cli-job"))
        .await
        .expect("stop the CLI's sandbox");
    app.restart().await;
    assert_eq!(
        run_approved(&mut app, id, "print('again')").await.trim(),
        "again"
    );
    assert!(relay_running(&app.env).await);
    let report = app.desktop.shutdown().await;
    assert_eq!(report.stopped, vec![id.to_string()], "{report:?}");
    assert!(report.relay_removed, "{report:?}");
    assert!(
        !relay_running(&app.env).await,
        "nothing runs, so the relay is gone"
    );
    assert!(
        states(&app.env)
            .await
            .iter()
            .all(|(_, state)| *state != State::Running),
        "no sandbox of this data folder runs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quitting_mid_run_stops_the_busy_sandbox_too() {
    let mut app = App::start().await;
    let id = app.conversation;
    app.open().await;
    // Ignores SIGTERM and sleeps: only the stop's kill ends it.
    let code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('started', flush=True)\ntime.sleep(600)";
    app.push_all([asks_to_run("c1", "python", code), says("Done.")]);
    app.send("sleep a long time").await;
    let req = app.approval_request().await;
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
    app.next_event(
        "the run's first output",
        |e| matches!(e, AgentEvent::ExecutionOutput { text, .. } if text.contains("started")),
    )
    .await;
    assert_eq!(
        state_of(&states(&app.env).await, &id.to_string()),
        Some(State::Running)
    );

    let began = std::time::Instant::now();
    let report = app.desktop.shutdown().await;
    eprintln!("shutdown mid-run took {:?}", began.elapsed());

    assert_eq!(report.stopped, vec![id.to_string()], "{report:?}");
    let after = states(&app.env).await;
    assert_eq!(
        state_of(&after, &id.to_string()),
        Some(State::Stopped),
        "{after:?}"
    );
}

/// The app's warm spare: made at start, adopted by the first conversation's first run (which
/// then counts as the app's sandbox), replaced for the next one, and removed — not stopped —
/// when the app quits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_keeps_a_warm_spare_that_a_conversation_adopts_and_quit_removes() {
    let env = TestEnv::with_policy("warm_spare: true\n").await;
    let mut app = App::start_in(env, std::sync::Arc::new(ironclaw_desktop::notify::Silent)).await;
    app.desktop.prepare_sandbox().await;
    let spare = app.env.usable_spare(None).await.id;

    let first = app.conversation;
    let out = run_approved(&mut app, first, "print('in the spare')").await;
    assert_eq!(out.trim(), "in the spare");
    let session = ironclaw_tests::name(&first.to_string());
    let adopted = app.env.sandbox.container_of(&session).await.expect("find");
    assert_eq!(
        adopted.map(|c| c.id),
        Some(spare.clone()),
        "the first run adopted the spare"
    );
    assert_eq!(app.desktop.running_sandboxes().await.expect("count"), 1);
    let next = app.env.usable_spare(Some(&spare)).await.id;

    let report = app.desktop.shutdown().await;
    assert_eq!(report.stopped, vec![first.to_string()], "{report:?}");
    assert_eq!(report.spares_removed, 1, "{report:?}");
    assert!(app.env.sandbox.spares().await.expect("spares").is_empty());
    let gone = app.env.docker().inspect_container(&next, None).await;
    assert!(gone.is_err(), "the spare was removed, not stopped");
    let kept = app.env.sandbox.container_of(&session).await.expect("find");
    assert_eq!(kept.map(|c| (c.id, c.state)), Some((spare, State::Stopped)));
}
