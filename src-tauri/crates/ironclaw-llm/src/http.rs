//! The HTTP side every provider shares: the client, retries before the first event, the idle
//! timeout between chunks, cancellation, and the pump that turns SSE into [`StreamEvent`]s.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime};

use futures_util::stream::{self, BoxStream};
use futures_util::{Stream, StreamExt};
use reqwest::RequestBuilder;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::classify::{self, ErrorBody, ErrorContext};
use crate::error::{Error, Result};
use crate::retry::{parse_retry_after, RetryPolicy};
use crate::sse::{SseEvent, SseParser};
use crate::types::StreamEvent;

/// What a provider's `stream` returns: events, then the end (or one error, then the end).
pub type EventStream = BoxStream<'static, Result<StreamEvent>>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    pub connect_timeout: Duration,
    /// The longest silence tolerated while waiting for the answer to start and between two
    /// chunks. There is no total timeout: a long answer that keeps coming is fine. The default
    /// is generous because local servers may load a model or chew through a long prompt on a
    /// CPU before the first byte, and the person can cancel at any time.
    pub idle_timeout: Duration,
    pub retry: RetryPolicy,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(180),
            retry: RetryPolicy::default(),
        }
    }
}

/// How long a stream that already said why it stopped may stay silent before its answer is
/// taken as complete: a server that sends `finish_reason` but neither `[DONE]` nor a close
/// must not hold the turn for the whole idle timeout. Usage, when it follows, comes at once.
pub(crate) const FINISHED_GRACE: Duration = Duration::from_secs(2);

