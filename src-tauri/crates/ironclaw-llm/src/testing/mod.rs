//! A scripted LLM server on loopback for tests: it speaks both wire formats over real HTTP,
//! answers each chat request with the next queued [`Reply`], and records what it was sent.
//!
//! Routes: `POST /v1/chat/completions` (OpenAI SSE; base URL `{base}/v1`), `POST /v1/messages`
//! (Anthropic SSE; base URL `{base}`), `GET /v1/models` (both list shapes at once) and
//! `GET /api/tags` (Ollama). With no reply queued, a chat request gets HTTP 418 saying so.

mod script;

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::stream;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE, RETRY_AFTER};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

mod window;

use script::{Format, Step};
pub use script::{Reply, ScriptedCall, SCRIPTED_INPUT_TOKENS};
use window::too_long;
pub use window::{ContextLimit, OLLAMA_DEFAULT_NUM_CTX};

/// A script file for the `ironclaw-mock-llm` binary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Script {
    pub replies: Vec<Reply>,
    /// What the model lists show; `["scripted-model"]` when empty.
    #[serde(default)]
    pub models: Vec<String>,
    /// Answers to requests that offer no tools (the summaries IronClaw asks for when it
    /// compacts), kept apart so they never take a turn's answer.
    #[serde(default)]
    pub toolless: Vec<Reply>,
}

/// One request the server received.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Lower-case names.
    pub headers: BTreeMap<String, String>,
    /// The JSON body, or `null` when there was none (or it was not JSON).
    pub body: Value,
    /// The request was longer than the window an Ollama-like server had (`num_ctx`, else its
    /// default): that server read it with its start dropped, and said nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    #[serde(skip)]
    pub received_at: Instant,
}

fn capabilities(without_tools: bool, vision: bool) -> Value {
    let mut out = vec!["completion"];
    if !without_tools {
        out.push("tools");
    }
    if vision {
        out.push("vision");
    }
    json!(out)
}

#[derive(Default)]
struct Inner {
    replies: VecDeque<Reply>,
    /// Answers to requests that offer no tools (IronClaw's summaries), kept apart so a test
    /// need not know when one will be asked for.
    toolless: VecDeque<Reply>,
    requests: Vec<RecordedRequest>,
    /// `None` serves `["scripted-model"]`.
    models: Option<Vec<String>>,
    request_log: Option<PathBuf>,
    window: Option<ContextLimit>,
    /// Refusals for length do not name the window (as some servers' do not).
    refusal_names_no_window: bool,
    /// What `/api/show` reports as the model's `context_length`.
    model_context_length: Option<u64>,
    /// `/api/show` leaves `tools` out of the capabilities.
    model_without_tools: bool,
    /// `/api/show` lists `vision` among the capabilities.
    model_with_vision: bool,
}

struct Shared {
    inner: Mutex<Inner>,
    /// Streams the client dropped before the script finished.
    hangups: watch::Sender<usize>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A test that panicked while holding the lock must not hide its own failure behind ours.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Stops serving when dropped.
pub struct ScriptedServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    shutdown: CancellationToken,
}

