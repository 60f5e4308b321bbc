//! `docker pause` of a session's container during a run. Its supervisor is frozen, so it can
//! neither report the timeout nor answer a cancel: on main the run ignored `--timeout`, ended
//! after ~25 s with "the sandbox stopped responding; it will be restarted" (once "cancelled",
//! exit 130). Expected: a timeout (exit 124, the CLI's timeout wording) and a usable session.

use std::process::{Output, Stdio};
use std::time::Duration;

use ironclaw_tests::TestEnv;
use tokio::io::AsyncReadExt;

/// Far past the 2 s timeout plus the freeze checks; a run still going then is the bug.
const GUARD: Duration = Duration::from_secs(90);

async fn is_paused(env: &TestEnv, id: &str) -> bool {
    env.docker()
        .inspect_container(id, None)
        .await
        .expect("inspect the session's container")
        .state
        .and_then(|s| s.paused)
        .unwrap_or(false)
}

/// `docker pause` of `session`'s container, and proof the engine reports it frozen (the attack
/// really happened). Returns the container's id.
async fn pause(env: &TestEnv, session: &str) -> String {
    let id = env
        .container_id(session)
        .await
        .expect("the session's container");
    env.docker()
        .pause_container(&id)
        .await
        .expect("docker pause");
    assert!(is_paused(env, &id).await, "the container is not paused");
    id
}

/// Starts `ironclaw exec --timeout 2` of `code`, waits until it printed `ready` (so the run is
/// under way in the container), pauses the container, and returns how the CLI ended.
async fn exec_then_pause(env: &TestEnv, lang: &str, code: &str) -> (Output, String) {
    let mut cmd = env.cli();
    cmd.args([
        "exec",
        "--session",
        "frozen",
        "--timeout",
        "2",
        "--lang",
        lang,
        code,
    ]);
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().expect("start ironclaw exec");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut seen = Vec::new();
    let ready = tokio::time::timeout(GUARD, async {
        let mut buf = [0u8; 256];
        while !String::from_utf8_lossy(&seen).contains("ready") {
            let n = stdout.read(&mut buf).await.expect("read stdout");
            assert!(n > 0, "exec ended before the run printed ready");
            seen.extend_from_slice(&buf[..n]);
        }
    })
    .await;
    assert!(ready.is_ok(), "the run never started");
    let id = pause(env, "frozen").await;
    let output = tokio::time::timeout(GUARD, child.wait_with_output())
        .await
        .expect("exec ignored --timeout on a paused container (still running)")
        .expect("exec output");
    (output, id)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Python and a shell, the second after the first had the container killed and restarted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_container_still_times_out_at_the_deadline_and_the_session_goes_on() {
    let env = TestEnv::new().await;
    for (lang, code) in [
        (
            "python",
            "import time\nprint('ready', flush=True)\ntime.sleep(300)\nprint('not reached')",
        ),
        ("shell", "echo ready; sleep 300; echo not reached"),
    ] {
        let (out, id) = exec_then_pause(&env, lang, code).await;
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(124), "{lang}: {stderr}");
        assert!(
            stderr.contains("timed out") && stderr.contains("frozen"),
            "{lang}: {stderr}"
        );
        assert!(
            !stderr.contains("stopped responding") && !stderr.contains("cancelled"),
            "{lang}: {stderr}"
        );
        assert!(!text(&out.stdout).contains("not reached"));
        assert!(
            !is_paused(&env, &id).await,
            "{lang}: the container was left frozen"
        );

        // The session is usable afterwards.
        let next = env
            .cli()
            .args(["exec", "--session", "frozen", "print(6 * 7)"])
            .output()
            .expect("exec after the freeze");
        assert!(
            next.status.success() && text(&next.stdout).contains("42"),
            "{lang}: {}{}",
            text(&next.stdout),
            text(&next.stderr)
        );
    }
}

/// `docker pause` between runs. Expected: the next run runs nothing and says the container is
/// paused and how to resume it (it was "Docker engine error while attaching … 409 …", said
/// twice); once unpaused, the session goes on with its interpreter's state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_in_a_paused_container_runs_nothing_and_says_how_to_resume_it() {
    let env = TestEnv::new().await;
    let exec = |code: &str| {
        env.cli()
            .args(["exec", "--session", "held", code])
            .output()
            .expect("run ironclaw exec")
    };
    let first = exec("x = 41\nprint('ready')");
    assert!(first.status.success(), "{}", text(&first.stderr));
    let id = pause(&env, "held").await;

    let marker = env.workspace("held").join("ran.txt");
    let paused = exec("open('/workspace/ran.txt', 'w').write('ran')");
    let stderr = text(&paused.stderr);
    assert_eq!(paused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is paused") && stderr.contains("docker unpause"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("docker unpause").count(),
        1,
        "said once: {stderr}"
    );
    assert!(!marker.exists(), "code ran in a paused container");

    env.docker()
        .unpause_container(&id)
        .await
        .expect("docker unpause");
    let after = exec("print(x + 1)");
    assert!(after.status.success(), "{}", text(&after.stderr));
    assert_eq!(text(&after.stdout).trim(), "42");
}
