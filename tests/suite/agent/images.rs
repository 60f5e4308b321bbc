//! Pictures to the model: the person's (sent with a message, in each wire format, downscaled,
//! and sent again after a restart), the ones the model asks to look at in the workspace
//! (`view_image`, read the way every sandbox-written file is: no link followed, no FIFO
//! waited on, nothing outside the workspace), and a model that reads none (a note instead).

use std::io::Cursor;

use base64::Engine as _;
use image::{DynamicImage, ImageFormat, RgbImage};
use ironclaw_llm::testing::{Reply, ScriptedCall};
use ironclaw_protocol::{AgentEvent, ApprovalPolicy};
use ironclaw_tests::agent::*;
use ironclaw_tests::TestEnv;
use pretty_assertions::assert_eq;
use serde_json::Value;
use std::os::unix::fs::FileTypeExt;

/// A PNG of `width`×`height` with a gradient (so it is not trivially compressible).
fn picture(width: u32, height: u32) -> Vec<u8> {
    let img = RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x * y) % 251) as u8])
    });
    let mut out = Vec::new();
    DynamicImage::ImageRgb8(img)
        .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
        .expect("encode the test picture");
    out
}

/// Every picture in a request, as (media type, width, height), whatever the wire format.
fn pictures_in(body: &Value) -> Vec<(String, u32, u32)> {
    let mut found = Vec::new();
    let mut add = |media: &str, b64: &str| {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .expect("the picture is base64");
        let img = image::load_from_memory(&bytes).expect("the picture decodes");
        found.push((media.to_string(), img.width(), img.height()));
    };
    fn walk(v: &Value, add: &mut dyn FnMut(&str, &str)) {
        match v {
            Value::Object(o) => {
                // OpenAI: {"type": "image_url", "image_url": {"url": "data:…;base64,…"}}
                if let Some(url) = o
                    .get("image_url")
                    .and_then(|u| u.get("url"))
                    .and_then(Value::as_str)
                {
                    if let Some((head, b64)) = url.split_once(";base64,") {
                        add(head.trim_start_matches("data:"), b64);
                    }
                }
                // Anthropic: {"type": "image", "source": {"type": "base64", …}}
                if o.get("type").and_then(Value::as_str) == Some("image") {
                    if let Some(src) = o.get("source") {
                        add(
                            src["media_type"].as_str().unwrap_or_default(),
                            src["data"].as_str().unwrap_or_default(),
                        );
                    }
                }
                // Ollama: {"images": ["…"]} beside the message's text.
                if let Some(images) = o.get("images").and_then(Value::as_array) {
                    for b64 in images.iter().filter_map(Value::as_str) {
                        add("ollama", b64);
                    }
                }
                for value in o.values() {
                    walk(value, add);
                }
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, add)),
            _ => {}
        }
    }
    walk(body, &mut add);
    found
}