/// Turns one wire format's SSE events into stream events.
pub(crate) trait Decoder: Send + 'static {
    fn on_event(&mut self, sse: &SseEvent, out: &mut VecDeque<StreamEvent>) -> Result<()>;
    /// The body ended cleanly; an error if the answer was not complete.
    fn on_eof(&mut self, out: &mut VecDeque<StreamEvent>) -> Result<()>;
    /// The answer is complete; nothing after this is read.
    fn is_finished(&self) -> bool;
    /// The server said why the answer stopped, but the stream has not ended: only trailing
    /// bookkeeping (usage, the end marker) may still come.
    fn said_why_it_stopped(&self) -> bool {
        false
    }
    /// The body is newline-delimited JSON rather than server-sent events.
    fn ndjson(&self) -> bool {
        false
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Transport {
    client: reqwest::Client,
    options: HttpOptions,
}

impl Transport {
    pub fn new(options: HttpOptions) -> Result<Self> {
        let client = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .user_agent(concat!("ironclaw/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|err| Error::Config {
                field: "HTTP client".into(),
                message: root_cause(&err),
            })?;
        Ok(Transport { client, options })
    }

    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Sends the request built by `request` and returns its events. Retryable failures before
    /// the first event are retried under the [`RetryPolicy`]; after that, errors are items of the
    /// stream, because the person has already seen part of the answer.
    pub async fn open_stream<D: Decoder>(
        &self,
        ctx: &ErrorContext,
        request: impl Fn() -> RequestBuilder,
        decoder: impl Fn() -> D,
        cancel: &CancellationToken,
    ) -> Result<EventStream> {
        let policy = &self.options.retry;
        let mut waited = Duration::ZERO;
        let mut failed = 0;
        loop {
            let err = match self.attempt(ctx, request(), decoder(), cancel).await {
                Ok(events) => return Ok(events),
                Err(err) => err,
            };
            failed += 1;
            if !err.is_retryable() || failed >= policy.max_attempts {
                return Err(err);
            }
            let delay = policy.delay(failed, err.retry_after());
            if waited + delay > policy.max_total_wait {
                return Err(err);
            }
            tracing::warn!(
                attempt = failed,
                delay_ms = delay.as_millis() as u64,
                error = %err,
                "LLM request failed; retrying"
            );
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(Error::Cancelled),
                () = tokio::time::sleep(delay) => {}
            }
            waited += delay;
        }
    }

    async fn attempt<D: Decoder>(
        &self,
        ctx: &ErrorContext,
        request: RequestBuilder,
        decoder: D,
        cancel: &CancellationToken,
    ) -> Result<EventStream> {
        let response = self.send(ctx, request, cancel).await?;
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        if content_type.starts_with("text/html") {
            // A proxy, captive portal or login page answering 200: read as an event stream it
            // looks like a stream that ended early, which would send people looking for a
            // network fault instead of the wrong URL.
            return Err(Error::malformed(
                &ctx.provider,
                "it answered with a web page (text/html), not an event stream; check the base \
                 URL: a proxy, captive portal or login page answers like this",
            ));
        }
        let is_json = content_type.starts_with("application/json");
        if is_json {
            // Some proxies answer errors with 200 and JSON; other servers ignore `stream: true`.
            let body = self.guard(ctx, cancel, response.text()).await?;
            let body = body.map_err(|err| Error::disconnected(&ctx.provider, root_cause(&err)))?;
            let value: Option<serde_json::Value> = serde_json::from_str(&body).ok();
            return Err(match value.as_ref().and_then(ErrorBody::from_value) {
                Some(error) => classify::from_stream_error(ctx, &error),
                None => Error::malformed(
                    &ctx.provider,
                    "it answered with JSON, not an event stream; does the server support streaming?",
                ),
            });
        }
        let body: Pin<Box<dyn Stream<Item = _> + Send>> = Box::pin(response.bytes_stream());
        let parser = if decoder.ndjson() {
            SseParser::ndjson()
        } else {
            SseParser::default()
        };
        let mut events = Pump {
            body,
            parser,
            sse: VecDeque::new(),
            body_ended: false,
            decoder,
            pending: VecDeque::new(),
            finished: false,
            cancel: cancel.clone(),
            idle: self.options.idle_timeout,
            ctx: ctx.clone(),
        }
        .into_stream(tracing::Span::current());
        // Reading the first event here is what lets an early failure (an `overloaded` error
        // event right after the 200) still be retried.
        match events.next().await {
            Some(Err(err)) => Err(err),
            first => Ok(stream::iter(first).chain(events).boxed()),
        }
    }

    /// Sends one request; a non-success status becomes the matching error.
    pub async fn send(
        &self,
        ctx: &ErrorContext,
        request: RequestBuilder,
        cancel: &CancellationToken,
    ) -> Result<reqwest::Response> {
        let response = self
            .guard(ctx, cancel, request.send())
            .await?
            .map_err(|err| Error::Unreachable {
                url: ctx.url.clone(),
                reason: root_cause(&err),
            })?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = parse_retry_after(response.headers(), SystemTime::now());
        let body = self
            .guard(ctx, cancel, response.text())
            .await?
            .unwrap_or_default();
        let body = ErrorBody::parse(&body);
        tracing::debug!(status = status.as_u16(), kind = %body.kind, message = %body.message, "LLM server answered with an error");
        Err(classify::from_status(
            ctx,
            status.as_u16(),
            &body,
            retry_after,
        ))
    }

    /// GETs a JSON document (model lists).
    pub async fn get_json(
        &self,
        ctx: &ErrorContext,
        request: RequestBuilder,
        cancel: &CancellationToken,
    ) -> Result<serde_json::Value> {
        let response = self.send(ctx, request, cancel).await?;
        self.guard(ctx, cancel, response.json())
            .await?
            .map_err(|err| Error::malformed(&ctx.provider, root_cause(&err)))
    }

    /// Runs `future` unless cancelled or silent for longer than the idle timeout.
    async fn guard<F: Future>(
        &self,
        ctx: &ErrorContext,
        cancel: &CancellationToken,
        future: F,
    ) -> Result<F::Output> {
        let idle = self.options.idle_timeout;
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(Error::Cancelled),
            output = tokio::time::timeout(idle, future) => output.map_err(|_| Error::Timeout {
                provider: ctx.provider.clone(),
                idle,
            }),
        }
    }
}