impl ScriptedServer {
    /// Listens on a free loopback port; returns the server and its base URL (no trailing slash).
    pub async fn start() -> std::io::Result<(Self, String)> {
        Self::start_on(SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    pub async fn start_on(addr: SocketAddr) -> std::io::Result<(Self, String)> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner::default()),
            hangups: watch::Sender::new(0),
        });
        let shutdown = CancellationToken::new();
        tokio::spawn(accept_loop(listener, Arc::clone(&shared), shutdown.clone()));
        let server = ScriptedServer {
            shared,
            addr,
            shutdown,
        };
        let base = server.base_url();
        Ok((server, base))
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Rejects chat requests longer than `limit` from now on, as the real services do.
    pub fn enforce_window(&self, limit: ContextLimit) {
        self.shared.lock().window = Some(limit);
    }

    /// Refusals for length say only that the request was too long, not how long the window
    /// is, as some servers' do.
    pub fn refuse_without_naming_the_window(&self) {
        self.shared.lock().refusal_names_no_window = true;
    }

    /// What `/api/show` reports as the model's window (default 131072).
    pub fn set_model_context_length(&self, tokens: u64) {
        self.shared.lock().model_context_length = Some(tokens);
    }

    /// `/api/show` says the model cannot call tools.
    pub fn set_model_without_tools(&self) {
        self.shared.lock().model_without_tools = true;
    }

    /// `/api/show` says the model reads images.
    pub fn set_model_with_vision(&self) {
        self.shared.lock().model_with_vision = true;
    }

    /// Queues the answer to the next chat request that offers no tools (a summary request).
    pub fn push_toolless(&self, reply: Reply) {
        self.shared.lock().toolless.push_back(reply);
    }

    /// Toolless replies not asked for yet.
    pub fn remaining_toolless(&self) -> usize {
        self.shared.lock().toolless.len()
    }

    /// Queues the answer to the next chat request.
    pub fn push(&self, reply: Reply) {
        self.shared.lock().replies.push_back(reply);
    }

    pub fn push_all(&self, replies: impl IntoIterator<Item = Reply>) {
        self.shared.lock().replies.extend(replies);
    }

    pub fn set_models<S: Into<String>>(&self, models: impl IntoIterator<Item = S>) {
        self.shared.lock().models = Some(models.into_iter().map(Into::into).collect());
    }

    /// Appends every request as a JSON line to `path` (credential headers blanked).
    pub fn log_requests_to(&self, path: impl Into<PathBuf>) {
        self.shared.lock().request_log = Some(path.into());
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// The recorded chat requests only (model listings left out).
    pub fn chat_requests(&self) -> Vec<RecordedRequest> {
        let mut requests = self.requests();
        requests.retain(|r| r.method == "POST" && r.path != "/api/show");
        requests
    }

    pub fn remaining_replies(&self) -> usize {
        self.shared.lock().replies.len()
    }

    /// Waits until clients have hung up on `count` streams before their end.
    pub async fn wait_for_hangups(&self, count: usize) {
        let mut hangups = self.shared.hangups.subscribe();
        // The sender lives in `self`, so the channel cannot close while we wait.
        let _ = hangups.wait_for(|n| *n >= count).await;
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, shutdown: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _)) = accepted else {
            // Out of file descriptors or similar: back off instead of spinning.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let shared = Arc::clone(&shared);
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(move |request| handle(Arc::clone(&shared), request));
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = connection => {}
                () = shutdown.cancelled() => {}
            }
        });
    }
}

type Body = UnsyncBoxBody<Bytes, std::io::Error>;

async fn handle(
    shared: Arc<Shared>,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let headers = request
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_string(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = match request.into_body().collect().await {
        Ok(collected) => serde_json::from_slice(&collected.to_bytes()).unwrap_or(Value::Null),
        Err(_) => Value::Null,
    };
    let mut recorded = RecordedRequest {
        method: method.to_string(),
        path: path.clone(),
        headers,
        body,
        truncated: false,
        received_at: Instant::now(),
    };
    let model = recorded
        .body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("scripted-model")
        .to_string();
    let (window, context_length, without_tools, vision) = {
        let inner = shared.lock();
        (
            inner.window,
            inner.model_context_length,
            inner.model_without_tools,
            inner.model_with_vision,
        )
    };
    // Ollama's way: a prompt over its window is cut from the start, without an error.
    if path == "/api/chat" {
        if let Some(limit) = window {
            let num_ctx = recorded.body["options"]["num_ctx"]
                .as_u64()
                .unwrap_or(OLLAMA_DEFAULT_NUM_CTX);
            recorded.truncated = limit.count(&recorded.body) > num_ctx;
        }
    }
    let toolless = recorded
        .body
        .get("tools")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    let over = window
        .filter(|_| path != "/api/chat")
        .map(|limit| (limit.tokens, limit.count(&recorded.body)))
        .filter(|(limit, counted)| counted > limit);
    let models = record(&shared, recorded);
    if let (Some((limit, counted)), &Method::POST) = (over, &method) {
        let named = !shared.lock().refusal_names_no_window;
        return Ok(too_long(path.as_str(), limit, counted, named));
    }

    Ok(match (&method, path.as_str()) {
        (&Method::GET, "/v1/models" | "/models") => json_response(
            StatusCode::OK,
            &json!({
                "object": "list",
                "data": models.iter().map(|id| json!({"id": id, "object": "model", "type": "model", "owned_by": "scripted"})).collect::<Vec<_>>(),
                "has_more": false,
            }),
        ),
        (&Method::GET, "/api/tags") => json_response(
            StatusCode::OK,
            &json!({"models": models.iter().map(|name| json!({"name": name, "model": name})).collect::<Vec<_>>()}),
        ),
        (&Method::POST, "/v1/chat/completions" | "/chat/completions") => {
            scripted(&shared, Format::OpenAi, &model, toolless)
        }
        (&Method::POST, "/v1/messages") => scripted(&shared, Format::Anthropic, &model, toolless),
        (&Method::POST, "/api/chat") => scripted(&shared, Format::Ollama, &model, toolless),
        (&Method::POST, "/api/show") => json_response(
            StatusCode::OK,
            &json!({
                "parameters": "",
                "model_info": {
                    "general.architecture": "llama",
                    "llama.context_length": context_length.unwrap_or(131_072),
                },
                "capabilities": capabilities(without_tools, vision),
            }),
        ),
        _ => json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": {"type": "not_found_error", "message": format!("scripted server: no route for {method} {path}")}}),
        ),
    })
}

