//! One `fetch_url` call: the page through the conversation's network list (a host not on it is
//! asked about, as a run's refused host is, and the fetch waits for the answer), then fenced as
//! untrusted for the model, scanned for instructions to an AI (the person sees what was found),
//! audited, and kept with the call so a reopened conversation shows it.

use std::sync::Arc;

use ironclaw_llm::ToolCall;
use ironclaw_protocol::{AgentEvent, AuditRecord, FetchReport, HostDecision, ToolCallId};
use ironclaw_sandbox::network::fetch::{FetchError, Page};
use tokio_util::sync::CancellationToken;

use super::step::StepError;
use super::Inner;
use crate::{tools, untrusted};

/// The most of a page's text the model is given (about 12k tokens).
pub const MAX_MODEL_TEXT: usize = 48 * 1024;
/// Hosts one fetch may ask about (its own and redirects').
const MAX_ASKS: usize = 3;

pub(super) async fn handle(
    inner: &Arc<Inner>,
    call_id: ToolCallId,
    call: &ToolCall,
    cancel: &CancellationToken,
) -> Result<(String, bool), StepError> {
    let asked = match tools::decode_fetch(&call.arguments) {
        Ok(f) => f.url,
        Err(e) => return Ok((e.to_string(), true)),
    };
    inner.emit(AgentEvent::FetchStarted {
        call_id,
        url: asked.clone(),
    });
    let rt = inner.runtime().await.map_err(StepError::Failed)?;
    let session = &inner.sandbox_session;
    let mut url = asked.clone();
    let mut once: Vec<String> = Vec::new();
    let mut denied: Vec<String> = Vec::new();
    let mut asks = 0;
    let fetched = loop {
        let attempt = tokio::select! {
            r = rt.sandbox.fetch(session, &url, &once) => r,
            () = cancel.cancelled() => return Err(StepError::Cancelled),
        };
        match attempt {
            Err(FetchError::NotListed { target, url: at }) => {
                let already = inner
                    .blocked_hosts
                    .lock()
                    .map(|b| b.was_denied(&target))
                    .unwrap_or(false);
                if already || asks == MAX_ASKS {
                    denied.push(target.clone());
                    break Err(if already {
                        format!("the user already declined {target} in this conversation; do not ask for it again")
                    } else {
                        format!("{target} is not on the network allowlist, and this fetch asked about {MAX_ASKS} hosts already")
                    });
                }
                asks += 1;
                match ask(inner, call_id, &at, &target, cancel).await? {
                    HostDecision::Deny => {
                        denied.push(target.clone());
                        break Err(format!("the user did not allow {target}"));
                    }
                    HostDecision::AllowOnce => once.push(target),
                    HostDecision::AllowForSession | HostDecision::AllowAlways => {}
                }
                url = at;
            }
            Err(e @ FetchError::Refused { .. }) => {
                if let FetchError::Refused { target, .. } = &e {
                    denied.push(target.clone());
                }
                break Err(e.to_string());
            }
            Err(e) => break Err(e.to_string()),
            Ok(page) => break Ok(page),
        }
    };
    let (report, for_model, is_error) = match fetched {
        Ok(page) => {
            let (report, text) = read(asked, page);
            (report, text, false)
        }
        Err(error) => (
            FetchReport::failed(asked.clone(), error.clone()),
            format!("Could not fetch {asked}: {error}."),
            true,
        ),
    };
    inner.audit(AuditRecord::Fetched {
        conversation_id: inner.conversation,
        url: report.url.clone(),
        final_url: report.final_url.clone(),
        status: report.status,
        bytes: report.bytes,
        denied,
        warnings: report.warnings.len(),
        error: report.error.clone(),
    });
    match serde_json::to_string(&report) {
        Ok(json) => {
            if let Err(e) = inner.deps.history.set_tool_call_outcome(call_id, &json) {
                tracing::warn!(error = %e, "could not keep the fetch's report with its call");
            }
        }
        Err(e) => tracing::warn!(error = %e, "could not write the fetch's report"),
    }
    inner.emit(AgentEvent::FetchEnded { call_id, report });
    Ok((for_model, is_error))
}

/// Asks the person about `target` (as for a run's refused host) and waits for the answer.
async fn ask(
    inner: &Inner,
    call_id: ToolCallId,
    url: &str,
    target: &str,
    cancel: &CancellationToken,
) -> Result<HostDecision, StepError> {
    let answer = inner
        .blocked_hosts
        .lock()
        .map(|mut b| b.wait_for(target))
        .map_err(|_| StepError::Failed("the list of network questions is unusable".into()))?;
    inner.emit(AgentEvent::FetchHostAsked {
        call_id,
        url: url.to_string(),
        target: target.to_string(),
        reason: format!(
            "The model wants to fetch {url}; {target} is not on the network allowlist."
        ),
    });
    tokio::select! {
        decision = answer => decision.map_err(|_| StepError::Failed("the question about the host was dropped".into())),
        () = cancel.cancelled() => {
            if let Ok(mut b) = inner.blocked_hosts.lock() {
                b.give_up(target);
            }
            Err(StepError::Cancelled)
        }
    }
}

/// The person's report and the model's text for a page.
fn read(asked: String, page: Page) -> (FetchReport, String) {
    let mut text = page.text;
    let mut cut = page.cut;
    if text.len() > MAX_MODEL_TEXT {
        text.truncate(crate::text::floor_char_boundary(&text, MAX_MODEL_TEXT));
        cut = true;
    }
    let mut header = format!(
        "[IronClaw fetched {} for you: HTTP {}, {}, {} bytes",
        page.url, page.status, page.content_type, page.bytes
    );
    header.push(']');
    if cut {
        header
            .push_str("\nOnly the start of the page is below (it was longer than IronClaw reads).");
    }
    if page.hidden_left_out > 0 || page.invisible_removed > 0 {
        header.push_str(&format!(
            "\nLeft out: {} element(s) a browser would not show and {} invisible character(s).",
            page.hidden_left_out, page.invisible_removed
        ));
    }
    // The title is the page's own words: inside the fence, with the rest of them.
    let content = match &page.title {
        Some(title) => format!("Title: {title}\n\n{text}"),
        None => text,
    };
    let warnings = untrusted::scan(&content);
    let for_model = untrusted::fence(&page.url, &header, &content, warnings.len());
    let report = FetchReport {
        url: asked,
        final_url: Some(page.url),
        status: Some(page.status),
        title: page.title,
        bytes: page.bytes,
        cut,
        warnings,
        error: None,
    };
    (report, for_model)
}