/// Reads SSE events and feeds them to a decoder until the answer is complete.
struct Pump<D> {
    body: Pin<Box<dyn Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    parser: SseParser,
    /// Parsed events not yet given to the decoder.
    sse: VecDeque<SseEvent>,
    body_ended: bool,
    decoder: D,
    pending: VecDeque<StreamEvent>,
    finished: bool,
    cancel: CancellationToken,
    idle: Duration,
    ctx: ErrorContext,
}

impl<D: Decoder> Pump<D> {
    /// After an error the pump is dropped, and with it the connection.
    fn into_stream(self, span: tracing::Span) -> EventStream {
        stream::unfold(Some(self), move |pump| {
            async move {
                let mut pump = pump?;
                match pump.next_event().await? {
                    Ok(event) => Some((Ok(event), Some(pump))),
                    Err(err) => Some((Err(err), None)),
                }
            }
            .instrument(span.clone())
        })
        .boxed()
    }

    async fn next_event(&mut self) -> Option<Result<StreamEvent>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                if let StreamEvent::Done { stop_reason, usage } = &event {
                    tracing::info!(
                        ?stop_reason,
                        input_tokens = usage.input_tokens,
                        output_tokens = usage.output_tokens,
                        "LLM turn finished"
                    );
                }
                return Some(Ok(event));
            }
            if self.finished {
                return None;
            }
            let step = match self.sse.pop_front() {
                Some(sse) => self
                    .decoder
                    .on_event(&sse, &mut self.pending)
                    .map(|()| self.decoder.is_finished()),
                None if self.body_ended => self.at_end(),
                None => match self.read().await {
                    Ok(()) => Ok(false),
                    Err(err) => Err(err),
                },
            };
            match step {
                Ok(finished) => self.finished = finished,
                Err(err) => return Some(Err(err)),
            }
        }
    }

    /// Reads the next piece of the body into the parser.
    async fn read(&mut self) -> Result<()> {
        let grace = self.decoder.said_why_it_stopped();
        let wait = if grace {
            FINISHED_GRACE.min(self.idle)
        } else {
            self.idle
        };
        let next = tokio::select! {
            biased;
            () = self.cancel.cancelled() => {
                tracing::debug!("LLM stream cancelled; dropping the connection");
                return Err(Error::Cancelled);
            }
            next = tokio::time::timeout(wait, self.body.next()) => next,
        };
        match next {
            Err(_) if grace => {
                tracing::debug!(
                    "the server said why it stopped, then went silent; the answer is complete"
                );
                self.parser.finish(&mut self.sse);
                self.body_ended = true;
                Ok(())
            }
            Err(_) => Err(Error::Timeout {
                provider: self.ctx.provider.clone(),
                idle: self.idle,
            }),
            Ok(Some(Ok(bytes))) => self.parser.feed(&bytes, &mut self.sse),
            Ok(Some(Err(err))) => Err(Error::disconnected(&self.ctx.provider, root_cause(&err))),
            Ok(None) => {
                self.parser.finish(&mut self.sse);
                self.body_ended = true;
                Ok(())
            }
        }
    }

    /// The body ended and every event in it was decoded.
    fn at_end(&mut self) -> Result<bool> {
        if !self.parser.saw_events() {
            // An error sent as plain JSON under an event-stream header.
            let stray = self.parser.stray().trim();
            if let Some(error) = serde_json::from_str::<serde_json::Value>(stray)
                .ok()
                .as_ref()
                .and_then(ErrorBody::from_value)
            {
                return Err(classify::from_stream_error(&self.ctx, &error));
            }
        }
        self.decoder.on_eof(&mut self.pending).map(|()| true)
    }
}

/// The innermost cause ("Connection refused"), which says more than reqwest's outer message.
pub(crate) fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = err;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
