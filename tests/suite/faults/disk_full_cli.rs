//! The real `ironclaw chat` with its data folder on a small tmpfs that an approved run fills.
//! On main this printed exit 0, then "could not record the end of the turn", then "could not
//! save your message", and hung; `history ls` failed while the disk was full; and afterwards
//! the history said "interrupted, no exit code" while the audit log held the run's result.

use std::process::{Output, Stdio};
use std::time::Duration;

use ironclaw_llm::testing::ScriptedServer;
use ironclaw_tests::agent::*;
use ironclaw_tests::TestEnv;
use tokio::io::AsyncWriteExt;

use super::disk_full::Tmpfs;

/// Long past any chat in this file; a chat still running then is the hang this guards against.
const CHAT_GUARD: Duration = Duration::from_secs(120);

/// The run fills the disk holding the workspace (and the history and audit log beside it).
/// `keep_free` is the smallest the policy takes, so the quota does not stop it first.
/// The file is closed when the write fails: the interpreter lives on, and an open handle would
/// keep the space taken after the file is deleted.
const FILL: &str = "try:\n    with open('/workspace/big', 'wb') as f:\n        while True:\n            f.write(b'x' * 65536)\n            f.flush()\nexcept OSError as e:\n    print('filled, errno', e.errno)\n";
const POLICY: &str =
    "profiles:\n  standard: { timeout: 60s, workspace: { bytes: 1g, files: 1000, keep_free: 1 } }\n";

/// Runs `ironclaw chat` with `args`, typing `stdin`; fails the test if it has not exited by
/// [`CHAT_GUARD`] (killing it), instead of hanging the suite.
async fn chat(env: &TestEnv, base: &str, args: &[&str], stdin: &str) -> Output {
    let mut cmd = env.cli();
    cmd.args([
        "chat",
        "--provider",
        "openai",
        "--base-url",
        &format!("{base}/v1"),
        "--model",
        MODEL,
    ])
    .args(args);
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().expect("start ironclaw chat");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin.as_bytes()).await.expect("type");
    // Kept open: a chat that waits for more input instead of exiting is caught by the guard.
    let output = tokio::time::timeout(CHAT_GUARD, child.wait_with_output()).await;
    drop(input);
    output
        .unwrap_or_else(|_| {
            panic!("ironclaw chat {args:?} hung (still running after {CHAT_GUARD:?})")
        })
        .expect("ironclaw chat output")
}

fn cli(env: &TestEnv, args: &[&str]) -> Output {
    env.cli().args(args).output().expect("run ironclaw")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn free_bytes(path: &std::path::Path) -> u64 {
    nix::sys::statvfs::statvfs(path)
        .map(|s| s.blocks_available() * s.fragment_size())
        .expect("statvfs")
}

/// Fault: an approved run fills the disk holding IronClaw's data folder.
/// Expected: `chat` stops the turn and exits non-zero (no hang) saying what is full, with the
/// path and the space left; the model is not asked again and the run is not repeated; reads
/// work while the disk is full; once space is freed, the next start takes the run's result
/// from the audit log into the history (once), and the conversation goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_fills_the_data_disk_ends_the_chat_clearly_and_the_record_is_reconciled_later() {
    let env = TestEnv::with_policy(POLICY).await;
    let _tmpfs = Tmpfs::mount(&env.paths.data_dir, "8m");
    let data = env.paths.data_dir.display().to_string();
    let (server, base) = ScriptedServer::start().await.expect("scripted server");
    server.push(asks_to_run("call_1", "python", FILL));

    let out = chat(
        &env,
        &base,
        &["-m", "fill the disk", "-m", "a second message"],
        "a\n",
    )
    .await;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    let said = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    // The attack really ran: the code filled the disk (ENOSPC is errno 28) exactly once.
    assert_eq!(stdout.matches("filled, errno 28").count(), 1, "{said}");
    assert_eq!(free_bytes(&env.paths.data_dir), 0, "the disk is not full");
    assert!(
        !out.status.success(),
        "chat exited 0 after failing to record: {said}"
    );
    assert!(
        stderr.contains("could not record its result")
            && stderr.contains("will not be repeated")
            && stderr.contains(&format!("{data}/history.sqlite3 is full"))
            && stderr.contains("bytes free")
            && stderr.contains("Free space on that disk"),
        "the failure must say what is full, where, and what to free: {said}"
    );
    assert!(
        stderr.contains("could not save your message, so it was not sent"),
        "{said}"
    );
    assert_eq!(
        server.chat_requests().len(),
        1,
        "the model was asked again after the turn failed: {said}"
    );

    // Reads while the disk is full.
    let ls = cli(&env, &["history", "ls"]);
    assert!(
        ls.status.success(),
        "history ls failed on a full disk: {}",
        text(&ls.stderr)
    );
    let conversation = text(&ls.stdout)
        .split_whitespace()
        .next()
        .expect("a conversation listed")
        .to_string();
    let show = cli(&env, &["history", "show", &conversation]);
    assert!(
        show.status.success() && text(&show.stdout).contains("fill the disk"),
        "history show failed on a full disk: {}",
        text(&show.stderr)
    );
    let search = cli(&env, &["history", "search", "flush"]);
    assert!(
        search.status.success() && text(&search.stdout).contains(&conversation),
        "history search failed on a full disk: {}{}",
        text(&search.stdout),
        text(&search.stderr)
    );
    let verify = cli(&env, &["audit", "verify"]);
    assert!(verify.status.success(), "{}", text(&verify.stdout));
    assert_eq!(
        free_bytes(&env.paths.data_dir),
        0,
        "a read wrote to the disk"
    );

    // Space freed: the next start reconciles the history from the audit log.
    let big = find_files_named(&env.paths.data_dir, "big");
    assert_eq!(big.len(), 1, "{big:?}");
    std::fs::remove_file(&big[0]).expect("free the space");
    server.push(says("the disk has room again"));
    let out = chat(
        &env,
        &base,
        &["--conversation", &conversation, "-m", "go on"],
        "",
    )
    .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "1 run(s) the history had lost the result of were reconciled from the audit log"
        ),
        "{stderr}"
    );
    assert!(text(&out.stdout).contains("the disk has room again"));
    let shown = text(&cli(&env, &["history", "show", &conversation]).stdout);
    assert!(
        shown.contains("reconciled from audit log") && !shown.contains("no exit code"),
        "{shown}"
    );

    // Once: the next start finds nothing left to reconcile.
    server.push(says("still fine"));
    let out = chat(
        &env,
        &base,
        &["--conversation", &conversation, "-m", "again"],
        "",
    )
    .await;
    let stderr = text(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("reconciled"),
        "{stderr}"
    );
    drop(server);
}
