//! Interpreter state: it persists between executions and across client restarts, and a
//! timeout or a cancel interrupts the code without losing it.

use std::time::{Duration, Instant};

use ironclaw_tests::*;
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn python_variables_imports_and_functions_persist() {
    let env = TestEnv::new().await;
    ok(&py(
        &env,
        "s",
        "x = 41\nimport json as j\ndef inc(v):\n    return v + 1",
    )
    .await);
    let r = py(&env, "s", "print(inc(x), j.dumps([x]))").await;
    assert_eq!(ok(&r), "42 [41]");
    assert!(!r.container_started && !r.interpreter_restarted);
}

#[tokio::test]
async fn shell_cwd_and_exported_variables_persist() {
    let env = TestEnv::new().await;
    ok(&sh(
        &env,
        "s",
        "mkdir -p /tmp/deep/er && cd /tmp/deep/er\nexport GREETING='hi there'\nplain=1",
    )
    .await);
    assert_eq!(
        ok(&sh(
            &env,
            "s",
            "pwd; echo \"$GREETING\"; echo \"$plain\"; bash -c 'echo $GREETING'"
        )
        .await),
        "/tmp/deep/er\nhi there\n1\nhi there"
    );
}

#[tokio::test]
async fn state_survives_a_client_restart() {
    let mut env = TestEnv::new().await;
    ok(&py(&env, "s", "survivor = 'still here'").await);
    ok(&sh(&env, "s", "export SURVIVOR=yes").await);
    let id = env.container_id("s").await.expect("container");
    env.restart_client().await;
    let r = py(&env, "s", "print(survivor)").await;
    assert_eq!(ok(&r), "still here");
    assert!(!r.container_started, "reattached, not restarted");
    assert_eq!(ok(&sh(&env, "s", "echo $SURVIVOR").await), "yes");
    assert_eq!(env.container_id("s").await, Some(id), "same container");
}

#[tokio::test]
async fn python_timeout_interrupts_and_keeps_the_interpreter() {
    let env = TestEnv::new().await;
    ok(&py(&env, "s", "before = 'kept'").await);

    let r = exec(
        &env,
        "s",
        ExecRequest::new(Language::Python, "while True:\n    pass").timeout(Duration::from_secs(1)),
    )
    .await
    .result;
    assert!(r.timed_out, "{r:?}");
    assert!(!r.cancelled);
    assert_eq!(r.exit_code, 124);
    assert!(!r.interpreter_lost, "SIGINT must be enough for a busy loop");
    assert!(r.duration_ms >= 1000.0, "{}", r.duration_ms);
    let next = py(&env, "s", "print(before)").await;
    assert_eq!(ok(&next), "kept");
    assert!(!next.interpreter_restarted && !next.container_started);
}

#[tokio::test]
async fn shell_timeout_interrupts_and_keeps_the_interpreter() {
    let env = TestEnv::new().await;
    ok(&sh(&env, "s", "export BEFORE=kept; cd /tmp").await);

    let r = exec(
        &env,
        "s",
        ExecRequest::new(Language::Shell, "sleep 100; echo should-not-run")
            .timeout(Duration::from_secs(1)),
    )
    .await
    .result;
    assert!(r.timed_out, "{r:?}");
    assert_eq!(r.exit_code, 124);
    assert!(
        !r.stdout.contains("should-not-run"),
        "the rest of the cell ran"
    );
    let next = sh(&env, "s", "echo $BEFORE $PWD").await;
    assert_eq!(ok(&next), "kept /tmp");
    assert!(!r.interpreter_lost && !next.interpreter_restarted);
    // No `sleep` survived the timeout.
    let live = ironclaw_tests::escape::live_commands(&env, "s").await;
    assert!(!live.iter().any(|c| c == "sleep"), "{live:?}");
}

#[tokio::test]
async fn cancel_interrupts_and_keeps_the_interpreter() {
    let env = TestEnv::new().await;
    ok(&py(&env, "s", "before = 'kept'\nimport time").await);
    let cancel = CancellationToken::new();
    let trigger = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            cancel.cancel();
        })
    };

    let out = try_exec(
        &env,
        "s",
        &ExecRequest::new(
            Language::Python,
            "print('going', flush=True)\ntime.sleep(30)\nprint('woke')",
        ),
        &cancel,
    )
    .await
    .expect("cancel is a result, not an error");
    trigger.await.expect("trigger");
    let r = out.result;
    assert!(r.cancelled, "{r:?}");
    assert!(!r.timed_out);
    assert_eq!(r.exit_code, 130);
    assert_eq!(r.stdout, "going\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("KeyboardInterrupt"));
    assert!(!r.interpreter_lost);
    let next = py(&env, "s", "print(before)").await;
    assert_eq!(ok(&next), "kept");
    assert!(!next.interpreter_restarted);
}

