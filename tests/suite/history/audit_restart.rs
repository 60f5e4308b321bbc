//! `chat` on a tampered audit log (issue 12, item 4): it no longer appends to it without a
//! word. The log is kept aside unchanged, a new chain starts with a link to it, the CLI says
//! so once, and `audit verify` checks the new chain and names the old one.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use ironclaw_llm::testing::ScriptedServer;
use ironclaw_tests::agent::*;
use ironclaw_tests::TestEnv;
use pretty_assertions::assert_eq;

use super::text;

/// The OS keyring where it works, else an anchor file outside the data folder.
fn with_anchor(env: &TestEnv, mut cmd: Command) -> Command {
    if ironclaw_llm::keyring_secret("ironclaw-keyring-probe").is_err() {
        cmd.env(
            ironclaw_agent::audit_anchor::ANCHOR_FILE_ENV,
            env.root().join("anchor-outside-data"),
        );
    }
    cmd
}

/// One `ironclaw chat --deny-all` turn in which the model asks for two runs (four entries).
async fn chat(env: &TestEnv) -> Output {
    let (server, base) = ScriptedServer::start().await.expect("scripted server");
    server.push_all([
        asks_to_run("call_1", "python", "print(1)"),
        asks_to_run("call_2", "python", "print(2)"),
        says("Done."),
    ]);
    let mut cmd = with_anchor(env, env.cli());
    cmd.args([
        "chat",
        "--provider",
        "openai",
        "--base-url",
        &format!("{base}/v1"),
        "--model",
        MODEL,
        "--deny-all",
        "-m",
        "go",
    ])
    .stdin(Stdio::null());
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(true);
    let out = tokio::time::timeout(EVENT_GUARD, cmd.output())
        .await
        .expect("ironclaw chat finished")
        .expect("run ironclaw chat");
    assert!(out.status.success(), "{}", text(&out.stderr));
    out
}

fn audit_verify(env: &TestEnv) -> Output {
    with_anchor(env, env.cli())
        .args(["audit", "verify"])
        .output()
        .expect("run ironclaw audit verify")
}

fn kept_logs(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .expect("data dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".tampered.jsonl"))
        .collect()
}

async fn tampered_then_chat(env: &TestEnv, tamper: impl Fn(&Path)) {
    chat(env).await;
    let path = ironclaw_agent::state::audit_path(&env.paths);
    tamper(&path);
    let tampered = std::fs::read(&path).expect("audit log");
    // The attack worked: the log as it stands fails verification.
    let before = audit_verify(env);
    assert_eq!(before.status.code(), Some(2), "{}", text(&before.stdout));
    assert!(text(&before.stdout).contains("TAMPERED"));

    let out = chat(env).await;
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr.matches("the audit log was tampered with").count(),
        1,
        "{stderr}"
    );
    let kept = kept_logs(&env.paths.data_dir);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(stderr.contains(&*kept[0].file_name().expect("name").to_string_lossy()));
    assert!(
        std::fs::read(&kept[0]).expect("kept log") == tampered,
        "kept unchanged"
    );

    let after = audit_verify(env);
    let shown = text(&after.stdout);
    assert!(after.status.success(), "{shown}");
    assert!(shown.contains("chain intact"), "{shown}");
    assert!(shown.contains("this chain was started because"), "{shown}");
    assert!(shown.contains(&kept[0].display().to_string()), "{shown}");
    assert!(shown.contains("unchanged since it was kept"), "{shown}");

    // Once: the next chat appends to the new chain and says nothing about it.
    let again = chat(env).await;
    assert!(
        !text(&again.stderr).contains("tampered"),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(kept_logs(&env.paths.data_dir).len(), 1);
    assert!(audit_verify(env).status.success());
}

/// Input: one decision in the middle of the log edited (denied → approved), hashes left alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_on_an_edited_audit_log_starts_a_new_chain_and_says_so_once() {
    let env = TestEnv::new().await;
    tampered_then_chat(&env, |path| {
        let body = std::fs::read_to_string(path).expect("read");
        assert!(body.contains("\"approved\":false"), "{body}");
        std::fs::write(
            path,
            body.replacen("\"approved\":false", "\"approved\":true", 1),
        )
        .expect("edit");
    })
    .await;
}

/// Input: the last two entries cut off (the chain left valid; only the anchor shows it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_on_an_audit_log_cut_short_starts_a_new_chain_and_says_so_once() {
    let env = TestEnv::new().await;
    tampered_then_chat(&env, |path| {
        let body = std::fs::read_to_string(path).expect("read");
        let lines: Vec<&str> = body.lines().collect();
        assert!(lines.len() > 2, "{body}");
        let kept: String = lines[..lines.len() - 2]
            .iter()
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(path, kept).expect("cut");
    })
    .await;
}
