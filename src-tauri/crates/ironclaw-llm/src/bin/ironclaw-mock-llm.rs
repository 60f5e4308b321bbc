//! A scripted LLM server for end-to-end tests of the desktop app.
//!
//! Usage: `ironclaw-mock-llm SCRIPT.json [--port PORT] [--log REQUESTS.jsonl]`
//!
//! The script is a [`ironclaw_llm::testing::Script`]:
//! `{"replies": [{"type": "text", "chunks": ["Hel", "lo"]}], "models": ["mock"]}`, with
//! `"toolless": [...]` for the answers to summary requests.
//! The first line on stdout is the base URL (`http://127.0.0.1:PORT`); use `{base}/v1` as an
//! OpenAI-compatible base URL or `{base}` as the Anthropic one. Runs until interrupted.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{bail, Context};
use ironclaw_llm::testing::{Script, ScriptedServer};

struct Args {
    script: PathBuf,
    port: u16,
    log: Option<PathBuf>,
}

fn parse_args() -> anyhow::Result<Args> {
    const USAGE: &str = "usage: ironclaw-mock-llm SCRIPT.json [--port PORT] [--log REQUESTS.jsonl]";
    let mut script = None;
    let mut port = 0;
    let mut log = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--port") => {
                let value = args.next().context(USAGE)?;
                port = value
                    .to_str()
                    .and_then(|v| v.parse().ok())
                    .with_context(|| format!("--port wants a number. {USAGE}"))?;
            }
            Some("--log") => log = Some(PathBuf::from(args.next().context(USAGE)?)),
            Some("-h" | "--help") => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ if script.is_none() => script = Some(PathBuf::from(arg)),
            _ => bail!("unexpected argument {arg:?}. {USAGE}"),
        }
    }
    Ok(Args {
        script: script.context(USAGE)?,
        port,
        log,
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = parse_args()?;
    let text = std::fs::read_to_string(&args.script)
        .with_context(|| format!("reading the script {}", args.script.display()))?;
    let script: Script = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a valid script", args.script.display()))?;

    let (server, base_url) =
        ScriptedServer::start_on(SocketAddr::from(([127, 0, 0, 1], args.port)))
            .await
            .with_context(|| format!("listening on 127.0.0.1:{}", args.port))?;
    server.push_all(script.replies);
    for reply in script.toolless {
        server.push_toolless(reply);
    }
    if !script.models.is_empty() {
        server.set_models(script.models);
    }
    if let Some(log) = args.log {
        server.log_requests_to(log);
    }

    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{base_url}")?;
    stdout.flush()?;
    drop(stdout);

    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    Ok(())
}
