//! Switching models mid-conversation, across providers: a tool call an OpenAI-style server made
//! (with an id Anthropic's API would refuse) is carried into an Anthropic-style request with ids
//! that fit and still pair up; the history says which model wrote each answer; the switch
//! survives a restart; an unknown provider is refused with what to do.

use ironclaw_desktop::types::HistoryItem;
use ironclaw_protocol::AgentEvent;
use ironclaw_tests::agent::{asks_to_run, says};
use serde_json::Value;

use super::App;

/// An id OpenAI-compatible servers may send and Anthropic's `^[a-zA-Z0-9_-]+$` does not take.
const ODD_ID: &str = "call:7/run python.1";

fn anthropic_ids(body: &Value) -> (Vec<String>, Vec<String>) {
    let mut uses = Vec::new();
    let mut results = Vec::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            match block["type"].as_str() {
                Some("tool_use") => uses.push(block["id"].as_str().unwrap_or_default().to_owned()),
                Some("tool_result") => {
                    results.push(block["tool_use_id"].as_str().unwrap_or_default().to_owned())
                }
                _ => {}
            }
        }
    }
    (uses, results)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_switches_to_another_provider_with_its_tool_calls_translated() {
    let mut app = App::start().await;
    let base = app.server.base_url();
    // The key's variable is this test process's own (nextest runs each test in its own).
    std::env::set_var("IRONCLAW_SWITCH_TEST_KEY", "test-key");
    std::fs::create_dir_all(&app.env.paths.config_dir).expect("config dir");
    std::fs::write(
        app.env.paths.config_dir.join("provider.yaml"),
        format!(
            "kind: openai\nbase_url: {base}/v1\nmodel: {model}\napi_key_env: IRONCLAW_SWITCH_TEST_KEY\nmore_models:\n  - kind: anthropic\n    name: work-claude\n    base_url: {base}\n    model: claude-test\n    api_key_env: IRONCLAW_SWITCH_TEST_KEY\n",
            model = ironclaw_tests::agent::MODEL
        ),
    )
    .expect("provider.yaml");
    let id = app.conversation;
    app.open().await;

    app.push_all([
        asks_to_run(ODD_ID, "python", "print(40 + 2)"),
        says("It is 42."),
    ]);
    app.send("what is 40 + 2?").await;
    app.approve_next_request().await;
    app.turn_end().await;
    assert_eq!(app.stdout(), "42\n");

    let menu = app.desktop.model_menu(id).await.expect("the menu");
    let listed: Vec<String> = menu
        .options
        .iter()
        .map(|o| format!("{}:{}", o.provider, o.model))
        .collect();
    assert!(
        listed.contains(&"work-claude:claude-test".to_owned()),
        "{listed:?}"
    );

    app.desktop
        .use_model(id, "work-claude".into(), "claude-test".into())
        .await
        .expect("switch");
    let changed = app
        .next_event("modelChanged", |e| {
            matches!(e, AgentEvent::ModelChanged { .. })
        })
        .await;
    assert_eq!(
        changed,
        AgentEvent::ModelChanged {
            provider: "work-claude".into(),
            model: "claude-test".into()
        }
    );

    app.push_all([says("Claude here: it was 42.")]);
    app.send("say it again").await;
    app.turn_end().await;

    let last = app.server.chat_requests().pop().expect("a request");
    assert_eq!(
        last.path, "/v1/messages",
        "the switched turn went to the Anthropic-style API"
    );
    let (uses, results) = anthropic_ids(&last.body);
    assert_eq!(uses.len(), 1, "{}", last.body);
    assert_eq!(uses, results, "the call and its result still pair up");
    assert_ne!(uses[0], ODD_ID);
    assert!(
        uses[0]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
        "{}",
        uses[0]
    );

    // Who wrote what, as the history keeps it.
    let models: Vec<Option<String>> = app
        .open()
        .await
        .items
        .into_iter()
        .filter_map(|i| match i {
            HistoryItem::Assistant { text, model, .. } if !text.is_empty() => Some(model),
            _ => None,
        })
        .collect();
    assert_eq!(
        models,
        [
            // The provider as it names itself: a server other than OpenAI's own.
            Some(format!(
                "openai-compatible:{}",
                ironclaw_tests::agent::MODEL
            )),
            // A switched-to model by the name the menu gave it.
            Some("work-claude:claude-test".to_owned())
        ]
    );

    let exported = app
        .desktop
        .export_conversation(id, ironclaw_protocol::ExportFormat::Markdown)
        .expect("export");
    let text = std::fs::read_to_string(exported).expect("the export");
    assert!(
        text.contains("### Assistant (work-claude:claude-test)"),
        "{text}"
    );

    // After a restart the conversation still uses the model it switched to.
    app.restart().await;
    let view = app.open().await;
    let current = view.model.expect("a current model");
    assert_eq!(
        (current.provider.as_str(), current.model.as_str()),
        ("work-claude", "claude-test")
    );
    app.push_all([says("Still Claude.")]);
    let seen_before = app.seen.len();
    app.send("who are you?").await;
    app.turn_end().await;
    let last = app.server.chat_requests().pop().expect("a request");
    assert_eq!(last.path, "/v1/messages");
    // Its own earlier choice, applied again: nothing was switched, so nothing says so.
    assert!(
        !app.seen[seen_before..]
            .iter()
            .any(|e| matches!(e, AgentEvent::ModelChanged { .. })),
        "{:?}",
        &app.seen[seen_before..]
    );

    // A provider nobody configured: refused, saying where to add it.
    app.desktop
        .use_model(id, "mistral".into(), "large".into())
        .await
        .expect("sent");
    let refused = app
        .next_event("the refusal", |e| matches!(e, AgentEvent::Error { .. }))
        .await;
    let AgentEvent::Error { message } = refused else {
        unreachable!()
    };
    assert!(
        message.contains("no provider named \"mistral\""),
        "{message}"
    );
    assert!(message.contains("more_models"), "{message}");
}
