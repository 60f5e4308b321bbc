//! The workspace quota: the workspace is a folder on the host's disk, so a run that fills it past
//! the profile's quota (bytes, files, or the free space the disk keeps) is killed and told why,
//! a run that writes nothing is left alone even while another process fills the same disk, and
//! the session works again once space is freed.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Instant;

use ironclaw_sandbox::quota::walk::measure;
use ironclaw_sandbox::quota::{QuotaExceeded, QuotaKind, Usage};
use ironclaw_tests::*;
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

const MIB: u64 = 1 << 20;
const QUOTA_BYTES: u64 = 64 * MIB;
const QUOTA_FILES: u64 = 500;
const QUOTA: &str = "\
profiles:
  standard: { timeout: 60s, workspace: { bytes: 64m, files: 500 } }
";

/// How far past the quota a writer may get between the last sample and the freeze. Generous:
/// the point is that it is bounded (well short of the writer's 2 GiB), not how fast this
/// machine's disk is or how promptly a loaded machine schedules the host's watch (measured
/// 11-81 MiB past on a quiet machine, 567 MiB once at a load average of 10 on 2 cores).
const BYTES_SLACK: u64 = 1024 * MIB;
const FILES_SLACK: u64 = 20_000;

/// Writes 1 MiB at a time (a new file every 32 MiB, under any fsize limit), saying so each time,
/// up to 2 GiB: far past the quota, and bounded if the quota never stops it.
const BYTE_WRITER: &str = r#"
chunk = b"\x01" * (1 << 20)
for i in range(1, 2049):
    if i % 32 == 1:
        f = open("big-%d.bin" % (i // 32), "wb")
    f.write(chunk)
    f.flush()
    print("wrote %d MiB" % i, flush=True)
print("wrote everything", flush=True)
"#;

fn everything() -> Usage {
    Usage {
        bytes: u64::MAX,
        files: u64::MAX / 8,
    }
}

fn exceeded(out: &Output) -> &QuotaExceeded {
    out.result.quota_exceeded.as_ref().unwrap_or_else(|| {
        panic!(
            "expected the run to be stopped by the quota: {:?}\nstdout tail: {}",
            out.result,
            tail(&out.stdout)
        )
    })
}

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.lines().rev().take(3).collect::<Vec<_>>().join(" | ")
}

/// Asserts the run printed `line` (the attack really ran) and not `never`.
#[track_caller]
fn printed(out: &Output, line: &str, never: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.lines().any(|l| l == line),
        "the code should have said {line:?} first: {}",
        tail(&out.stdout)
    );
    assert!(
        !stdout.contains(never),
        "it was never stopped: {}",
        tail(&out.stdout)
    );
}

#[tokio::test]
async fn a_writer_of_bytes_is_killed_at_the_bytes_quota_and_told_why() {
    let env = TestEnv::with_policy(QUOTA).await;
    let out = exec(&env, "q", ExecRequest::new(Language::Python, BYTE_WRITER)).await;
    printed(&out, "wrote 16 MiB", "wrote everything");
    let q = exceeded(&out);
    assert_eq!(
        (q.kind, q.limit, q.stopped),
        (QuotaKind::Bytes, QUOTA_BYTES, true)
    );
    assert_eq!(out.result.exit_code, 137, "killed, not interrupted");
    assert!(out.result.interpreter_lost);
    assert!(
        out.result
            .stderr
            .contains("[IronClaw] stopped: the workspace passed its quota of 64.0 MiB"),
        "{}",
        out.result.stderr
    );
    // The walk that stopped it and the host's own count agree it is over, within the slack.
    let ws = env.workspace("q");
    let held = measure(&ws, everything()).expect("walk").usage.bytes;
    assert!(
        q.workspace_bytes > QUOTA_BYTES && held >= q.workspace_bytes - MIB,
        "{q:?} {held}"
    );
    assert!(
        held <= QUOTA_BYTES + BYTES_SLACK,
        "overshoot: {} MiB",
        held / MIB
    );
    eprintln!(
        "bytes quota: stopped at {} MiB on the host ({} MiB written per the code)",
        held / MIB,
        tail(&out.stdout)
    );
    // Nothing of the writer runs on: the container was killed.
    let id = env.container_id("q").await.expect("container");
    let state = env
        .docker()
        .inspect_container(&id, None)
        .await
        .expect("inspect")
        .state;
    assert_eq!(state.and_then(|s| s.running), Some(false));

    // While the workspace is over quota, no code runs, and the person is told what to do.
    let refused = try_exec(
        &env,
        "q",
        &ExecRequest::new(Language::Shell, "echo should-not-run"),
        &CancellationToken::new(),
    )
    .await
    .expect_err("a workspace over quota refuses the next run");
    let message = refused.to_string();
    assert!(
        matches!(refused, Error::WorkspaceOverQuota { .. }) && message.contains("delete files"),
        "{message}"
    );

    // The session still works once the person frees the space; its files are intact.
    std::fs::write(ws.join("keep.txt"), "kept").expect("write");
    for entry in std::fs::read_dir(&ws).expect("read workspace") {
        let path = entry.expect("entry").path();
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("big-"))
        {
            std::fs::remove_file(path).expect("free space");
        }
    }
    let next = exec(
        &env,
        "q",
        ExecRequest::new(Language::Python, "print(open('keep.txt').read())"),
    )
    .await;
    assert_eq!(ok(&next.result), "kept");
    assert!(next.result.container_started && next.result.quota_exceeded.is_none());
    assert_eq!(
        ok(&sh(
            &env,
            "q",
            "head -c 1000000 /dev/zero > small.bin && echo fine"
        )
        .await),
        "fine"
    );
}

