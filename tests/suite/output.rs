//! Output: streamed exactly as written (binary-safe, streams apart), and bounded in memory
//! however much there is, with the full text kept in a log file.

use ironclaw_tests::*;
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

const HUNDRED_MIB: u64 = 100 << 20;

#[tokio::test]
async fn hundred_megabytes_stream_through_with_bounded_memory() {
    let env = TestEnv::new().await;
    ok(&py(&env, "s", "import sys").await);
    let capture = env.sandbox.policy().capture_bytes;
    let rss_before = peak_rss_bytes();

    let mut streamed = 0u64;
    let mut events = 0u64;
    let mut on_event = |e: ExecEvent| {
        if let ExecEvent::Stdout(b) = e {
            streamed += b.len() as u64;
            events += 1;
        }
    };
    let request = ExecRequest::new(
        Language::Python,
        "b = b'x' * 65536\nfor _ in range(1600):\n    sys.stdout.buffer.write(b)",
    );

    let r = exec_with(
        &env,
        "s",
        &request,
        &CancellationToken::new(),
        &mut on_event,
    )
    .await
    .expect("exec");

    assert_eq!(r.exit_code, 0, "{}", r.stderr);
    assert_eq!(streamed, HUNDRED_MIB, "every byte reaches the event stream");
    // Progressively, not as one blob at the end (the chunk size is the supervisor's business).
    assert!(events >= 10, "streamed in chunks, got {events} events");
    assert_eq!(r.stdout_bytes, HUNDRED_MIB);
    assert!(r.truncated);
    assert!(
        (r.stdout.len() as u64) <= capture + 1024,
        "kept {} bytes of stdout with a {capture}-byte cap",
        r.stdout.len()
    );
    assert!(r.stdout.starts_with("xxxx") && r.stdout.ends_with("xxxx"));
    assert!(r.stdout.contains("bytes omitted"), "marks the cut");
    let log = r.log_file.as_ref().expect("log_file for truncated output");
    assert!(log.starts_with(env.workspace("s")), "{}", log.display());
    let meta = std::fs::metadata(log).expect("log file on the host");
    assert_eq!(meta.len(), HUNDRED_MIB);
    assert!(
        r.stdout.contains(&log.display().to_string()) || r.stdout.contains("full output"),
        "the capture says where the rest is"
    );

    let grown = peak_rss_bytes().saturating_sub(rss_before);
    assert!(
        grown < 64 << 20,
        "host memory grew by {} MiB for 100 MiB of output",
        grown >> 20
    );
}

#[tokio::test]
async fn stdout_and_stderr_stay_apart_and_in_order() {
    let env = TestEnv::new().await;
    let out = exec(
        &env,
        "s",
        ExecRequest::new(
            Language::Python,
            "import sys\nfor i in range(1, 1001):\n    print(i, file=sys.stdout if i % 2 else sys.stderr)",
        ),
    )
    .await;
    let odd: String = (1..=1000)
        .filter(|i| i % 2 == 1)
        .map(|i| format!("{i}\n"))
        .collect();
    let even: String = (1..=1000)
        .filter(|i| i % 2 == 0)
        .map(|i| format!("{i}\n"))
        .collect();
    assert_eq!(out.result.exit_code, 0);
    assert_eq!(out.result.stdout, odd);
    assert_eq!(out.result.stderr, even);
    assert_eq!(String::from_utf8(out.stdout).expect("utf8"), odd);
    assert_eq!(String::from_utf8(out.stderr).expect("utf8"), even);

    // Same from the shell.
    let out = exec(
        &env,
        "s",
        ExecRequest::new(
            Language::Shell,
            "for i in $(seq 1 1000); do if [ $((i % 2)) = 1 ]; then echo $i; else echo $i >&2; fi; done",
        ),
    )
    .await;
    assert_eq!(out.result.stdout, odd);
    assert_eq!(out.result.stderr, even);
}

#[tokio::test]
async fn binary_and_invalid_utf8_output_is_passed_through_exactly() {
    let env = TestEnv::new().await;
    let out = exec(
        &env,
        "s",
        ExecRequest::new(
            Language::Python,
            // Assigned: a bare trailing expression would be echoed, notebook-style ("256\n").
            "import sys\nn = sys.stdout.buffer.write(bytes(range(256)))\nm = sys.stderr.buffer.write(b'\\xff\\xfe\\x00err')",
        ),
    )
    .await;
    assert_eq!(out.result.exit_code, 0, "{}", out.result.stderr);
    let all: Vec<u8> = (0..=255u8).collect();
    assert_eq!(out.stdout, all);
    assert_eq!(out.stderr, b"\xff\xfe\x00err".to_vec());
    assert_eq!(out.result.stdout_bytes, 256);
    // The text form is lossy but present: ASCII survives, invalid bytes become U+FFFD.
    assert!(out.result.stdout.contains("ABC"));
    assert!(out.result.stdout.contains('\u{fffd}'));
    // The session still works afterwards (the framing was not confused).
    assert_eq!(ok(&py(&env, "s", "print('next')").await), "next");
}

#[tokio::test]
async fn resource_samples_stream_during_long_executions() {
    let env = TestEnv::new().await;
    let limit = env
        .sandbox
        .policy()
        .profile(None)
        .expect("profile")
        .1
        .memory_bytes;
    let mut samples = Vec::new();
    let mut on_event = |e: ExecEvent| {
        if let ExecEvent::Resources(s) = e {
            samples.push(s);
        }
    };
    let r = exec_with(
        &env,
        "s",
        &ExecRequest::new(
            Language::Python,
            "import time\nb = bytearray(64 << 20)\ntime.sleep(4)",
        ),
        &CancellationToken::new(),
        &mut on_event,
    )
    .await
    .expect("exec");
    assert_eq!(r.exit_code, 0);
    assert!(!samples.is_empty(), "no resource samples in 4 s");
    for s in &samples {
        assert_eq!(s.memory_limit_bytes, limit);
        assert!(s.pids >= 3, "{s:?}");
    }
    assert!(
        samples.iter().any(|s| s.memory_bytes >= 64 << 20),
        "the 64 MiB buffer shows up: {samples:?}"
    );
    assert!(
        r.peak_memory_bytes >= 64 << 20,
        "peak {}",
        r.peak_memory_bytes
    );
}
