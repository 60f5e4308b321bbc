//! Data a provider attaches to a tool call and requires back (Gemini 3's thought signature in
//! `extra_content`) goes back with that call verbatim: in the next request of the turn, and from
//! history after IronClaw restarts. Without it Gemini rejects the request with HTTP 400.

use ironclaw_llm::testing::Reply;
use ironclaw_tests::agent::*;
use pretty_assertions::assert_eq;
use serde_json::{json, Value};

/// Gemini's OpenAI-compatible stream: a call with no `index`, its signature in `extra_content`,
/// ending with `finish_reason: "stop"`.
fn signed_call() -> Reply {
    Reply::recorded(
        concat!(
            "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"extra_content\":{\"google\":{\"thought_signature\":\"U0lHTkFUVVJF\"}},\"function\":{\"arguments\":\"{\\\"language\\\":\\\"shell\\\",\\\"code\\\":\\\"touch /workspace/signed\\\"}\",\"name\":\"run_code\"},\"id\":\"function-call-1\",\"type\":\"function\"}]},\"index\":0}],\"model\":\"gemini-3-pro-preview\",\"object\":\"chat.completion.chunk\"}\n\n",
            "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"},\"finish_reason\":\"stop\",\"index\":0}],\"model\":\"gemini-3-pro-preview\",\"object\":\"chat.completion.chunk\"}\n\n",
            "data: [DONE]\n\n"
        ),
        false,
    )
}

/// The `extra_content` of each tool call in the assistant messages of `body`.
fn echoed(body: &Value) -> Vec<Value> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .map(|c| c["extra_content"].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thought_signature_goes_back_with_its_call_in_the_turn_and_after_a_restart() {
    let signature = json!({"google": {"thought_signature": "U0lHTkFUVVJF"}});
    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push_all([signed_call(), says("Not then.")]);
    agent.send("make a file");
    let request = agent.approval_request().await;
    assert_eq!(request.code, "touch /workspace/signed");
    agent.deny(&request, "not now");
    agent.turn_done().await;
    let requests = agent.requests();
    assert_eq!(requests.len(), 2, "{}", agent.dump());
    // The attack on this test: the first request has no call, so an echo can only come from
    // the decoded stream.
    assert!(echoed(&requests[0].body).is_empty());
    assert_eq!(echoed(&requests[1].body), std::slice::from_ref(&signature));

    let Agent {
        env, conversation, ..
    } = agent;
    let mut agent = Agent::resume(env, Wire::OpenAi, conversation).await;
    agent.push(says("Hello again."));
    agent.send("still there?");
    agent.turn_done().await;
    let after = agent.requests();
    assert_eq!(echoed(&after[0].body), [signature]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_without_provider_data_sends_none_back() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push_all([asks_to_run("call_plain", "shell", "true"), says("Fine.")]);
    agent.send("do nothing");
    let request = agent.approval_request().await;
    agent.deny(&request, "no");
    agent.turn_done().await;
    let second = &agent.requests()[1].body;
    assert_eq!(echoed(second), [Value::Null], "{second}");
}