/// Makes up to 100,000 of something, saying so every 100.
fn maker(make: &str) -> String {
    format!(
        "import os\nos.makedirs('many', exist_ok=True)\nfor i in range(1, 100001):\n    \
         {make}\n    if i % 100 == 0:\n        print('made %d' % i, flush=True)\n\
         print('made everything', flush=True)\n"
    )
}

async fn assert_stopped_by_the_files_quota(make: &str) {
    let env = TestEnv::with_policy(QUOTA).await;
    let out = exec(&env, "f", ExecRequest::new(Language::Python, maker(make))).await;
    printed(&out, "made 100", "made everything");
    let q = exceeded(&out);
    assert_eq!(
        (q.kind, q.limit, q.stopped),
        (QuotaKind::Files, QUOTA_FILES, true),
        "{make}"
    );
    assert!(q.message.contains("quota of 500 files"), "{}", q.message);
    let held = measure(&env.workspace("f"), everything())
        .expect("walk")
        .usage
        .files;
    assert!(
        held > QUOTA_FILES && held <= QUOTA_FILES + FILES_SLACK,
        "{make}: {held} files"
    );
    eprintln!("files quota ({make}): stopped at {held} inodes");
    // The session goes on once they are gone.
    std::fs::remove_dir_all(env.workspace("f").join("many")).expect("free the files");
    assert_eq!(ok(&py(&env, "f", "print('alive')").await), "alive");
}

#[tokio::test]
async fn a_maker_of_many_small_files_is_killed_at_the_files_quota() {
    assert_stopped_by_the_files_quota("open('many/%d' % i, 'w').close()").await;
}

#[tokio::test]
async fn a_maker_of_many_folders_is_killed_at_the_files_quota() {
    assert_stopped_by_the_files_quota("os.mkdir('many/%d' % i)").await;
}

/// A short symlink lives inside its inode (no data block): only the inode count sees it.
#[tokio::test]
async fn a_maker_of_many_symlinks_is_killed_at_the_files_quota() {
    assert_stopped_by_the_files_quota("os.symlink('/etc/passwd', 'many/%d' % i)").await;
}

/// Hard links cost no inode: the files quota does not count them, the bytes quota counts the
/// folder they grow. Shown so the gap is a known one: 1,900 links pass a quota of 500 files.
/// (The walk gives up past 4 names per allowed file, 2,000 here, and then stops the run: 1,900
/// stays under that bound however late a walk sees them, where 2,000 links plus the file and
/// its folder were caught by a walk that came late enough on a loaded machine.)
#[tokio::test]
async fn hard_links_are_counted_once_as_the_mechanism_sees_them() {
    let env = TestEnv::with_policy(QUOTA).await;
    let out = exec(
        &env,
        "h",
        ExecRequest::new(
            Language::Python,
            maker("os.link('one', 'many/%d' % i) if i <= 1900 else None")
                .replace("import os\n", "import os\nopen('one', 'w').write('x')\n"),
        ),
    )
    .await;
    printed(&out, "made everything", "Traceback");
    assert!(out.result.quota_exceeded.is_none(), "{:?}", out.result);
    let walked = measure(&env.workspace("h"), everything()).expect("walk");
    assert!(
        walked.names > 1900 && walked.usage.files < 100,
        "{walked:?}"
    );
}

