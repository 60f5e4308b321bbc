//! Replays the recorded streams in `tests/streams/` over loopback through the real providers.
//! Each file names the server it comes from (`: source:` comment lines) and what a correct
//! client makes of it (`: expect {json}`); comments are part of the stream, so they also prove
//! that keep-alive comments are skipped. A quirk met in the wild gets a file here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::accumulator::TurnAccumulator;
use crate::test_support::{collect, fast_options, request};
use crate::testing::{Reply, ScriptedServer};
use crate::types::{StopReason, StreamEvent};
use crate::{Anthropic, ApiKey, OpenAiCompatible, Provider};

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Expect {
    #[serde(default)]
    text: String,
    #[serde(default)]
    reasoning: String,
    #[serde(default)]
    calls: Vec<(String, String)>,
    /// The provider data of each call that carries some ([`crate::ToolCall::echo`]), in order.
    #[serde(default)]
    echoes: Vec<serde_json::Value>,
    /// `endTurn`, `toolUse`, `maxTokens`, `refusal`; absent when `error` is set.
    stop: Option<StopReason>,
    usage: Option<(u64, u64)>,
    /// The error variant's name (`ContextTooLong`).
    error: Option<String>,
}

fn parse_header(body: &str) -> (Expect, bool) {
    let mut expect = None;
    let mut hold_open = false;
    for line in body.lines().map(|l| l.trim_start_matches('\u{feff}')) {
        if let Some(json) = line.strip_prefix(": expect ") {
            expect = Some(serde_json::from_str(json).expect("a valid `: expect` line"));
        }
        hold_open |= line.trim() == ": hold-open";
    }
    (expect.expect("an `: expect {json}` line"), hold_open)
}

async fn replay(path: &Path) -> Result<(), String> {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let body = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    let (expect, hold_open) = parse_header(&body);
    let (server, base) = ScriptedServer::start().await.unwrap();
    server.push(Reply::recorded(body.clone(), hold_open));
    let mut options = fast_options();
    // Longer than the grace a finished answer gets, so a held-open stream that completes proves
    // the grace, not the idle timeout.
    options.idle_timeout = std::time::Duration::from_secs(25);
    let provider: Box<dyn Provider> = if name.starts_with("anthropic-") {
        let key = ApiKey::new("sk-ant-test-0123456789abcdef").unwrap();
        Box::new(
            Anthropic::with_base_url(&base, key)
                .unwrap()
                .with_options(options)
                .unwrap(),
        )
    } else {
        Box::new(
            OpenAiCompatible::new(&format!("{base}/v1"), None)
                .unwrap()
                .with_options(options)
                .unwrap(),
        )
    };
    let (events, error) = match provider
        .stream(&request("m"), CancellationToken::new())
        .await
    {
        Ok(stream) => collect(stream).await,
        Err(err) => (Vec::new(), Some(err)),
    };
    let mut turn = TurnAccumulator::new();
    events.iter().for_each(|e| turn.push(e));
    let turn = turn.finish();
    let error_kind = error.as_ref().map(|e| {
        let debug = format!("{e:?}");
        debug
            .split([' ', '{', '('])
            .next()
            .unwrap_or_default()
            .to_string()
    });
    let mut wrong = Vec::new();
    if error_kind != expect.error {
        wrong.push(format!("error {error:?}, expected {:?}", expect.error));
    }
    if turn.text != expect.text {
        wrong.push(format!("text {:?}, expected {:?}", turn.text, expect.text));
    }
    if turn.reasoning != expect.reasoning {
        wrong.push(format!(
            "reasoning {:?}, expected {:?}",
            turn.reasoning, expect.reasoning
        ));
    }
    let calls: Vec<(String, String)> = turn
        .tool_calls
        .iter()
        .map(|c| (c.name.clone(), c.arguments.clone()))
        .collect();
    if calls != expect.calls {
        wrong.push(format!("calls {calls:?}, expected {:?}", expect.calls));
    }
    let echoes: Vec<serde_json::Value> = turn
        .tool_calls
        .iter()
        .filter_map(|c| c.echo.as_deref())
        .map(|json| serde_json::from_str(json).unwrap_or_default())
        .collect();
    if echoes != expect.echoes {
        wrong.push(format!("echoes {echoes:?}, expected {:?}", expect.echoes));
    }
    if let Some(stop) = &expect.stop {
        if &turn.stop_reason != stop {
            wrong.push(format!("stop {:?}, expected {stop:?}", turn.stop_reason));
        }
    }
    if let Some((input, output)) = expect.usage {
        let got = (turn.usage.input_tokens, turn.usage.output_tokens);
        if got != (input, output) {
            wrong.push(format!("usage {got:?}, expected {:?}", (input, output)));
        }
    }
    let dones = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Done { .. }))
        .count();
    if dones != usize::from(expect.error.is_none()) {
        wrong.push(format!("{dones} Done events"));
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("{name}: {}", wrong.join("; ")))
    }
}

#[tokio::test]
async fn every_recorded_stream_decodes_as_its_file_expects() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/streams");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "sse"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 15, "the corpus went missing: {paths:?}");
    let results = futures_util::future::join_all(paths.iter().map(|p| replay(p))).await;
    let failures: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
