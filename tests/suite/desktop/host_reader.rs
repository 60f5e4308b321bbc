//! The host-side reader against what sandboxed code can leave in its workspace: FIFOs where
//! files are expected, and files swapped for links to host files while the host reads them.
//! Every host call runs on its own thread under a guard, so a hang fails the test instead of
//! stalling it.

use std::sync::Arc;
use std::time::Duration;

use ironclaw_desktop::types::EntryKind;
use ironclaw_desktop::Desktop;
use ironclaw_protocol::{AgentEvent, ConversationId, Decision, ExecutionId, OutputStream};
use ironclaw_tests::agent::{asks_to_run, says};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

use super::App;

/// Far longer than any of these reads takes; past it the call is taken to hang.
const HANG_GUARD: Duration = Duration::from_secs(20);

/// Runs `call` on a plain thread (not the runtime's, which a hang would take down with it)
/// and fails the test when it has not returned within [`HANG_GUARD`].
async fn bounded<T: Send + 'static>(what: &str, call: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let _ = tx.send(call());
    });
    match tokio::time::timeout(HANG_GUARD, rx).await {
        Ok(Ok(value)) => value,
        Ok(Err(_)) => panic!("{what} panicked"),
        Err(_) => panic!("{what} did not return within {HANG_GUARD:?}: it hangs"),
    }
}

/// Approves the next request as it is and waits for the end of the turn.
async fn approve_next(app: &mut App) {
    app.approve_next_request().await;
    app.turn_end().await;
}

fn ended_runs(seen: &[AgentEvent]) -> Vec<ExecutionId> {
    seen.iter()
        .filter_map(|e| match e {
            AgentEvent::ExecutionEnded { execution_id, .. } => Some(*execution_id),
            _ => None,
        })
        .collect()
}

const LOUD: &str = "import sys\nsys.stdout.write('inside-log\\n' + 'x' * (2 << 20))";

