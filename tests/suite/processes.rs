//! Processes code leaves behind are killed when its execution ends, however they detached.

use ironclaw_tests::*;

/// Non-zombie processes in the container, by command name.
async fn live_commands(env: &TestEnv) -> Vec<String> {
    ironclaw_tests::escape::live_commands(env, "s").await
}

#[tokio::test]
async fn detached_python_subprocess_is_killed_when_the_execution_ends() {
    let env = TestEnv::new().await;
    let r = py(
        &env,
        "s",
        // Waits until the detached child really is `sleep` (setsid has exec'd it).
        "import subprocess, time\nsubprocess.Popen(['setsid', 'sleep', '1000'])\n\
         for _ in range(500):\n    if subprocess.run(['pgrep', '-x', 'sleep']).returncode == 0:\n        break\n    time.sleep(0.02)",
    )
    .await;
    assert_eq!(r.exit_code, 0, "{}", r.stderr);
    assert!(
        r.stray_processes_killed.iter().any(|p| p == "sleep"),
        "{:?}",
        r.stray_processes_killed
    );
    let live = live_commands(&env).await;
    assert!(!live.iter().any(|c| c == "sleep"), "{live:?}");
}

#[tokio::test]
async fn double_forked_shell_daemon_is_killed_when_the_execution_ends() {
    let env = TestEnv::new().await;
    let r = sh(
        &env,
        "s",
        "( setsid sleep 1000 & ) ; nohup sleep 999 >/dev/null 2>&1 &\n\
         for _ in $(seq 500); do [ \"$(pgrep -c -x sleep)\" -ge 2 ] && break; sleep 0.02; done",
    )
    .await;
    assert_eq!(r.exit_code, 0, "{}", r.stderr);
    let killed = r
        .stray_processes_killed
        .iter()
        .filter(|p| *p == "sleep")
        .count();
    assert_eq!(killed, 2, "{:?}", r.stray_processes_killed);
    let live = live_commands(&env).await;
    assert!(!live.iter().any(|c| c == "sleep"), "{live:?}");
}
