//! A long conversation on a model with a small context window: every request is fitted to the
//! window (system prompt and latest message always in), the earlier turns are summarised by
//! the model when they no longer fit, the summary survives a restart, and a provider that
//! counts more tokens than IronClaw estimated gets a harder-compacted retry. The scripted
//! server enforces the window with the real services' errors, so an overflow fails the test.

use ironclaw_llm::testing::{ContextLimit, RecordedRequest, OLLAMA_DEFAULT_NUM_CTX};
use ironclaw_protocol::{AgentEvent, ApprovalPolicy, TurnOutcome};
use ironclaw_store::MessageRole;
use ironclaw_tests::agent::*;
use ironclaw_tests::TestEnv;
use serde_json::Value;

const WINDOW: u32 = 8192;

/// Python that prints about `kib` KiB of numbered lines.
fn prints(kib: usize, turn: usize) -> String {
    format!(
        "for i in range({}): print(f'turn {turn} line {{i:05d}} ' + 'x' * 40)",
        kib * 1024 / 58
    )
}

fn system_prompt_of(request: &RecordedRequest) -> String {
    let body = &request.body;
    // OpenAI: the first message; Anthropic: the `system` field.
    body.get("system")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            body["messages"][0]
                .get("content")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_default()
}

fn last_user_text(request: &RecordedRequest) -> String {
    request.body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

fn offers_tools(request: &RecordedRequest) -> bool {
    request.body["tools"]
        .as_array()
        .is_some_and(|t| !t.is_empty())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_conversation_on_a_small_window_is_compacted_and_every_turn_completes() {
    let limit = ContextLimit {
        tokens: u64::from(WINDOW),
        bytes_per_token: 3.0,
    };
    let env = TestEnv::new().await;
    let mut agent =
        Agent::start_with_window(env, Wire::OpenAi, ApprovalPolicy::NeverAsk, WINDOW).await;
    agent.server.enforce_window(limit);
    for n in 0..8 {
        agent.server.push_toolless(says(&format!(
            "SUMMARY-{n}: the user asked for numbered lines; each run printed them."
        )));
    }
    const TURNS: usize = 8;
    let mut compactions = 0;
    for turn in 0..TURNS {
        // Words as well as output: what cutting old outputs cannot shrink.
        let words = "and explain them at length ".repeat(40);
        agent.push_all([
            asks_to_run(&format!("c{turn}"), "python", &prints(6, turn)),
            says(&format!("Printed the lines for turn {turn}. {words}")),
        ]);
        agent.send(&format!("turn {turn}: print the lines {words}"));
        let events = agent.collect_until_turn_end().await;
        match events.last() {
            Some(AgentEvent::TurnEnded {
                status: TurnOutcome::Done,
                ..
            }) => {}
            other => panic!("turn {turn} ended {other:?}\n{}", agent.dump()),
        }
        compactions += events
            .iter()
            .filter(|e| matches!(e, AgentEvent::Compacted { .. }))
            .count();
        let usage: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ContextUsage {
                    used_tokens,
                    window_tokens,
                    ..
                } => Some((*used_tokens, *window_tokens)),
                _ => None,
            })
            .collect();
        assert!(!usage.is_empty());
        assert!(usage
            .iter()
            .all(|(used, window)| *used <= u64::from(*window)));
    }

    // The window really was outgrown, and the model summarised.
    assert!(compactions >= 1, "never compacted\n{}", agent.dump());
    let summaries_asked = 8 - agent.server.remaining_toolless();
    assert_eq!(summaries_asked, compactions);
    let requests = agent.requests();
    for (i, request) in requests.iter().enumerate() {
        let counted = limit.count(&request.body);
        assert!(counted <= limit.tokens, "request {i}: {counted} tokens");
        if offers_tools(request) {
            assert!(
                system_prompt_of(request).contains("You are IronClaw"),
                "request {i} lost the system prompt"
            );
        }
    }
    // The latest message is always there, whole; the summary stands in for the earlier ones.
    let last = requests
        .iter()
        .rev()
        .find(|r| offers_tools(r))
        .expect("a chat request");
    assert!(last_user_text(last).contains(&format!("turn {}: print the lines", TURNS - 1)));
    let sent = last.body.to_string();
    assert!(sent.contains("SUMMARY-"), "{sent}");
    assert!(!sent.contains("turn 0: print the lines"), "{sent}");
    // Kept in the history, marked as a summary.
    let kept: Vec<_> = agent
        .history()
        .messages
        .iter()
        .filter(|m| m.message.role == MessageRole::Summary)
        .map(|m| m.message.content.clone())
        .collect();
    assert_eq!(kept.len(), compactions);
    assert!(kept.last().is_some_and(|k| k.contains("SUMMARY-")));

    // After a restart the same summary stands in: the next request carries it, and no new
    // summary is needed for it.
    let latest_summary = format!("SUMMARY-{}", compactions - 1);
    let Agent {
        env, conversation, ..
    } = agent;
    let mut agent = Agent::resume_with_window(env, Wire::OpenAi, conversation, WINDOW).await;
    agent.server.enforce_window(limit);
    agent.push(says("Still here."));
    agent.send("what did we do?");
    agent.turn_done().await;
    let request = agent.requests().last().cloned().expect("a request");
    let sent = request.body.to_string();
    assert!(sent.contains(&latest_summary), "{sent}");
    assert!(!sent.contains("turn 0: print the lines"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_counts_more_than_the_estimate_gets_one_harder_retry() {
    let env = TestEnv::new().await;
    // IronClaw believes the window is large; the server's is small and counts strictly.
    let mut agent =
        Agent::start_with_window(env, Wire::Anthropic, ApprovalPolicy::NeverAsk, 64_000).await;
    agent.push_all([
        asks_to_run("c0", "python", &prints(8, 0)),
        says("First done."),
    ]);
    agent.send("turn 0: print the lines");
    agent.turn_done().await;
    // A server that does not say how long its window is: nothing to learn, so IronClaw
    // compacts harder once.
    agent.server.refuse_without_naming_the_window();
    agent.server.enforce_window(ContextLimit {
        tokens: 3_000,
        bytes_per_token: 3.0,
    });
    agent
        .server
        .push_toolless(says("SUMMARY-A: lines were printed in turn 0."));
    agent.push(says("Second done."));
    agent.send("turn 1: and now?");
    let events = agent.collect_until_turn_end().await;
    assert!(
        matches!(
            events.last(),
            Some(AgentEvent::TurnEnded {
                status: TurnOutcome::Done,
                ..
            })
        ),
        "{}",
        agent.dump()
    );
    let requests = agent.requests();
    // turn 0: two requests; turn 1: rejected, the summary, the retry.
    assert_eq!(requests.len(), 5, "{}", agent.dump());
    let rejected = &requests[2];
    assert!(rejected
        .body
        .to_string()
        .contains("turn 0: print the lines"));
    assert!(!offers_tools(&requests[3]), "the summary request");
    let retry = &requests[4];
    assert!(retry.body.to_string().contains("SUMMARY-A"));
    assert!(events
        .iter()
        .any(|e| matches!(e, AgentEvent::Compacted { .. })));

    // A window the conversation cannot be fitted to at all: said plainly, once.
    agent.server.enforce_window(ContextLimit {
        tokens: 200,
        bytes_per_token: 3.0,
    });
    agent.send("turn 2: again");
    let (status, error) = agent.turn_end().await;
    assert_eq!(status, TurnOutcome::Failed);
    let error = error.unwrap_or_default();
    assert!(error.contains("context window"), "{error}");
    assert!(agent.server.remaining_replies() == 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ironclaw_chat_names_the_window_says_when_it_compacts_and_explains_a_refusal() {
    let env = TestEnv::new().await;
    let (server, base) = ironclaw_llm::testing::ScriptedServer::start()
        .await
        .expect("scripted server");
    let words = "and explain them at length ".repeat(60);
    for turn in 0..6 {
        server.push(says(&format!("Answer {turn}. {words}")));
    }
    for n in 0..4 {
        server.push_toolless(says(&format!("SUMMARY-CLI-{n}: long answers were given.")));
    }
    // An OpenAI refusal: no content, only `refusal`.
    server.push(ironclaw_llm::testing::Reply::recorded(
        concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"I can't help with that.\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n"
        ),
        false,
    ));
    let base = format!("{base}/v1");
    let mut args = vec![
        "--provider",
        "openai",
        "--base-url",
        &base,
        "--model",
        MODEL,
        "--context-window",
        "4096",
        "--deny-all",
    ];
    let questions: Vec<String> = (0..6)
        .map(|turn| format!("question {turn}: {words}"))
        .collect();
    for question in &questions {
        args.extend(["-m", question.as_str()]);
    }
    args.extend(["-m", "the forbidden thing"]);
    let (stdout, stderr) = chat_cli(&env, &args).await;
    assert!(
        stderr.contains("context window 4096 tokens, from your setting"),
        "{stderr}"
    );
    let compacted = stderr
        .lines()
        .filter(|l| l.contains("[context: the earlier conversation was summarised"))
        .count();
    assert!(compacted >= 1, "{stderr}");
    assert_eq!(compacted, 4 - server.remaining_toolless(), "{stderr}");
    // The refusal is printed, not swallowed.
    assert!(stdout.contains("I can't help with that."), "{stdout}");
    for request in server.chat_requests() {
        let counted = (request.body.to_string().len() as f64 / 3.0).ceil() as u64;
        assert!(counted <= 4096, "{counted}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_ollama_every_request_carries_the_window_so_nothing_is_silently_dropped() {
    let env = TestEnv::new().await;
    // Larger than Ollama's default window: without `num_ctx` it would cut the prompt's start.
    let window = 12_000;
    let mut agent =
        Agent::start_with_window(env, Wire::Ollama, ApprovalPolicy::NeverAsk, window).await;
    agent.server.enforce_window(ContextLimit {
        tokens: u64::from(window),
        bytes_per_token: 3.0,
    });
    for n in 0..4 {
        agent
            .server
            .push_toolless(says(&format!("SUMMARY-O{n}: lines were printed.")));
    }
    for turn in 0..4 {
        agent.push_all([
            asks_to_run(&format!("c{turn}"), "python", &prints(6, turn)),
            says(&format!("Printed turn {turn}.")),
        ]);
        agent.send(&format!("turn {turn}: print the lines"));
        agent.turn_done().await;
    }
    let requests = agent.requests();
    assert!(requests.len() >= 8);
    // Some requests were over Ollama's default window: only num_ctx saved them.
    let over_default = requests
        .iter()
        .filter(|r| {
            ContextLimit {
                tokens: 0,
                bytes_per_token: 3.0,
            }
            .count(&r.body)
                > ironclaw_llm::testing::OLLAMA_DEFAULT_NUM_CTX
        })
        .count();
    assert!(over_default > 0, "the test never needed the larger window");
    for (i, request) in requests.iter().enumerate() {
        assert_eq!(request.path, "/api/chat");
        assert!(!request.truncated, "request {i} was cut by the server");
        assert_eq!(
            request.body["options"]["num_ctx"],
            serde_json::json!(window)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_too_small_for_one_round_trip_is_said_once() {
    let env = TestEnv::new().await;
    let mut agent =
        Agent::start_with_window(env, Wire::OpenAi, ApprovalPolicy::AskAlways, 2_048).await;
    agent.push_all([says("One."), says("Two.")]);
    let mut notes = Vec::new();
    for ask in ["hello", "again"] {
        agent.send(ask);
        let events = agent.collect_until_turn_end().await;
        notes.extend(events.into_iter().filter_map(|e| match e {
            AgentEvent::Note { text } => Some(text),
            _ => None,
        }));
    }
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("too small"), "{notes:?}");
    assert!(notes[0].contains("2048 tokens"), "{notes:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ironclaw_chat_with_ollama_takes_the_window_from_the_model_and_sends_it_every_time() {
    let env = TestEnv::new().await;
    let (server, base) = ironclaw_llm::testing::ScriptedServer::start()
        .await
        .expect("scripted server");
    let model = "qwen3:8b";
    // Above Ollama's default window and below any memory cap (8,192 on the smallest machine),
    // so only `/api/show` can be where IronClaw learnt it.
    let window = 8_000;
    server.set_models([model]);
    server.set_model_context_length(window);
    let limit = ContextLimit {
        tokens: window,
        bytes_per_token: 3.0,
    };
    server.enforce_window(limit);
    server.push_all([says("Read it."), says("Still here.")]);
    // About 5,300 tokens of request: more than Ollama's default window would keep.
    let long = "the numbers in row seven are wrong ".repeat(400);
    let (stdout, stderr) = chat_cli(
        &env,
        &[
            "--provider",
            "ollama",
            "--base-url",
            &base,
            "--model",
            model,
            "--deny-all",
            "-m",
            &long,
            "-m",
            "and now?",
        ],
    )
    .await;
    assert!(
        stderr.contains(&format!(
            "model {model} (context window {window} tokens, as the provider reports it"
        )),
        "{stderr}"
    );
    assert!(stdout.contains("Still here."), "{stdout}");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    for request in &requests {
        assert_eq!(request.path, "/api/chat");
        // The attack: each request is longer than Ollama's default window...
        assert!(limit.count(&request.body) > OLLAMA_DEFAULT_NUM_CTX);
        // ...and yet nothing was cut, because the window went with it.
        assert_eq!(
            request.body["options"]["num_ctx"], window,
            "{}",
            request.body
        );
        assert!(!request.truncated);
    }
}

/// A server whose window is smaller than IronClaw assumed refuses with its own words: the
/// window it names is learnt (kept for the model, told to the person), the conversation is
/// fitted to it and goes on; and a model that answers the summary request with nothing does
/// not end the conversation: its start is left out with a marker, and later turns work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_teaches_the_window_and_an_empty_summary_does_not_end_the_conversation() {
    let env = TestEnv::new().await;
    let mut agent =
        Agent::start_with_window(env, Wire::OpenAi, ApprovalPolicy::NeverAsk, WINDOW).await;
    agent.push_all([
        asks_to_run("c0", "python", &prints(6, 0)),
        says("First done."),
        asks_to_run("c1", "python", &prints(6, 1)),
        says("Second done."),
    ]);
    agent.send("turn 0: print the lines");
    agent.turn_done().await;
    agent.send("turn 1: more lines");
    agent.turn_done().await;
    let sent_before = agent.requests().len();
    // The server's real window: 2,250 tokens, refused in OpenAI's words.
    agent.server.enforce_window(ContextLimit {
        tokens: 2_250,
        bytes_per_token: 3.0,
    });
    agent.server.push_toolless(says(""));
    agent.push(says("Third done."));
    agent.send("turn 2: and now?");
    let events = agent.collect_until_turn_end().await;
    assert!(
        matches!(
            events.last(),
            Some(AgentEvent::TurnEnded {
                status: TurnOutcome::Done,
                ..
            })
        ),
        "{}",
        agent.dump()
    );
    let notes: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Note { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    // The refusal happened, and taught the window.
    assert!(
        notes
            .iter()
            .any(|n| n.contains("2250 tokens") && n.contains("8192")),
        "{notes:?} {}",
        agent.dump()
    );
    assert!(
        notes.iter().any(|n| n.contains("could not summarise")),
        "{notes:?}"
    );
    let requests = agent.requests();
    let refused = requests[sent_before..]
        .iter()
        .filter(|r| {
            ContextLimit {
                tokens: 2_250,
                bytes_per_token: 3.0,
            }
            .count(&r.body)
                > 2_250
        })
        .count();
    assert_eq!(
        refused, 1,
        "only the first request after the window passed it"
    );
    // Later turns are fitted to the learnt window from the start: no refusal, and the meter
    // measures against it.
    agent.push(says("Fourth done."));
    agent.send("turn 3: once more");
    let events = agent.collect_until_turn_end().await;
    assert!(matches!(
        events.last(),
        Some(AgentEvent::TurnEnded {
            status: TurnOutcome::Done,
            ..
        })
    ));
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::ContextUsage {
            window_tokens: 2_250,
            ..
        }
    )));
    let after = agent.requests();
    assert!(after[requests.len()..].iter().all(|r| ContextLimit {
        tokens: 2_250,
        bytes_per_token: 3.0
    }
    .count(&r.body)
        <= 2_250));
}
