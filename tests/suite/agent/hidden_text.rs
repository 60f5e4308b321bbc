//! Invisible characters (issue 11, item 4): code with a direction override, a zero-width space
//! and tag characters is shown with every such code point as `⟨U+…⟩` in `ironclaw chat`'s
//! approval prompt, its output, and `history show|ls|search`, and is never auto-approved as
//! read-only.

use std::process::Stdio;

use ironclaw_llm::testing::ScriptedServer;
use ironclaw_tests::agent::*;
use ironclaw_tests::TestEnv;
use tokio::io::AsyncWriteExt;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Code points that must never reach the terminal raw.
const RAW: [char; 4] = ['\u{202E}', '\u{202C}', '\u{200B}', '\u{E0041}'];

fn assert_no_raw(what: &str, shown: &str) {
    for c in RAW {
        assert!(
            !shown.contains(c),
            "{what} printed U+{:04X} raw:\n{shown}",
            u32::from(c)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_characters_are_shown_in_the_cli_prompt_output_and_history_and_never_auto_approved()
{
    let env = TestEnv::new().await;
    let (server, base) = ScriptedServer::start().await.expect("scripted server");
    // Reads as `echo exe.txt rm AB` in a bidi-aware terminal; runs as something else.
    let code = "echo \u{202E}txt.exe\u{202C} r\u{200B}m \u{E0041}\u{E0042}";
    server.push_all([asks_to_run("call_1", "shell", code), says("Done.")]);
    let mut cmd = env.cli();
    cmd.args([
        "chat",
        "--provider",
        "openai",
        "--base-url",
        &format!("{base}/v1"),
        "--model",
        MODEL,
        // The policy that runs read-only code without asking: hidden text must still ask.
        "--policy",
        "ask-unless-safe",
        "-m",
        "print a file name",
    ])
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.kill_on_drop(true);
    let mut child = cmd.spawn().expect("start ironclaw chat");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(b"a\n").await.expect("answer the prompt");
    drop(stdin);
    let out = tokio::time::timeout(EVENT_GUARD, child.wait_with_output())
        .await
        .expect("ironclaw chat finished")
        .expect("run ironclaw chat");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");

    // The prompt was shown (not auto-approved), with every hidden code point visible.
    assert!(
        !stderr.contains("auto-approved"),
        "auto-approved:\n{stderr}"
    );
    assert!(
        stderr.contains("│ echo ⟨U+202E⟩txt.exe⟨U+202C⟩ r⟨U+200B⟩m ⟨U+E0041⟩⟨U+E0042⟩"),
        "{stderr}"
    );
    assert!(
        stderr.contains("contains 5 invisible or bidirectional-control characters"),
        "{stderr}"
    );
    // The approved code really ran in the sandbox: its output carries the same characters,
    // shown the same way.
    assert!(
        stdout.contains("⟨U+202E⟩txt.exe⟨U+202C⟩ r⟨U+200B⟩m ⟨U+E0041⟩⟨U+E0042⟩"),
        "{stdout}"
    );
    assert_no_raw("ironclaw chat (stdout)", &stdout);
    assert_no_raw("ironclaw chat (stderr)", &stderr);
    drop(server);

    let (history, _) = ironclaw_agent::state::open_history(&env.paths).expect("open the history");
    let conversation = history.list_conversations().expect("list")[0]
        .conversation
        .id;
    // The history keeps the exact bytes; only the terminal view marks them.
    let exported = history.export_markdown(conversation).expect("export");
    assert!(exported.contains(code), "{exported}");
    drop(history);
    let run = |args: &[&str]| {
        let out = env.cli().args(args).output().expect("run ironclaw");
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    let shown = run(&["history", "show", &conversation.to_string()]);
    assert!(shown.contains("echo ⟨U+202E⟩txt.exe⟨U+202C⟩"), "{shown}");
    assert_no_raw("history show", &shown);
    let found = run(&["history", "search", "txt"]);
    assert!(found.contains("⟨U+202E⟩"), "{found}");
    assert_no_raw("history search", &found);
    let listed = run(&["history", "ls"]);
    assert_no_raw("history ls", &listed);
}
