//! Files in (`ironclaw chat --attach PATH`). The workspace is the sandbox's: code that ran there
//! may have planted a link where the attachment goes, to make the host write through it. The
//! source is the person's, and a folder may hold links out of it, or FIFOs. None of these may
//! reach or hang the host, and the model is told what arrived and where.

use std::os::unix::fs::FileTypeExt;

use ironclaw_tests::agent::*;
use ironclaw_tests::TestEnv;

fn chat_args<'a>(base: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "--provider",
        "openai",
        "--base-url",
        base,
        "--model",
        "mock",
        "--policy",
        "never-ask",
    ];
    args.extend_from_slice(rest);
    args
}

fn conversation_of(stderr: &str) -> String {
    stderr
        .split("conversation ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no conversation id in: {stderr}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attached_files_arrive_without_writing_through_planted_links_or_following_links_out() {
    let env = TestEnv::new().await;
    let outside = tempfile::tempdir().expect("temp dir");
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "host file, untouched").expect("victim");
    let secret = outside.path().join("secret.key");
    std::fs::write(&secret, "HOST-SECRET").expect("secret");

    // What the person attaches: a file, and a folder holding a link out of it and a FIFO.
    let src = outside.path().join("src");
    std::fs::create_dir_all(src.join("proj/sub")).expect("source folders");
    std::fs::write(src.join("data.csv"), "a,b\n1,2\n").expect("data.csv");
    std::fs::write(src.join("proj/sub/notes.txt"), "notes").expect("notes");
    std::os::unix::fs::symlink(&secret, src.join("proj/key")).expect("link out");
    nix::unistd::mkfifo(
        &src.join("proj/pipe"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .expect("fifo");

    let (server, base) = ironclaw_llm::testing::ScriptedServer::start()
        .await
        .expect("scripted server");
    let base = format!("{base}/v1");

    // Turn 1: the sandboxed code plants a link where the attachment will go, at a host path.
    let plant = format!("ln -s {} /workspace/data.csv", victim.display());
    server.push_all([asks_to_run("call_1", "shell", &plant), says("Planted.")]);
    let (_, stderr) = chat_cli(&env, &chat_args(&base, &["-m", "set up"])).await;
    let conversation = conversation_of(&stderr);
    let planted = find_files_named(env.root(), "data.csv");
    assert_eq!(
        planted.len(),
        1,
        "the planting run did not happen: {stderr}"
    );
    let workspace = planted[0].parent().expect("workspace").to_path_buf();
    assert_eq!(
        std::fs::read_link(&planted[0]).expect("a link"),
        victim,
        "the attack is in place: the workspace's data.csv points at the host file"
    );

    // Turn 2: attach both; the model reads what arrived.
    server.push_all([
        asks_to_run(
            "call_2",
            "shell",
            "cat '/workspace/data (2).csv' /workspace/proj/sub/notes.txt; ls -A /workspace/proj",
        ),
        says("Read them."),
    ]);
    let data = src.join("data.csv");
    let proj = src.join("proj");
    let (_, stderr) = chat_cli(
        &env,
        &chat_args(
            &base,
            &[
                "--conversation",
                &conversation,
                "--attach",
                data.to_str().expect("utf-8"),
                "--attach",
                proj.to_str().expect("utf-8"),
                "-m",
                "look at these",
            ],
        ),
    )
    .await;

    // Nothing was written through the link; the attachment took the next free name.
    assert_eq!(
        std::fs::read_to_string(&victim).expect("victim"),
        "host file, untouched"
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("data (2).csv")).expect("attached file"),
        "a,b\n1,2\n"
    );
    // The link out and the FIFO stayed out; the rest of the folder came in.
    assert!(!workspace.join("proj/key").exists() && !workspace.join("proj/pipe").exists());
    assert!(src
        .join("proj/pipe")
        .metadata()
        .expect("fifo")
        .file_type()
        .is_fifo());
    assert!(
        stderr.contains("left out proj/key: a link (never followed)"),
        "{stderr}"
    );

    // The model was told what arrived and where, in the message it was sent.
    let requests = server.chat_requests();
    let told = requests
        .iter()
        .rev()
        .find(|r| r.body.to_string().contains("look at these"))
        .map(|r| r.body.to_string())
        .expect("the second chat's request");
    assert!(
        told.contains("/workspace/data (2).csv") && told.contains("/workspace/proj/"),
        "{told}"
    );
    assert!(
        told.contains("proj/key (a link (never followed))"),
        "{told}"
    );
    // And the sandbox could read the files (they are the sandbox user's).
    let results = tool_results(requests.last().expect("last request"));
    let out = results.last().expect("a tool result");
    assert!(out.contains("a,b") && out.contains("notes"), "{out}");
    assert!(
        !out.contains("HOST-SECRET") && !out.contains("key"),
        "{out}"
    );
}
