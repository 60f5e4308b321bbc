//! Resource limits: running out of memory or processes stays inside the container, is
//! reported, and leaves a sandbox that still works.

use std::time::Duration;

use ironclaw_tests::*;
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn oom_is_contained_and_reported() {
    let env = TestEnv::with_policy(SMALL_LIMITS).await;
    // The profile's limit is the container's limit (cgroup v1 or v2, or gVisor's kernel's).
    let limit = ok(&sh(&env, "s", MEMORY_LIMIT_SH).await);
    assert_eq!(limit, (128u64 << 20).to_string());

    ok(&py(&env, "s", "x = 1").await);
    let big = ExecRequest::new(
        Language::Python,
        "b = bytearray(512 * 1024 * 1024)\nprint('allocated')",
    );
    if under_gvisor(&env, "s").await {
        // gVisor's kernel refuses the allocation itself (MemoryError: the interpreter and its
        // state stay), or, when gVisor's own memory reaches the limit first, the host's OOM
        // killer ends the whole sandbox and says so. Either way nothing outside is touched.
        match try_exec(&env, "s", &big, &CancellationToken::new()).await {
            Ok(out) => {
                let r = out.result;
                assert!(
                    r.stderr.contains("MemoryError") && !r.interpreter_lost,
                    "{r:?}"
                );
                assert!(!r.stdout.contains("allocated"));
                assert_eq!(ok(&py(&env, "s", "print(x)").await), "1");
            }
            Err(Error::ContainerGone { reason, .. }) => {
                assert!(reason.contains("out of memory"), "{reason}");
                assert!(py(&env, "s", "print(1)").await.container_started);
            }
            Err(e) => panic!("{e}"),
        }
        return;
    }
    let r = exec(&env, "s", big).await.result;
    assert!(r.oom_killed, "{r:?}");
    assert_ne!(r.exit_code, 0);
    assert!(!r.stdout.contains("allocated"));
    assert!(r.interpreter_lost, "the OOM killer took the interpreter");
    assert!(
        r.peak_memory_bytes > 64 << 20 && r.peak_memory_bytes <= 130 << 20,
        "peak {}",
        r.peak_memory_bytes
    );

    // Same container, fresh interpreter.
    let next = py(&env, "s", "print('alive')").await;
    assert_eq!(ok(&next), "alive");
    assert!(next.interpreter_restarted && !next.container_started);
    assert!(
        !next.oom_killed,
        "an OOM is reported once, not again on the next run"
    );
    // The shell was untouched.
    assert_eq!(ok(&sh(&env, "s", "echo fine").await), "fine");
}

#[tokio::test]
async fn fork_bomb_is_contained() {
    let env = TestEnv::with_policy(SMALL_LIMITS).await;
    let pids_max = ok(&sh(&env, "s", PIDS_LIMIT_SH).await);
    assert_eq!(pids_max, "64");

    let r = exec(
        &env,
        "s",
        ExecRequest::new(Language::Shell, ":(){ :|:& };:\nsleep 30")
            .timeout(Duration::from_secs(5)),
    )
    .await
    .result;
    assert!(r.timed_out || r.exit_code != 0, "{r:?}");
    assert!(
        r.stderr.contains("Resource temporarily unavailable") || r.stderr.contains("fork"),
        "the pids limit should have stopped the bomb: {}",
        r.stderr
    );

    // Still answering, in both languages, and nothing of the bomb is left running.
    assert_eq!(ok(&sh(&env, "s", "echo alive").await), "alive");
    assert_eq!(ok(&py(&env, "s", "print('alive')").await), "alive");
    // Without a pipeline: one's second child shows up as `bash` until it has exec'd, which
    // made this fail now and then while nothing of the bomb was left.
    let live = ironclaw_tests::escape::live_commands(&env, "s").await;
    assert!(
        live.len() <= 4
            && live
                .iter()
                .all(|c| ["tini", "python3", "bash"].contains(&c.as_str())),
        "left over: {live:?}"
    );
}

#[tokio::test]
async fn tmp_is_a_size_capped_tmpfs() {
    let env = TestEnv::new().await;
    let cap = env
        .sandbox
        .policy()
        .profile(None)
        .expect("profile")
        .1
        .tmp_bytes;
    let r = sh(
        &env,
        "s",
        &format!(
            "dd if=/dev/zero of=/tmp/fill bs=1M count={} 2>&1; echo rc=$?; stat -c %s /tmp/fill; rm -f /tmp/fill",
            (cap >> 20) + 64
        ),
    )
    .await;
    assert!(r.stdout.contains("No space left on device"), "{}", r.stdout);
    assert!(r.stdout.contains("rc=1"), "{}", r.stdout);
    let written: u64 = r
        .stdout
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .expect("size line");
    assert!(
        written <= cap,
        "wrote {written} bytes into a {cap}-byte /tmp"
    );
}
