//! The `ironclaw-mock-llm` binary serves a script file to the real client, as the desktop
//! end-to-end tests will use it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use ironclaw_llm::{ChatRequest, Message, OpenAiCompatible, Provider, TurnAccumulator};
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

/// Stops the server even when an assertion fails.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn mock_binary_serves_a_script_file_and_logs_the_requests() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    let log = dir.path().join("requests.jsonl");
    std::fs::write(
        &script,
        r#"{"replies": [{"type": "text", "chunks": ["Hello", " from the mock"], "delayMs": 5}],
            "models": ["mock-model"]}"#,
    )
    .unwrap();

    let mut child = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_ironclaw-mock-llm"))
            .arg(&script)
            .arg("--log")
            .arg(&log)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut base = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut base)
        .unwrap();
    let base = base.trim();
    assert!(base.starts_with("http://127.0.0.1:"), "{base:?}");

    let provider = OpenAiCompatible::new(&format!("{base}/v1"), None).unwrap();
    assert_eq!(provider.list_models().await.unwrap(), vec!["mock-model"]);
    let request = ChatRequest {
        model: "mock-model".into(),
        system: String::new(),
        messages: vec![Message::user("hi")],
        tools: vec![],
        max_tokens: None,
        temperature: None,
        context_window: None,
    };
    let mut turn = TurnAccumulator::new();
    turn.drain(
        provider
            .stream(&request, CancellationToken::new())
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(turn.text(), "Hello from the mock");

    let logged: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let paths: Vec<_> = logged.iter().map(|r| r["path"].as_str().unwrap()).collect();
    assert_eq!(paths, vec!["/v1/models", "/v1/chat/completions"]);
    assert_eq!(logged[1]["body"]["messages"][0]["content"], "hi");
}