/// The name of the full log of `run` (its stdout's), as the history recorded it.
fn log_name(app: &App, run: ExecutionId) -> String {
    let x = app.desktop.history().get_execution(run).expect("execution");
    let path = x.log_path.expect("2 MiB of output leaves a full log");
    std::path::Path::new(&path)
        .file_name()
        .expect("log file name")
        .to_string_lossy()
        .into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifos_in_a_subfolder_and_in_place_of_a_log_hang_neither_the_listing_nor_a_reader() {
    let mut app = App::start().await;
    app.open().await;
    app.push_all([asks_to_run("c1", "python", LOUD), says("Loud.")]);
    app.send("loud").await;
    approve_next(&mut app).await;
    let loud = ended_runs(&app.seen)[0];
    let log = log_name(&app, loud);
    let make_fifos = format!(
        "import os\nos.makedirs('/workspace/sub/deeper')\n\
         for p in ['sub/pipe', 'sub/deeper/pic.png', 'sub/deeper/notes.txt']:\n    os.mkfifo('/workspace/' + p)\n\
         log = '/workspace/.ironclaw/logs/{log}'\nos.remove(log)\nos.mkfifo(log)\n\
         print(sorted(os.listdir('/workspace/sub')), os.path.exists(log))"
    );
    app.push_all([asks_to_run("c2", "python", &make_fifos), says("Pipes.")]);
    app.send("pipes").await;
    // The files a run changed are listed when it ends: a blocking open of a FIFO there would
    // keep this turn from ever ending.
    approve_next(&mut app).await;
    // The loud run's output ends without a newline: look at the end of the whole stream.
    assert!(
        app.stdout().trim_end().ends_with("['deeper', 'pipe'] True"),
        "the FIFOs were made"
    );

    let (desktop, id) = (app.desktop.clone(), app.conversation);
    let listing = bounded("list_workspace", move || desktop.list_workspace(id))
        .await
        .expect("list");
    let kind = |path: &str| listing.iter().find(|e| e.path == path).map(|e| e.kind);
    assert_eq!(kind("sub/pipe"), Some(EntryKind::Fifo), "{listing:?}");
    assert_eq!(kind("sub/deeper/pic.png"), Some(EntryKind::Fifo));
    assert_eq!(kind("sub/deeper/notes.txt"), Some(EntryKind::Fifo));

    let desktop = app.desktop.clone();
    let image = bounded("read_workspace_image", move || {
        desktop.read_workspace_image(id, "sub/deeper/pic.png")
    })
    .await;
    let err = image.expect_err("a FIFO is no image");
    assert!(err.to_string().contains("named pipe"), "{err}");

    let desktop = app.desktop.clone();
    let page = bounded("read_log", move || {
        desktop.read_log(loud, OutputStream::Stdout, 0, 4096)
    })
    .await;
    let err = page.expect_err("a FIFO is no log");
    assert!(err.to_string().contains("named pipe"), "{err}");
}

/// One more conversation of the same app, with its own event stream.
struct Other {
    id: ConversationId,
    events: UnboundedReceiver<AgentEvent>,
}

impl Other {
    async fn open(desktop: &Desktop) -> Self {
        let id = desktop.create_conversation().expect("create").id;
        let (tx, events) = unbounded_channel();
        desktop
            .open_conversation(
                id,
                Arc::new(move |e: &AgentEvent| {
                    let _ = tx.send(e.clone());
                }),
            )
            .await
            .expect("open");
        Self { id, events }
    }

    async fn next(&mut self, what: &str, pred: impl Fn(&AgentEvent) -> bool) -> AgentEvent {
        let guard = ironclaw_tests::agent::EVENT_GUARD;
        loop {
            match tokio::time::timeout(guard, self.events.recv()).await {
                Ok(Some(e)) if pred(&e) => return e,
                Ok(Some(_)) => {}
                Ok(None) => panic!("events of {} ended before {what}", self.id),
                Err(_) => panic!("no {what} in conversation {} within {guard:?}", self.id),
            }
        }
    }

    /// Sends, approves the one request, and waits for the turn to end.
    async fn run(&mut self, desktop: &Desktop, text: &str) {
        desktop
            .send_message(self.id, text, Vec::new())
            .await
            .expect("send");
        let req = match self
            .next("approvalRequested", |e| {
                matches!(e, AgentEvent::ApprovalRequested(_))
            })
            .await
        {
            AgentEvent::ApprovalRequested(r) => r,
            _ => unreachable!(),
        };
        desktop
            .decide(
                self.id,
                req.approval_id,
                req.code_hash,
                Decision::ApproveOnce,
                true,
            )
            .await
            .expect("decide");
        self.next("turnEnded", |e| matches!(e, AgentEvent::TurnEnded { .. }))
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_conversations_that_leave_fifos_do_not_hold_up_a_third_conversation_or_doctor() {
    let app = App::start().await;
    let desktop = app.desktop.clone();
    // As many FIFO-leaving conversations as the app has async workers: with a blocking open
    // in the event pump, each would hold one worker for good.
    let fifo =
        "import os\nos.makedirs('/workspace/sub')\nos.mkfifo('/workspace/sub/pipe')\nprint('ok')";
    let mut stuck = Vec::new();
    for n in 0..2 {
        let mut c = Other::open(&desktop).await;
        app.push_all([
            asks_to_run(&format!("f{n}"), "python", fifo),
            says("Left a pipe."),
        ]);
        c.run(&desktop, "leave a pipe").await;
        stuck.push(c);
    }
    // Their listings are read concurrently while the third conversation asks for approval.
    let listings: Vec<_> = stuck
        .iter()
        .map(|c| {
            let (d, id) = (desktop.clone(), c.id);
            tokio::spawn(
                async move { bounded("list_workspace", move || d.list_workspace(id)).await },
            )
        })
        .collect();

    let mut third = Other::open(&desktop).await;
    app.push_all([asks_to_run("t", "python", "print(1)"), says("One.")]);
    desktop
        .send_message(third.id, "third", Vec::new())
        .await
        .expect("send");
    let request = third
        .next("the third conversation's approval request", |e| {
            matches!(e, AgentEvent::ApprovalRequested(_))
        })
        .await;
    assert!(matches!(request, AgentEvent::ApprovalRequested(_)));
    let report = tokio::time::timeout(HANG_GUARD, desktop.doctor())
        .await
        .expect("doctor answers while the other conversations hold FIFOs");
    assert_eq!(
        report.docker.state,
        ironclaw_desktop::doctor::DockerState::Ok,
        "{report:?}"
    );
    for listing in listings {
        let listing = listing.await.expect("join").expect("list");
        assert!(
            listing
                .iter()
                .any(|e| e.path == "sub/pipe" && e.kind == EntryKind::Fifo),
            "{listing:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_a_conversation_names_its_instruction_files_and_a_fifo_among_them_does_not_hang_it()
{
    let mut app = App::start().await;
    std::fs::create_dir_all(&app.env.paths.config_dir).expect("config dir");
    std::fs::write(app.env.paths.config_dir.join("AGENTS.md"), "Be brief.")
        .expect("the person's AGENTS.md");
    let folder = app
        .desktop
        .workspace_dir(app.conversation)
        .expect("the workspace folder");
    std::fs::write(folder.join("AGENTS.md"), "Use pandas.").expect("the project's AGENTS.md");
    nix::unistd::mkfifo(&folder.join("IRONCLAW.md"), nix::sys::stat::Mode::S_IRWXU)
        .expect("a FIFO where IRONCLAW.md would be");
    let view = tokio::time::timeout(HANG_GUARD, app.open())
        .await
        .expect("open_conversation returned: the FIFO did not hang it");
    let files: Vec<_> = view
        .instructions
        .iter()
        .map(|f| {
            (
                f.scope.as_str(),
                f.name.as_str(),
                f.bytes,
                f.problem.is_some(),
            )
        })
        .collect();
    assert_eq!(
        files,
        [
            ("user", "AGENTS.md", 9, false),
            ("workspace", "AGENTS.md", 11, false),
            ("workspace", "IRONCLAW.md", 0, true),
        ]
    );
}
