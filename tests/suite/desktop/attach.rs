//! Files in, as the app does it: a drop's paths stay in the core under a one-time id, the copy
//! lands in the conversation's workspace owned by the sandbox user, the sandbox reads it, and
//! the next message (only that one) tells the model what arrived.

use std::os::unix::fs::MetadataExt;

use ironclaw_desktop::attachments::AttachProgress;
use ironclaw_desktop::AppEvent;
use ironclaw_tests::agent::{asks_to_run, says};

use super::App;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drop_is_attached_once_reaches_the_sandbox_and_the_next_message_says_so() {
    let mut app = App::start().await;
    app.open().await;
    let id = app.conversation;

    let src = tempfile::tempdir().expect("source dir");
    std::fs::write(src.path().join("data.csv"), "a,b\n1,2\n").expect("csv");
    std::fs::create_dir(src.path().join("proj")).expect("proj");
    std::fs::write(src.path().join("proj/main.py"), "print('hi')\n").expect("main.py");
    let secret = src.path().join("secret.txt");
    std::fs::write(&secret, "host secret").expect("secret");
    std::os::unix::fs::symlink(&secret, src.path().join("proj/key")).expect("link out");

    app.desktop
        .files_dropped(vec![src.path().join("data.csv"), src.path().join("proj")]);
    let dropped = match app
        .next_app_event("files-dropped", |e| matches!(e, AppEvent::FilesDropped(_)))
        .await
    {
        AppEvent::FilesDropped(d) => d,
        _ => unreachable!(),
    };
    // The page learns names, not paths.
    assert_eq!(dropped.names, ["data.csv", "proj"]);

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<AttachProgress>();
    let items = app
        .desktop
        .attach_dropped(id, dropped.drop_id, move |p| {
            let _ = tx.send(p);
        })
        .await
        .expect("attach the drop");
    assert_eq!(items.len(), 2);
    assert_eq!(
        (items[0].name.as_str(), items[0].is_dir),
        ("data.csv", false)
    );
    assert_eq!((items[1].name.as_str(), items[1].files), ("proj", 1));
    assert_eq!(items[1].left_out.len(), 1, "{:?}", items[1].left_out);
    assert!(
        items[1].left_out[0].starts_with("proj/key"),
        "{:?}",
        items[1].left_out
    );
    let mut last = None;
    while let Ok(p) = rx.try_recv() {
        last = Some(p);
    }
    let last = last.expect("progress was reported");
    assert_eq!(
        last.done, last.all,
        "the last report is the end of the copy"
    );

    // Once only: the same id finds nothing the second time.
    let again = app
        .desktop
        .attach_dropped(id, dropped.drop_id, |_| {})
        .await
        .expect_err("a drop is attached once");
    assert!(again.to_string().contains("drop them again"), "{again}");

    // Until sent, a reopened view still shows what the next message will mention.
    let view = app.open().await;
    assert_eq!(view.attached, items);

    let workspace = app.desktop.workspace_dir(id).expect("workspace");
    let copied = std::fs::metadata(workspace.join("data.csv")).expect("copied csv");
    let user = ironclaw_sandbox::session::user_mapping();
    assert_eq!((copied.uid(), copied.gid()), (user.uid, user.gid));
    assert!(
        !workspace.join("proj/key").exists(),
        "the link out was not copied"
    );

    app.push_all([
        asks_to_run(
            "c1",
            "python",
            "print(open('/workspace/data.csv').read().split()[1], open('/workspace/proj/main.py').read().strip())",
        ),
        says("Read them."),
        says("Second answer."),
    ]);
    app.send("what is in the csv?").await;
    app.approve_next_request().await;
    app.turn_end().await;
    assert_eq!(app.stdout(), "1,2 print('hi')\n");

    app.send("and now?").await;
    app.turn_end().await;
    let bodies: Vec<String> = app
        .server
        .chat_requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    let first = bodies
        .iter()
        .find(|b| b.contains("what is in the csv?"))
        .expect("the first message's request");
    assert!(first.contains("[The person attached files;"), "{first}");
    assert!(first.contains("/workspace/data.csv"), "{first}");
    assert!(
        first.contains("/workspace/proj/ (a folder: 1 file"),
        "{first}"
    );
    assert!(first.contains("Left out: proj/key"), "{first}");
    let last = bodies.last().expect("the second message's request");
    assert_eq!(
        last.matches("[The person attached files;").count(),
        1,
        "the model is told once: only the first message carries the note"
    );
    assert!(app.open().await.attached.is_empty());
}
