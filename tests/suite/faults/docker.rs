//! The Docker side failing under a running session: the daemon killed mid-execution (then
//! started again) and the sandbox image deleted while sessions exist. Both run on a private
//! engine ([`PrivateEngine`]) so the shared one is never disturbed.

use std::sync::Arc;

use ironclaw_protocol::Language;
use ironclaw_sandbox::exec::{ExecEvent, ExecRequest};
use ironclaw_sandbox::{Error, Sandbox, SessionOptions};
use ironclaw_tests::{name, ok, TestEnv, EXEC_GUARD};
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::engine::PrivateEngine;

async fn run(sandbox: &Sandbox, session: &str, code: &str) -> Result<String, Error> {
    let request = ExecRequest::new(Language::Python, code);
    let session_name = name(session);
    let options = SessionOptions::default();
    let cancel = CancellationToken::new();
    let mut on_event = |_| {};
    let fut = sandbox.exec(&session_name, &options, &request, &mut on_event, &cancel);
    let result = tokio::time::timeout(EXEC_GUARD, fut)
        .await
        .unwrap_or_else(|_| panic!("execution in {session:?} hung for {EXEC_GUARD:?}"))?;
    Ok(ok(&result))
}

/// Runs `code` that prints `started` and then sleeps, in the background; returns once
/// `started` was printed, with the handle to the run's result.
async fn start_long_run(
    sandbox: &Arc<Sandbox>,
    session: &str,
) -> tokio::task::JoinHandle<Result<ironclaw_sandbox::exec::ExecResult, Error>> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let sandbox = Arc::clone(sandbox);
    let session = session.to_string();
    let task = tokio::spawn(async move {
        let request = ExecRequest::new(
            Language::Python,
            "import time\nprint('started', flush=True)\ntime.sleep(600)",
        );
        let mut on_event = |e: ExecEvent| {
            if let ExecEvent::Stdout(b) = e {
                let _ = tx.send(b);
            }
        };
        sandbox
            .exec(
                &name(&session),
                &SessionOptions::default(),
                &request,
                &mut on_event,
                &CancellationToken::new(),
            )
            .await
    });
    let mut seen = Vec::new();
    let got = tokio::time::timeout(EXEC_GUARD, async {
        while !String::from_utf8_lossy(&seen).contains("started") {
            match rx.recv().await {
                Some(b) => seen.extend_from_slice(&b),
                None => return false,
            }
        }
        true
    })
    .await;
    assert_eq!(got, Ok(true), "the long run never printed `started`");
    task
}