/// How many pictures the conversation's history keeps.
fn stored_pictures(agent: &Agent) -> usize {
    agent
        .deps
        .history
        .conversation_images(agent.conversation)
        .expect("read the images")
        .values()
        .map(Vec::len)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sent_picture_reaches_every_wire_format_scaled_down_and_again_after_a_restart() {
    for wire in [Wire::OpenAi, Wire::Anthropic, Wire::Ollama] {
        let mut agent =
            Agent::start_with(TestEnv::new().await, wire, ApprovalPolicy::AskAlways).await;
        agent.push(says("A gradient."));
        agent.send_with_images("What is this?", &[("photo.png", picture(3000, 2000))]);
        agent.turn_done().await;
        let first = &agent.requests()[0].body;
        let pictures = pictures_in(first);
        assert_eq!(pictures.len(), 1, "{wire:?}: {first}");
        assert_eq!((pictures[0].1, pictures[0].2), (1568, 1045), "{wire:?}");
        assert!(
            first.to_string().contains("What is this?"),
            "{wire:?}: the text goes with it"
        );

        // IronClaw stops and starts again: the conversation goes on with the same picture.
        let Agent {
            env, conversation, ..
        } = agent;
        let mut agent = Agent::resume(env, wire, conversation).await;
        agent.push(says("Still a gradient."));
        agent.send("And now?");
        agent.turn_done().await;
        assert_eq!(
            pictures_in(&agent.requests()[0].body),
            pictures,
            "{wire:?}: the rebuilt transcript sends what was sent before"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_picture_that_is_not_one_is_refused_with_its_name_and_the_message_still_goes() {
    let mut agent = Agent::start(Wire::OpenAi).await;
    agent.push(says("I only got your text."));
    agent.send_with_images(
        "Here are two",
        &[
            ("notes.png", b"just text, renamed".to_vec()),
            ("ok.png", picture(10, 10)),
        ],
    );
    let events = agent.collect_until_turn_end().await;
    let notes: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Note { text } => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(notes.len(), 1, "{}", agent.dump());
    assert!(
        notes[0].starts_with("notes.png was not sent: it is not a PNG"),
        "{notes:?}"
    );
    let body = &agent.requests()[0].body;
    assert_eq!(pictures_in(body).len(), 1, "the good one goes: {body}");
    assert!(
        body.to_string().contains("notes.png was not sent"),
        "the model is told too: {body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_sees_a_chart_its_code_drew_and_nothing_through_a_link_a_fifo_or_a_path_out() {
    let env = TestEnv::new().await;
    // A real picture on the host, outside the workspace: what a link would lead to.
    let secret = env.paths.data_dir.join("secret.png");
    std::fs::write(&secret, picture(64, 64)).expect("write the host's picture");
    let mut agent = Agent::start_with(env, Wire::Anthropic, ApprovalPolicy::NeverAsk).await;
    let code = format!(
        r#"import os, struct, zlib
def chunk(t, d):
    return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
w, h = 400, 300
rows = b''.join(b'\x00' + bytes(v for x in range(w) for v in (x % 256, y % 256, 128)) for y in range(h))
png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b'')
open('/workspace/chart.png', 'wb').write(png)
os.symlink({secret:?}, '/workspace/link.png')
os.mkfifo('/workspace/pipe.png')
print('drawn')
"#,
        secret = secret.display().to_string()
    );
    let view = |id: &str, path: &str| {
        ScriptedCall::new(
            id,
            "view_image",
            [format!(r#"{{"path":"{path}"}}"#).as_str()],
        )
    };
    agent.push_all([
        asks_to_run("call_draw", "python", &code),
        Reply::tool_calls(vec![
            view("v_chart", "/workspace/chart.png"),
            view("v_link", "link.png"),
            view("v_pipe", "pipe.png"),
            view("v_up", "../secret.png"),
            view("v_abs", &secret.display().to_string()),
        ]),
        says("It is a gradient."),
    ]);
    agent.send("draw a chart and check it");
    let events = agent.collect_until_turn_end().await;

    // The attacks were really set up: the link leads to a readable picture on the host, and
    // the FIFO is one.
    let ws = agent.workspace();
    assert!(std::fs::symlink_metadata(ws.join("link.png"))
        .expect("the link")
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read(ws.join("link.png")).expect("following it reads the host's picture"),
        std::fs::read(&secret).expect("the secret")
    );
    assert!(std::fs::symlink_metadata(ws.join("pipe.png"))
        .expect("the FIFO")
        .file_type()
        .is_fifo());

    let viewed: Vec<(String, Option<String>)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ImageViewed { path, error, .. } => Some((path.clone(), error.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(viewed.len(), 5, "{}", agent.dump());
    assert_eq!(viewed[0], ("chart.png".to_string(), None));
    for (path, error) in &viewed[1..] {
        assert!(error.is_some(), "{path} must not be shown");
    }
    let results = agent.tool_results_in(2);
    assert_eq!(results.len(), 6, "{results:?}");
    assert!(results[1].contains("400×300"), "{results:?}");
    assert!(results[2].contains("symbolic link"), "{results:?}");
    assert!(results[3].contains("named pipe"), "{results:?}");
    assert!(results[4].contains("could not be shown"), "{results:?}");
    assert!(results[5].contains("could not be shown"), "{results:?}");
    // Exactly one picture went to the model: the chart, as drawn.
    let pictures = pictures_in(&agent.requests()[2].body);
    assert_eq!(pictures, [("image/png".to_string(), 400, 300)]);
    // It is kept with its result: the history rebuilds the same request.
    assert_eq!(stored_pictures(&agent), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_reads_no_images_gets_a_note_and_the_person_is_told() {
    let mut agent = Agent::start_text_only(
        TestEnv::new().await,
        Wire::OpenAi,
        ApprovalPolicy::AskAlways,
    )
    .await;
    agent.push(says("I cannot see pictures."));
    agent.send_with_images("What is this?", &[("photo.png", picture(50, 40))]);
    let events = agent.collect_until_turn_end().await;
    let told = events
        .iter()
        .any(|e| matches!(e, AgentEvent::Note { text } if text.contains("does not read images")));
    assert!(told, "{}", agent.dump());
    let body = &agent.requests()[0].body;
    assert!(pictures_in(body).is_empty(), "{body}");
    let user = body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default();
    assert!(
        user.starts_with("What is this?") && user.contains("does not read images"),
        "{user}"
    );
    let tools = body["tools"].to_string();
    assert!(
        tools.contains("run_code") && !tools.contains("view_image"),
        "{tools}"
    );
    // The picture is kept all the same: a switch to a model that reads images sends it.
    assert_eq!(stored_pictures(&agent), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_image_sends_the_picture_and_a_missing_one_stops_the_chat_naming_it() {
    let env = TestEnv::new().await;
    let (server, base) = ironclaw_llm::testing::ScriptedServer::start()
        .await
        .expect("scripted server");
    let base = format!("{base}/v1");
    let dir = tempfile::tempdir().expect("temp dir");
    let photo = dir.path().join("photo.png");
    std::fs::write(&photo, picture(2000, 500)).expect("write the picture");
    let args = |image: &str| {
        vec![
            "--provider".to_string(),
            "openai".into(),
            "--base-url".into(),
            base.clone(),
            "--model".into(),
            "gpt-4o".into(),
            "--image".into(),
            image.to_string(),
            "-m".into(),
            "what is this?".into(),
        ]
    };
    server.push(says("A gradient."));
    let ok = args(photo.to_str().expect("utf-8"));
    let ok: Vec<&str> = ok.iter().map(String::as_str).collect();
    let (stdout, _) = chat_cli(&env, &ok).await;
    assert!(stdout.contains("A gradient."), "{stdout}");
    let requests = server.chat_requests();
    let sent: Vec<(u32, u32)> = pictures_in(&requests[0].body)
        .into_iter()
        .map(|(_, w, h)| (w, h))
        .collect();
    assert_eq!(
        sent,
        [(1568, 392)],
        "gpt-4o reads images: the picture goes, scaled"
    );

    // `/image PATH` in the chat: the picture goes with the next message.
    server.push(says("Another gradient."));
    let photo_arg = format!("/image {}", photo.display());
    let slash = args("unused");
    let mut slash: Vec<String> = slash[..6].to_vec();
    slash.extend(["-m".into(), photo_arg, "-m".into(), "and this?".into()]);
    let slash: Vec<&str> = slash.iter().map(String::as_str).collect();
    let (_, stderr) = chat_cli(&env, &slash).await;
    assert!(
        stderr.contains("1 picture will go with your next message"),
        "{stderr}"
    );
    let last = server.chat_requests().pop().expect("a request");
    assert_eq!(pictures_in(&last.body).len(), 1, "{}", last.body);
    assert!(last.body.to_string().contains("and this?"));

    let missing = dir.path().join("nope.png");
    let bad = args(missing.to_str().expect("utf-8"));
    let bad: Vec<&str> = bad.iter().map(String::as_str).collect();
    let (status, _, stderr) = chat_cli_status(&env, &bad).await;
    assert!(!status.success());
    assert!(
        stderr.contains("--image")
            && stderr.contains("nope.png")
            && stderr.contains("cannot read it"),
        "{stderr}"
    );
    assert_eq!(server.chat_requests().len(), 2, "no model was asked");
}

/// A tool the model was not offered never runs: a text-only model that calls `view_image`
/// anyway gets a tool error, the chat does not say the model looked at anything, and no
/// picture goes out with the next request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_the_model_was_not_offered_never_runs() {
    let mut agent =
        Agent::start_text_only(TestEnv::new().await, Wire::OpenAi, ApprovalPolicy::NeverAsk).await;
    agent.push_all([
        asks_to_run(
            "c1",
            "python",
            "import base64\nopen('/workspace/pic.png', 'wb').write(base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='))",
        ),
        asks_to_view("c2", "pic.png"),
        says("ok"),
    ]);
    agent.send("draw, then look");
    let events = agent.collect_until_turn_end().await;
    assert!(
        agent.workspace().join("pic.png").exists(),
        "the picture was there to look at"
    );
    // The model did ask: the second request had no view_image to offer.
    let requests = agent.requests();
    assert!(!requests[1].body["tools"].to_string().contains("view_image"));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::ImageViewed { .. })),
        "{}",
        agent.dump()
    );
    let results = tool_results(&requests[2]);
    assert!(
        results
            .iter()
            .any(|r| r.contains("view_image") && r.contains("not offered")),
        "{results:?}"
    );
    assert!(pictures_in(&requests[2].body).is_empty());
}