/// Stores the request (and logs it, if asked); returns the model list to serve.
fn record(shared: &Shared, request: RecordedRequest) -> Vec<String> {
    let mut inner = shared.lock();
    if let Some(path) = &inner.request_log {
        let mut logged = request.clone();
        for secret in ["authorization", "x-api-key"] {
            if let Some(value) = logged.headers.get_mut(secret) {
                *value = "<redacted>".into();
            }
        }
        let line = serde_json::to_string(&logged).unwrap_or_default();
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut file| writeln!(file, "{line}"));
        if let Err(err) = written {
            tracing::warn!(error = %err, path = %path.display(), "scripted server could not log a request");
        }
    }
    inner.requests.push(request);
    inner
        .models
        .clone()
        .unwrap_or_else(|| vec!["scripted-model".to_string()])
}

fn scripted(shared: &Arc<Shared>, format: Format, model: &str, toolless: bool) -> Response<Body> {
    let reply = {
        let mut inner = shared.lock();
        match inner.toolless.pop_front() {
            Some(reply) if toolless => Some(reply),
            Some(reply) => {
                inner.toolless.push_front(reply);
                inner.replies.pop_front()
            }
            None => inner.replies.pop_front(),
        }
    };
    let Some(reply) = reply else {
        return json_response(
            StatusCode::IM_A_TEAPOT,
            &json!({"error": {"type": "scripted_server", "message": "the scripted server has no reply queued for this request; push one with ScriptedServer::push"}}),
        );
    };
    let Some(steps) = script::steps(&reply, format, model) else {
        return status_response(&reply);
    };
    let state = BodyState {
        steps: steps.into(),
        guard: HangupGuard {
            shared: Arc::clone(shared),
            finished: false,
        },
    };
    let body = StreamBody::new(stream::unfold(state, next_frame)).boxed_unsync();
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn status_response(reply: &Reply) -> Response<Body> {
    if let Reply::Raw { content_type, body } = reply {
        let mut response = Response::new(full(Bytes::from(body.clone())));
        let value = HeaderValue::from_str(content_type)
            .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream"));
        response.headers_mut().insert(CONTENT_TYPE, value);
        return response;
    }
    let Reply::Status {
        status,
        body,
        retry_after,
    } = reply
    else {
        return json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"error": "not a status reply"}),
        );
    };
    let mut response = Response::new(full(Bytes::from(body.clone())));
    *response.status_mut() =
        StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(value) = retry_after
        .as_deref()
        .and_then(|v| HeaderValue::from_str(v).ok())
    {
        response.headers_mut().insert(RETRY_AFTER, value);
    }
    response
}

fn json_response(status: StatusCode, body: &Value) -> Response<Body> {
    let mut response = Response::new(full(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn full(bytes: Bytes) -> Body {
    Full::new(bytes)
        .map_err(|never| match never {})
        .boxed_unsync()
}

struct BodyState {
    steps: VecDeque<Step>,
    guard: HangupGuard,
}

/// Counts a hang-up when a body is dropped before its script ran out.
struct HangupGuard {
    shared: Arc<Shared>,
    finished: bool,
}

impl Drop for HangupGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.shared.hangups.send_modify(|n| *n += 1);
        }
    }
}

async fn next_frame(
    mut state: BodyState,
) -> Option<(Result<Frame<Bytes>, std::io::Error>, BodyState)> {
    loop {
        match state.steps.pop_front() {
            None => {
                state.guard.finished = true;
                return None;
            }
            Some(Step::Sleep(delay)) => tokio::time::sleep(delay).await,
            Some(Step::Send(bytes)) => return Some((Ok(Frame::data(bytes)), state)),
            Some(Step::Abort) => {
                state.guard.finished = true;
                let cut = std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "scripted disconnect",
                );
                return Some((Err(cut), state));
            }
        }
    }
}
