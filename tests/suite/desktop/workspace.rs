//! The workspace panel, inline images and full logs: what a run changed, and that the UI can
//! read nothing outside the conversation's own workspace.

use ironclaw_desktop::types::{EntryKind, HistoryItem, RunImage};
use ironclaw_desktop::AppEvent;
use ironclaw_protocol::{AgentEvent, ExecutionId, OutputStream};
use ironclaw_tests::agent::{asks_to_run, says};
use pretty_assertions::assert_eq;

use super::App;

/// Approves the next request as it is (confirmed: the symlink to /etc/passwd reads as
/// destructive, which is not what these tests are about) and waits for the end of the turn.
async fn approve_next(app: &mut App) {
    app.approve_next_request().await;
    app.turn_end().await;
}

const MAKE_FILES: &str = r#"
import os
open('/workspace/plot.png', 'wb').write(b'\x89PNG\r\n\x1a\n' + bytes(64))
open('/workspace/notes.txt', 'w').write('hello')
os.symlink('/etc/passwd', '/workspace/passwd.png')
os.symlink('plot.png', '/workspace/alias.png')
print('made')
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_a_run_writes_are_reported_marked_and_shown_inline_and_nothing_outside_is_readable() {
    let mut app = App::start().await;
    app.open().await;
    app.push_all([
        asks_to_run("c1", "python", MAKE_FILES),
        says("Made them."),
        asks_to_run(
            "c2",
            "python",
            // The second file's time is set back a year: the panel must still mark it.
            "import os\nopen('/workspace/second.txt', 'w').write('2')\nopen('/workspace/hidden.txt', 'w').write('h')\nos.utime('/workspace/hidden.txt', (1e9, 1e9))",
        ),
        says("Another."),
    ]);
    app.send("make some files").await;
    approve_next(&mut app).await;
    let id = app.conversation;

    let files = match app
        .next_app_event("execution-files", |e| {
            matches!(e, AppEvent::ExecutionFiles(_))
        })
        .await
    {
        AppEvent::ExecutionFiles(f) => f,
        _ => unreachable!(),
    };
    assert_eq!(files.conversation_id, id);
    let mut reported: Vec<(String, EntryKind)> = files
        .files
        .iter()
        .map(|f| (f.path.clone(), f.kind))
        .collect();
    reported.sort_by(|a, b| a.0.cmp(&b.0));
    // Symlinks are listed as links, never followed.
    assert_eq!(
        reported,
        [
            ("alias.png".to_string(), EntryKind::Symlink),
            ("notes.txt".to_string(), EntryKind::Text),
            ("passwd.png".to_string(), EntryKind::Symlink),
            ("plot.png".to_string(), EntryKind::Image)
        ]
    );

    let url = app
        .desktop
        .read_workspace_image(id, "plot.png")
        .expect("read the image");
    assert!(url.starts_with("data:image/png;base64,"), "{url}");
    assert!(
        app.desktop.read_workspace_image(id, "alias.png").is_err(),
        "no link is followed, not even one that stays inside"
    );
    let workspace = app.desktop.workspace_dir(id).expect("workspace");
    let mut big = b"\x89PNG\r\n\x1a\n".to_vec();
    big.resize(11 << 20, 0);
    std::fs::write(workspace.join("big.png"), big).expect("write big.png");
    for hostile in [
        "passwd.png",
        "../../history.sqlite3",
        "../../../../../../etc/passwd",
        "/etc/passwd",
        "notes.txt",
        "big.png",
        "missing.png",
        "",
    ] {
        let result = app.desktop.read_workspace_image(id, hostile);
        assert!(
            result.is_err(),
            "{hostile:?} must be refused, got {result:?}"
        );
    }

    app.send("one more").await;
    approve_next(&mut app).await;
    let listing = app.desktop.list_workspace(id).expect("list");
    let changed = |path: &str| {
        listing
            .iter()
            .find(|e| e.path == path)
            .unwrap_or_else(|| panic!("{path} not listed: {listing:?}"))
            .changed_by_last_run
    };
    assert!(changed("second.txt"));
    let hidden = listing
        .iter()
        .find(|e| e.path == "hidden.txt")
        .expect("hidden.txt listed");
    assert!(
        hidden.modified_ms < 1_000_000_001_000,
        "its time was set back: {hidden:?}"
    );
    assert!(
        hidden.changed_by_last_run,
        "a run cannot hide a change by setting the file's time back"
    );
    assert!(!changed("plot.png"), "written by the run before the last");
    assert!(
        !listing.iter().any(|e| e.path.starts_with(".ironclaw")),
        "{listing:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_logs_page_with_replacement_characters_and_only_for_runs_that_have_one() {
    let mut app = App::start().await;
    app.open().await;
    let loud = "import sys\nsys.stdout.buffer.write(b'\\xffstart\\n' + b'x' * (3 << 20))\nsys.stdout.buffer.flush()\nsys.stderr.write('oops\\n' * 600000)";
    app.push_all([
        asks_to_run("c1", "python", "print('small')"),
        says("Small."),
        asks_to_run("c2", "python", loud),
        says("Loud."),
    ]);
    app.send("small").await;
    approve_next(&mut app).await;
    app.send("loud").await;
    approve_next(&mut app).await;
    let ended: Vec<(ExecutionId, Option<String>)> = app
        .seen
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ExecutionEnded {
                execution_id,
                log_file,
                ..
            } => Some((*execution_id, log_file.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(ended.len(), 2, "{:#?}", app.seen);
    let (small, loud_run) = (ended[0].0, ended[1].0);
    assert!(ended[1].1.is_some(), "3 MiB of output leaves a full log");

    let err = app
        .desktop
        .read_log(small, OutputStream::Stdout, 0, 100)
        .expect_err("no log for a small run");
    assert!(err.to_string().contains("no separate log"), "{err}");
    assert!(app
        .desktop
        .read_log(ExecutionId::new(), OutputStream::Stdout, 0, 100)
        .is_err());

    let first = app
        .desktop
        .read_log(loud_run, OutputStream::Stdout, 0, 4096)
        .expect("first page");
    assert!(
        first.text.starts_with("\u{FFFD}start\nxxx"),
        "{:?}",
        &first.text[..20]
    );
    assert_eq!((first.offset, first.next_offset), (0, 4096));
    assert!(first.total_bytes >= 3 << 20, "{}", first.total_bytes);
    let last = app
        .desktop
        .read_log(
            loud_run,
            OutputStream::Stdout,
            first.total_bytes - 10,
            1 << 30,
        )
        .expect("last page");
    assert_eq!(last.next_offset, first.total_bytes);
    assert_eq!(last.text.len(), 10);
    // The error stream has its own full log, a click away too.
    let errors = app
        .desktop
        .read_log(loud_run, OutputStream::Stderr, 0, 10)
        .expect("stderr page");
    assert_eq!(errors.text, "oops\noops\n");
    assert_eq!(errors.total_bytes, 5 * 600_000);
}

/// The execution item's recorded images, from a freshly opened view.
async fn recorded_images(app: &mut App) -> Vec<(ExecutionId, Vec<String>)> {
    app.open()
        .await
        .items
        .into_iter()
        .filter_map(|i| match i {
            HistoryItem::Execution {
                execution_id,
                images,
                ..
            } => Some((execution_id, images)),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_a_run_wrote_come_back_with_the_conversation_until_they_are_deleted() {
    let mut app = App::start().await;
    app.open().await;
    app.push_all([
        asks_to_run(
            "c1",
            "python",
            "import os\nos.makedirs('/workspace/out', exist_ok=True)\n\
             for p in ('/workspace/plot.png', '/workspace/out/second.png'):\n    \
             open(p, 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + bytes(32))\n\
             open('/workspace/table.csv', 'w').write('a,b')\nprint('drew')",
        ),
        says("Drew two."),
    ]);
    app.send("draw").await;
    approve_next(&mut app).await;
    assert_eq!(app.stdout().trim(), "drew", "the run really wrote them");

    // Switched away and back: the view carries what the history recorded (images only).
    let runs = recorded_images(&mut app).await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    let (run, images) = runs[0].clone();
    assert_eq!(images, ["out/second.png", "plot.png"]);
    let shown = app.desktop.read_run_image(run, "plot.png").expect("read");
    assert!(
        matches!(&shown, RunImage::Shown { data_url } if data_url.starts_with("data:image/png;base64,")),
        "{shown:?}"
    );

    // After a restart, still there; once deleted, a placeholder; never a file it did not record.
    app.restart().await;
    assert_eq!(recorded_images(&mut app).await, runs);
    let workspace = app.desktop.workspace_dir(app.conversation).expect("dir");
    std::fs::remove_file(workspace.join("plot.png")).expect("delete plot.png");
    assert_eq!(
        app.desktop.read_run_image(run, "plot.png").expect("read"),
        RunImage::Gone
    );
    assert!(matches!(
        app.desktop.read_run_image(run, "out/second.png"),
        Ok(RunImage::Shown { .. })
    ));
    // Replaced by something that is no image: refused, not passed off as one.
    std::fs::write(workspace.join("out/second.png"), "<script>").expect("overwrite");
    assert!(matches!(
        app.desktop.read_run_image(run, "out/second.png"),
        Ok(RunImage::Refused { .. })
    ));
    std::fs::write(workspace.join("other.png"), b"\x89PNG\r\n\x1a\n").expect("write");
    for unrecorded in ["other.png", "table.csv", "../plot.png"] {
        let refused = app.desktop.read_run_image(run, unrecorded);
        assert!(refused.is_err(), "{unrecorded}: {refused:?}");
    }
}