#[tokio::test]
async fn a_run_that_writes_nothing_is_not_stopped_while_another_process_fills_the_same_disk() {
    let env = TestEnv::with_policy(QUOTA).await;
    assert_eq!(ok(&py(&env, "n", "print(1 + 1)").await), "2");
    let ws = env.workspace("n");
    let neighbour = env.root().join("neighbour.bin");
    let _cleanup = RemoveOnDrop(neighbour.clone());
    let ws_dev = std::fs::metadata(&ws).expect("workspace").dev();
    assert_eq!(
        std::fs::metadata(env.root()).expect("root").dev(),
        ws_dev,
        "the neighbour must write to the workspace's filesystem"
    );

    let began = Instant::now();
    let request = ExecRequest::new(
        Language::Python,
        "import time\nprint('waiting', flush=True)\ntime.sleep(4)\nprint('done')",
    );
    // When the run itself ended, taken as it ends (not once the writer is done too).
    let run = async {
        let out = exec(&env, "n", request).await;
        (out, Instant::now())
    };
    // 4 times the quota, written (and synced) by this process while the run sleeps.
    let writer = {
        let neighbour = neighbour.clone();
        tokio::task::spawn_blocking(move || -> (Instant, Instant) {
            std::thread::sleep(std::time::Duration::from_millis(500));
            let start = Instant::now();
            write_synced(&neighbour, 4 * QUOTA_BYTES);
            (start, Instant::now())
        })
    };
    let ((out, ended), written) = tokio::join!(run, writer);
    let (write_start, write_end) = written.expect("writer");
    // The other process's writing really happened, on that disk, during the run.
    assert_eq!(
        std::fs::metadata(&neighbour).expect("neighbour").len(),
        4 * QUOTA_BYTES
    );
    assert!(
        began < write_start && write_end < ended,
        "the write overlapped the run"
    );
    assert_eq!(ok(&out.result), "waiting\ndone");
    assert_eq!(out.result.quota_exceeded, None);
    assert!(!out.result.container_started && !out.result.interpreter_lost);
    // And the interpreter kept its state.
    assert_eq!(ok(&py(&env, "n", "print('still', 1 + 1)").await), "still 2");
}

fn write_synced(path: &Path, bytes: u64) {
    use std::io::Write;
    let mut f = std::fs::File::create(path).expect("create neighbour");
    let chunk = vec![7u8; MIB as usize];
    for _ in 0..bytes / MIB {
        f.write_all(&chunk).expect("write neighbour");
    }
    f.sync_all().expect("sync neighbour");
}

/// The disk's floor: with `keep_free` just under what is free now, a writer is stopped before
/// it takes the disk below it, though it is far from its bytes quota.
#[tokio::test]
async fn a_writer_is_killed_before_the_disk_drops_below_keep_free() {
    let probe = tempfile::tempdir().expect("probe");
    let avail = ironclaw_sandbox::quota::sample(probe.path())
        .expect("statvfs")
        .avail_bytes;
    let keep_free = avail.saturating_sub(512 * MIB).max(1);
    let env = TestEnv::with_policy(&format!(
        "profiles:\n  standard: {{ timeout: 60s, workspace: {{ bytes: 1t, files: 500, keep_free: {keep_free} }} }}\n"
    ))
    .await;
    let out = exec(&env, "k", ExecRequest::new(Language::Python, BYTE_WRITER)).await;
    printed(&out, "wrote 1 MiB", "wrote everything");
    let q = exceeded(&out);
    assert_eq!(
        (q.kind, q.limit, q.stopped),
        (QuotaKind::KeepFree, keep_free, true)
    );
    assert!(q.message.contains("keep_free"), "{}", q.message);
    // The room it was given is what was free when the run started minus keep_free: 512 MiB
    // when nothing else on this disk moves, more if a neighbour freed space meanwhile. Either
    // way far from the 2 GiB it would have written.
    let held = measure(&env.workspace("k"), everything())
        .expect("walk")
        .usage
        .bytes;
    assert!(held <= 1536 * MIB, "{} MiB", held / MIB);
    eprintln!("keep_free: stopped at {} MiB", held / MIB);
}
