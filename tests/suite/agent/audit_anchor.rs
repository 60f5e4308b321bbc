//! The audit chain anchored outside its file (issue 11, item 6): entries cut off the end, and a
//! chain rewritten with every later hash recomputed, both pass the chain check and are reported
//! by `ironclaw audit verify` from the anchor (the OS keyring here; a file outside the data
//! folder where this machine has no usable keyring).

use std::path::Path;
use std::process::{Command, Output, Stdio};

use ironclaw_llm::testing::ScriptedServer;
use ironclaw_store::AuditEntry;
use ironclaw_tests::agent::*;
use ironclaw_tests::TestEnv;
use sha2::{Digest, Sha256};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Points `cmd` at an anchor file when the OS keyring cannot be used on this machine, so the
/// detection is still exercised (and says which store it used).
fn with_anchor(env: &TestEnv, mut cmd: Command) -> Command {
    if ironclaw_llm::keyring_secret("ironclaw-keyring-probe").is_err() {
        let outside = env.root().join("anchor-outside-data");
        cmd.env(ironclaw_agent::audit_anchor::ANCHOR_FILE_ENV, outside);
    }
    cmd
}

/// Writes six audit entries through `ironclaw chat --deny-all` (three denied requests).
async fn six_entries(env: &TestEnv) {
    let (server, base) = ScriptedServer::start().await.expect("scripted server");
    server.push_all([
        asks_to_run("call_1", "python", "print(1)"),
        asks_to_run("call_2", "python", "print(2)"),
        asks_to_run("call_3", "python", "print(3)"),
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
}

fn audit_verify(env: &TestEnv) -> Output {
    with_anchor(env, env.cli())
        .args(["audit", "verify"])
        .output()
        .expect("run ironclaw audit verify")
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("read the audit log")
        .lines()
        .map(str::to_owned)
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, body).expect("write the audit log");
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_verify_reports_entries_cut_off_the_end_from_the_anchor() {
    let env = TestEnv::new().await;
    six_entries(&env).await;
    let path = ironclaw_agent::state::audit_path(&env.paths);
    let before = audit_verify(&env);
    assert!(before.status.success(), "{}", text(&before.stdout));
    assert!(
        text(&before.stdout).contains("the log ends where its anchor says (entry 6)"),
        "{}",
        text(&before.stdout)
    );

    let all = lines(&path);
    assert_eq!(all.len(), 6);
    write_lines(&path, &all[..4]);
    // The cut really leaves a valid chain.
    assert_eq!(
        ironclaw_store::verify(&path).expect("chain intact").entries,
        4
    );

    let out = audit_verify(&env);
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(
        shown.contains("TAMPERED") && shown.contains("the log ends at entry 4; the anchor says 6"),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_verify_reports_a_chain_rewritten_with_recomputed_hashes() {
    let env = TestEnv::new().await;
    six_entries(&env).await;
    let path = ironclaw_agent::state::audit_path(&env.paths);

    // Turn the second denial into an approval, then re-seal it and every entry after it.
    let mut entries: Vec<AuditEntry> = lines(&path)
        .iter()
        .map(|l| serde_json::from_str(l).expect("entry"))
        .collect();
    assert_eq!(entries[3].kind.as_str(), "decision");
    assert_eq!(entries[3].data["approved"], false);
    entries[3].data["approved"] = serde_json::Value::Bool(true);
    let mut out_lines = Vec::new();
    let mut prev = entries[2].prev.clone();
    for (i, mut e) in entries.into_iter().enumerate() {
        if i >= 3 {
            e.prev = prev.clone();
            e.hash = e.expected_hash();
        }
        let line = serde_json::to_string(&e).expect("line");
        prev = sha256_hex(line.as_bytes());
        out_lines.push(line);
    }
    write_lines(&path, &out_lines);
    let report = ironclaw_store::verify(&path).expect("the rewritten chain is valid");
    assert_eq!(report.entries, 6);

    let out = audit_verify(&env);
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(
        shown.contains("the chain was rewritten: entry 6 no longer has the hash anchored for it"),
        "{shown}"
    );
}

/// A log with entries and no anchor (a keyring emptied by a reboot, the anchor deleted) does
/// not verify as "ok": a cut or a rewrite made meanwhile would go unseen, and `audit verify`
/// says so with its own exit code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_whose_anchor_is_gone_does_not_verify_as_ok() {
    let env = TestEnv::new().await;
    six_entries(&env).await;
    let path = ironclaw_agent::state::audit_path(&env.paths);
    assert!(audit_verify(&env).status.success());
    // Every place an anchor can be: the keyring entry, the fallback file in the config
    // folder, the file the test named.
    let _ = ironclaw_agent::audit_anchor::KeyringAnchor::for_log(&path).forget();
    let mut removed = 0;
    for dir in [env.paths.config_dir.clone(), env.root().to_path_buf()] {
        for e in std::fs::read_dir(&dir).expect("folder").flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("audit-anchor-") || name == "anchor-outside-data" {
                std::fs::remove_file(e.path()).expect("remove the anchor");
                removed += 1;
            }
        }
    }
    let keyring_usable = ironclaw_llm::keyring_secret("ironclaw-keyring-probe").is_ok();
    assert!(
        removed > 0 || keyring_usable,
        "an anchor was kept somewhere"
    );
    let out = audit_verify(&env);
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{shown}");
    assert!(
        shown.contains("UNANCHORED") && shown.contains("6 entries"),
        "{shown}"
    );
}
