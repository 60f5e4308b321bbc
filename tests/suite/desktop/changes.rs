//! A run's changed files, opened from its cell: both sides come from the run's checkpoint (not
//! the workspace as it is now), with a line diff for text and the image before and after.

use ironclaw_desktop::types::{ChangeSide, DiffKind, HistoryItem};
use ironclaw_protocol::{AgentEvent, ChangeKind, ExecutionId};
use ironclaw_tests::agent::{asks_to_run, says};
use pretty_assertions::assert_eq;

use super::App;

async fn approve_and_end(app: &mut App) -> ExecutionId {
    app.approve_next_request().await;
    match app
        .next_event("executionEnded", |e| {
            matches!(e, AgentEvent::ExecutionEnded { .. })
        })
        .await
    {
        AgentEvent::ExecutionEnded { execution_id, .. } => execution_id,
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_file_shows_the_runs_own_diff_and_images_before_and_after() {
    let mut app = App::start().await;
    app.open().await;
    let png = "import base64\nopen('plot.png', 'wb').write(base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='))";
    app.push_all([
        asks_to_run("c1", "shell", "printf 'a\\nb\\nc\\n' > notes.txt"),
        asks_to_run(
            "c2",
            "python",
            &format!("{png}\nopen('notes.txt', 'w').write('a\\nB\\nc\\nd\\n')"),
        ),
        says("done"),
    ]);
    app.send("write notes and a plot").await;
    approve_and_end(&mut app).await;
    let second = approve_and_end(&mut app).await;
    app.turn_end().await;
    // Changed since, outside any run: the detail is still what the run did.
    let ws = ironclaw_desktop::workspace::dir(&app.env.paths, app.conversation).expect("workspace");
    std::fs::write(ws.join("notes.txt"), "rewritten by the person\n").expect("write");

    let notes = app
        .desktop
        .run_change(second, "notes.txt")
        .await
        .expect("the notes' change");
    assert_eq!(notes.change, ChangeKind::Modified);
    assert_eq!(notes.unavailable, None);
    let lines: Vec<(DiffKind, &str)> = notes
        .diff
        .iter()
        .map(|l| (l.kind, l.text.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            (DiffKind::Same, "a"),
            (DiffKind::Removed, "b"),
            (DiffKind::Added, "B"),
            (DiffKind::Same, "c"),
            (DiffKind::Added, "d"),
        ]
    );

    let plot = app
        .desktop
        .run_change(second, "plot.png")
        .await
        .expect("the plot's change");
    assert_eq!(
        (plot.change, &plot.before),
        (ChangeKind::Added, &ChangeSide::Absent)
    );
    assert!(
        matches!(&plot.after, ChangeSide::Image { data_url } if data_url.starts_with("data:image/png;base64,iVBORw0KGgo")),
        "{:?}",
        plot.after
    );

    let refused = app.desktop.run_change(second, "../../etc/passwd").await;
    assert!(refused.is_err(), "only what the run changed: {refused:?}");
}

/// Past the total undo cap set in Settings the oldest run's copies are dropped; the reopened
/// conversation says that run cannot be undone, and why, instead of offering Undo.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_copies_were_dropped_for_the_cap_is_marked_when_reopened() {
    let mut app = App::start().await;
    let mut settings = app.desktop.get_settings().expect("settings");
    settings.undo_keep_total_bytes = Some(1 << 20);
    app.desktop
        .save_settings(&settings)
        .await
        .expect("save the cap");
    app.open().await;
    // 400 KiB of new random bytes each time: each rewrite leaves the bytes before it only to
    // the record. Three runs hold 1.2 MiB of copies; the newest run's two (800 KiB) fit.
    let rewrite = "head -c 409600 /dev/urandom > data.bin";
    app.push_all([
        asks_to_run("c1", "shell", rewrite),
        asks_to_run("c2", "shell", rewrite),
        asks_to_run("c3", "shell", rewrite),
        says("done"),
    ]);
    app.send("write the data three times").await;
    let mut runs = Vec::new();
    for _ in 0..3 {
        runs.push(approve_and_end(&mut app).await);
    }
    app.turn_end().await;

    let view = app.open().await;
    let marks: Vec<(ExecutionId, bool, Option<String>)> = view
        .items
        .iter()
        .filter_map(|i| match i {
            HistoryItem::Execution {
                execution_id,
                undoable,
                not_undoable,
                ..
            } => Some((*execution_id, *undoable, not_undoable.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        marks.iter().map(|m| m.0).collect::<Vec<_>>(),
        runs,
        "{marks:?}"
    );
    // The oldest gave way first; each says why and is not offered for undo.
    for old in &marks[..2] {
        assert!(!old.1, "{marks:?}");
        let why = old.2.clone().expect("why it cannot be undone");
        assert!(why.contains("size cap"), "{why}");
    }
    assert_eq!((marks[2].1, marks[2].2.clone()), (true, None), "{marks:?}");
}

/// A run whose changes pass the cap is not "0 files changed": the event and the reopened
/// conversation say its changes could not be recorded, still offer Undo, and Undo puts the
/// workspace back as it was before the run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_changes_could_not_be_recorded_says_so_when_reopened_and_is_put_back() {
    let mut app = App::start().await;
    let mut settings = app.desktop.get_settings().expect("settings");
    settings.undo_keep_bytes = Some(1 << 20);
    app.desktop
        .save_settings(&settings)
        .await
        .expect("save the cap");
    app.open().await;
    app.push_all([
        asks_to_run("c1", "shell", "echo mine > notes.txt"),
        asks_to_run(
            "c2",
            "shell",
            "rm notes.txt; head -c 2097152 /dev/urandom > big.bin",
        ),
        says("done"),
    ]);
    app.send("write, then replace").await;
    approve_and_end(&mut app).await;
    app.approve_next_request().await;
    let (big, unknown) = match app
        .next_event("executionEnded", |e| {
            matches!(e, AgentEvent::ExecutionEnded { .. })
        })
        .await
    {
        AgentEvent::ExecutionEnded {
            execution_id,
            changes_unknown,
            not_undoable,
            ..
        } => {
            assert_eq!(not_undoable, None);
            (execution_id, changes_unknown)
        }
        _ => unreachable!(),
    };
    assert!(unknown.is_some_and(|why| why.contains("cap")));
    app.turn_end().await;

    let view = app.open().await;
    // The context meter is there from the moment it opens, from the last request.
    let gauge = view.context.clone().expect("the last request's gauge");
    assert!(
        gauge.used_tokens > 0 && gauge.window_tokens > 0,
        "{gauge:?}"
    );
    let marked = view.items.iter().find_map(|i| match i {
        HistoryItem::Execution {
            execution_id,
            undoable,
            changes_unknown,
            ..
        } if *execution_id == big => Some((*undoable, changes_unknown.clone())),
        _ => None,
    });
    let (undoable, unknown) = marked.expect("the run is in the view");
    assert!(undoable);
    assert!(unknown.is_some(), "reopened, it still says so");

    let ws = app
        .env
        .paths
        .workspaces_dir()
        .join(app.conversation.to_string());
    assert!(ws.join("big.bin").exists(), "the run ran");
    app.desktop
        .undo_run(app.conversation, big, false)
        .await
        .expect("undo");
    app.next_event("runUndone", |e| matches!(e, AgentEvent::RunUndone { .. }))
        .await;
    assert!(!ws.join("big.bin").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).expect("put back"),
        "mine\n"
    );
    let view = app.open().await;
    assert!(view.items.iter().all(|i| !matches!(
        i,
        HistoryItem::Execution {
            changes_unknown: Some(_),
            ..
        }
    )));
}