/// Fault: `kill -9` of dockerd while code runs, then dockerd started again.
/// Expected: the run ends at once with `ContainerGone` ("the Docker engine stopped answering"),
/// retryable; while the engine is down, a run says Docker is not running and how to start it;
/// once it is back, the session runs again with its workspace intact (interpreter state is
/// lost, and the run says so through `container_started`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docker_daemon_killed_mid_execution_fails_the_run_clearly_and_the_session_recovers() {
    let shared = TestEnv::new().await;
    let mut engine = PrivateEngine::with_sandbox_image(&shared).await;
    let sandbox = Arc::new(engine.sandbox(&shared.paths));
    assert_eq!(
        run(
            &sandbox,
            "s",
            "open('/workspace/kept.txt', 'w').write('kept')\nx = 41\nprint('ready')"
        )
        .await
        .expect("first run"),
        "ready"
    );

    // The CLI remembers this engine (see `docker::known`), to skip the handshake next time.
    let host = engine.host();
    let cli_exec = || {
        let mut cmd = shared.cli();
        cmd.env("DOCKER_HOST", &host)
            .args(["exec", "--session", "cli", "print(1)"]);
        cmd.output().expect("run ironclaw exec")
    };
    let out = cli_exec();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cache = shared.paths.engine_cache_file();
    assert!(cache.is_file(), "the CLI wrote no engine cache");

    let long = start_long_run(&sandbox, "s").await;
    engine.kill_9();
    let ended = tokio::time::timeout(EXEC_GUARD, long)
        .await
        .unwrap_or_else(|_| {
            panic!("the run did not end within {EXEC_GUARD:?} of the engine being killed")
        })
        .expect("the run's task");
    let err = ended.expect_err("a run whose engine died cannot succeed");
    let message = err.to_string();
    assert!(
        matches!(err, Error::ContainerGone { .. }) && err.is_retryable(),
        "{err:?}"
    );
    assert!(
        message.contains("Docker engine") && message.contains("workspace is intact"),
        "{message}"
    );

    // Engine down: the next run says Docker is not running and how to start it (this read
    // "Docker engine error while listing sandbox containers: client error (Connect)" before).
    let down = run(&sandbox, "s", "print(1)")
        .await
        .expect_err("no engine, no run");
    assert!(
        matches!(down, Error::DockerNotRunning { .. }),
        "want DockerNotRunning, got {down:?}: {down}"
    );
    assert!(down.to_string().contains("Start it"), "{down}");

    // The CLI says the same, whether it remembered the engine or not: `kill -9` left the socket
    // file in place, so the remembered engine still looks current and only the ping finds out.
    let socket = host.trim_start_matches("unix://").to_string();
    assert!(
        std::path::Path::new(&socket).exists() && cache.is_file(),
        "the stale socket and the engine cache must both be there for this check"
    );
    let remembered_entry = std::fs::read(&cache).expect("read the engine cache");
    let remembered = cli_exec();
    assert!(
        !cache.exists(),
        "an engine that did not answer is forgotten"
    );
    let fresh = cli_exec();
    // A new session, with the engine remembered: the run waits for the ping before it makes
    // the session's record or folder, and says the same.
    std::fs::write(&cache, &remembered_entry).expect("restore the engine cache");
    let mut cmd = shared.cli();
    cmd.env("DOCKER_HOST", &host)
        .args(["exec", "--session", "new-while-down", "print(1)"]);
    let new_session = cmd.output().expect("run ironclaw exec");
    assert!(
        !cache.exists(),
        "{}",
        String::from_utf8_lossy(&new_session.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&new_session.stderr),
        String::from_utf8_lossy(&fresh.stderr)
    );
    for made in [
        shared.paths.sessions_dir().join("new-while-down.json"),
        shared.paths.workspaces_dir().join("new-while-down"),
    ] {
        assert!(
            !made.exists(),
            "{} made while the engine was down",
            made.display()
        );
    }
    let (remembered, fresh) = (
        String::from_utf8_lossy(&remembered.stderr).into_owned(),
        String::from_utf8_lossy(&fresh.stderr).into_owned(),
    );
    assert_eq!(remembered, fresh);
    assert!(
        fresh.contains("not running") && fresh.contains("Start it"),
        "{fresh}"
    );

    engine.start().await;
    let after = match run(&sandbox, "s", "print(open('/workspace/kept.txt').read())").await {
        Ok(out) => out,
        Err(e @ Error::ContainerGone { .. }) => {
            // Allowed once: the old connection's end is noticed by this run.
            assert!(e.is_retryable());
            run(&sandbox, "s", "print(open('/workspace/kept.txt').read())")
                .await
                .unwrap_or_else(|e| panic!("second run after the restart failed: {e}"))
        }
        Err(e) => panic!("after the engine came back: {e:?}\n{}", engine.log_tail()),
    };
    assert_eq!(after, "kept");
    assert_eq!(
        run(&sandbox, "s", "print('x' in globals())")
            .await
            .expect("warm run"),
        "False",
        "the interpreter was restarted with the container"
    );
}

/// Fault: the sandbox image deleted (`docker rmi -f`) while a session's container exists.
/// Expected: the running session keeps working (Docker keeps the layers of a live container);
/// a new session fails with `ImageMissing`, naming the tag and the two ways to get it back;
/// after `image import` the new session runs and the old session's workspace is untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandbox_image_deleted_while_sessions_exist_names_the_fix_and_recovers_after_import() {
    let shared = TestEnv::new().await;
    let engine = PrivateEngine::with_sandbox_image(&shared).await;
    let sandbox = engine.sandbox(&shared.paths);
    run(
        &sandbox,
        "old",
        "open('/workspace/kept.txt', 'w').write('kept')",
    )
    .await
    .expect("first run");

    let tag = ironclaw_sandbox::image::spec().tag;
    let removed = std::process::Command::new("docker")
        .env("DOCKER_HOST", engine.host())
        .args(["rmi", "-f", &tag])
        .output()
        .expect("docker rmi");
    assert!(
        removed.status.success(),
        "{}",
        String::from_utf8_lossy(&removed.stderr)
    );
    assert!(!ironclaw_sandbox::image::exists(&engine.docker, &tag)
        .await
        .expect("inspect"));

    assert_eq!(
        run(&sandbox, "old", "print(open('/workspace/kept.txt').read())")
            .await
            .expect("the live session still runs"),
        "kept"
    );
    let err = run(&sandbox, "new", "print(1)")
        .await
        .expect_err("no image, no new container");
    let message = err.to_string();
    assert!(matches!(err, Error::ImageMissing { .. }), "{err:?}");
    assert!(
        message.contains(&tag)
            && message.contains("ironclaw image build")
            && message.contains("ironclaw image import"),
        "{message}"
    );

    // The remedy the message names.
    let archive = std::env::temp_dir().join(format!(
        "ironclaw-faults-{}.tar",
        tag.rsplit(':').next().unwrap_or("image")
    ));
    let out = shared
        .cli()
        .env("DOCKER_HOST", engine.host())
        .args(["image", "import"])
        .arg(&archive)
        .output()
        .expect("ironclaw image import");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        run(&sandbox, "new", "print('fresh')")
            .await
            .expect("after import"),
        "fresh"
    );
    let kept = std::fs::read_to_string(
        sandbox
            .workspace(&name("old"))
            .expect("old workspace")
            .join("kept.txt"),
    )
    .expect("kept.txt");
    assert_eq!(kept, "kept");
}