#[tokio::test]
async fn exit_keeps_the_interpreter_but_a_dead_one_is_restarted() {
    let env = TestEnv::new().await;
    // `exit()` / `sys.exit()` end the cell, not the interpreter: the code is the exit status.
    let r = py(&env, "s", "kept = 1\nexit(4)").await;
    assert_eq!(r.exit_code, 4);
    assert!(!r.interpreter_lost);
    assert_eq!(ok(&py(&env, "s", "print(kept)").await), "1");
    // `os._exit` really ends the process: reported, and a fresh interpreter takes over.
    let r = py(&env, "s", "import os\nos._exit(3)").await;
    assert_eq!(r.exit_code, 3);
    assert!(r.interpreter_lost);
    let next = py(&env, "s", "print('kept' in globals())").await;
    assert_eq!(ok(&next), "False");
    assert!(next.interpreter_restarted && !next.container_started);
    // Same for the shell: `exit 3` ends bash, the next run gets a new one.
    let r = sh(&env, "s", "export GONE=1; exit 3").await;
    assert_eq!(r.exit_code, 3);
    let next = sh(&env, "s", "echo \"[$GONE]\"").await;
    assert_eq!(ok(&next), "[]");
    assert!(next.interpreter_restarted);
}

#[tokio::test]
async fn second_client_gets_session_busy_while_code_runs() {
    let env = TestEnv::new().await;
    ok(&py(&env, "s", "import time").await);
    let other = env.second_client().await;
    let running = py(&env, "s", "time.sleep(2)\nprint('first')");
    let contender = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        try_exec_on(
            &other,
            "s",
            &ExecRequest::new(Language::Python, "print('second')"),
            &CancellationToken::new(),
        )
        .await
    };
    let (first, second) = tokio::join!(running, contender);
    assert_eq!(ok(&first), "first");
    match second {
        Err(e @ Error::SessionBusy { .. }) => assert!(e.is_retryable()),
        other => panic!("expected SessionBusy, got {other:?}"),
    }
    // Once the first is done the other client gets its turn, in the same interpreter.
    let out = try_exec_on(
        &other,
        "s",
        &ExecRequest::new(Language::Python, "print(time.__name__)"),
        &CancellationToken::new(),
    )
    .await
    .expect("free again");
    assert_eq!(ok(&out.result), "time");
}

#[tokio::test]
async fn executions_in_one_session_of_one_client_run_one_at_a_time() {
    let env = TestEnv::new().await;
    ok(&py(&env, "s", "import time").await);
    let t = Instant::now();
    let (a, b) = tokio::join!(
        py(&env, "s", "time.sleep(1)\nprint('a')"),
        sh(&env, "s", "sleep 1; echo b"),
    );
    assert_eq!((ok(&a), ok(&b)), ("a".to_string(), "b".to_string()));
    assert!(
        t.elapsed() >= Duration::from_secs(2),
        "queued, not rejected or overlapped: {:?}",
        t.elapsed()
    );
}

/// A cancel that reaches the supervisor before the worker has started running the cell (here:
/// while it still parses a large cell) must still interrupt it gently.
///
/// Python's compiler does not look at signals, so the interrupt lands once the parse is done,
/// and the supervisor's escalation gives it two seconds before it kills the interpreter. The
/// cell is sized to parse in about 0.15 s here: 100,000 lines took 0.75 s on an idle machine and
/// over two seconds in a loaded CI run, which then failed this test for the parse's time alone.
#[tokio::test]
async fn cancel_at_the_very_start_keeps_the_interpreter() {
    let env = TestEnv::new().await;
    ok(&py(&env, "s", "before = 'kept'\nimport time").await);
    let code = format!("{}time.sleep(30)\n", "a = 1\n".repeat(20_000));
    let cancel = CancellationToken::new();
    cancel.cancel();
    let r = try_exec(
        &env,
        "s",
        &ExecRequest::new(Language::Python, code),
        &cancel,
    )
    .await
    .expect("result")
    .result;
    assert!(r.cancelled);
    let next = py(&env, "s", "print(globals().get('before'))").await;
    assert!(
        !r.interpreter_lost && ok(&next) == "kept",
        "the interpreter was killed instead of interrupted: {r:?}"
    );
}

#[tokio::test]
async fn sub_millisecond_timeout_is_still_a_timeout() {
    let env = TestEnv::new().await;
    ok(&py(&env, "s", "import time").await);

    let r = exec(
        &env,
        "s",
        ExecRequest::new(Language::Python, "time.sleep(30)").timeout(Duration::from_micros(500)),
    )
    .await
    .result;
    assert!(r.timed_out && !r.cancelled, "{r:?}");
}

#[tokio::test]
async fn shell_code_cannot_replace_prompt_command_and_gets_a_clear_error() {
    // IronClaw reserves PROMPT_COMMAND to learn when a shell cell ends; code that tries to
    // replace it gets bash's own clear error at once, instead of a hang until the timeout.
    let env = TestEnv::new().await;
    let r = exec(
        &env,
        "s",
        ExecRequest::new(Language::Shell, "PROMPT_COMMAND='history -a'; echo hi")
            .timeout(Duration::from_secs(30)),
    )
    .await
    .result;
    assert!(!r.timed_out && !r.interpreter_lost, "{r:?}");
    assert_ne!(r.exit_code, 0);
    assert!(
        r.stderr.contains("PROMPT_COMMAND: readonly variable"),
        "{}",
        r.stderr
    );
    let next = sh(&env, "s", "echo still-here").await;
    assert_eq!(ok(&next), "still-here");
    assert!(!next.interpreter_restarted);
}
