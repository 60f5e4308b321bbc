//! The request for the next model call, fitted to the context window (see [`crate::context`]):
//! compacting when the transcript no longer fits, and saying so.

use ironclaw_llm::{ChatRequest, Message, ToolSpec};
use ironclaw_protocol::{AgentEvent, TurnId};
use ironclaw_store::{MessageRole, MessageStatus, NewMessage};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::runtime::Runtime;
use super::step::StepError;
use super::Inner;
use crate::context::{compact, fit, Compaction, Estimator, Fitted};

/// The room kept for the answer, at most (a quarter of the window when that is less).
pub(super) const MAX_OUTPUT: u32 = 4096;

/// A run's code and a typical result: what one tool round trip adds to a conversation.
const ROUND_TRIP: u64 = 1_500;

/// How hard to try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Effort {
    Normal,
    /// The provider said the last request was too long although the estimate said it fit:
    /// summarise what can be, and cut every output but the last.
    Harder,
}

pub(super) async fn prepare(
    inner: &Inner,
    rt: &Runtime,
    turn_id: TurnId,
    system: &str,
    tools: Vec<ToolSpec>,
    effort: Effort,
    cancel: &CancellationToken,
) -> Result<ChatRequest, StepError> {
    let window = rt.context_window.tokens;
    let estimator = estimator(inner, &rt.model);
    let harder = effort == Effort::Harder;
    let transcript = inner.transcript.lock().await.clone();
    let transcript = if rt.images {
        transcript
    } else {
        crate::vision::without_images(transcript, &rt.model)
    };
    let mut compaction = inner.compaction.lock().await.clone();
    let fit_now = |compaction: Option<&Compaction>, harder: bool| {
        fit(
            &estimator,
            system,
            &tools,
            &transcript,
            compaction,
            window,
            MAX_OUTPUT,
            harder,
        )
    };
    warn_if_too_small(inner, rt, &estimator, system, &tools);
    let mut fitted = fit_now(compaction.as_ref(), harder);
    if !fitted.fits() || harder {
        if let Some(covers) = compact::covers(&transcript, compaction.as_ref()) {
            let before = fitted.tokens;
            let new = match summarise(
                inner,
                rt,
                &estimator,
                &transcript,
                compaction.as_ref(),
                covers,
                cancel,
            )
            .await
            {
                Ok(summary) => summary,
                Err(StepError::Failed(why)) => left_out(inner, covers, &why).await,
                Err(other) => return Err(other),
            };
            fitted = fit_now(Some(&new), harder);
            record(inner, turn_id, &new, before, fitted.tokens)?;
            compaction = Some(new);
        }
    }
    if !fitted.fits() && !harder {
        fitted = fit_now(compaction.as_ref(), true);
    }
    if !fitted.fits() {
        return Err(StepError::Failed(too_big(rt, &fitted)));
    }
    // Past half the budget the estimate's over-count starts to cost context: get the exact
    // tokenizer ready for the next request.
    if let Some(family) = estimator.family() {
        if fitted.tokens.saturating_mul(2) > fitted.budget && !family.is_loaded() {
            family.load_in_background();
        }
    }
    if fitted.cut_outputs > 0 {
        tracing::info!(
            cut = fitted.cut_outputs,
            "old tool outputs cut to fit the context window"
        );
    }
    let source = rt.context_window.source.describe();
    // Kept, so a reopened conversation shows its meter before its next turn.
    let kept = (rt.model.as_str(), fitted.tokens, window, source);
    if let Err(e) = inner
        .deps
        .history
        .set_setting(&super::context_usage_key(inner.conversation), &kept)
    {
        tracing::debug!(error = %e, "could not keep the context usage");
    }
    inner.emit(AgentEvent::ContextUsage {
        model: rt.model.clone(),
        used_tokens: fitted.tokens,
        window_tokens: window,
        window_source: source.to_string(),
    });
    Ok(ChatRequest {
        model: rt.model.clone(),
        system: system.to_string(),
        messages: fitted.messages,
        tools,
        max_tokens: None,
        temperature: None,
        context_window: Some(window),
    })
}

/// Tells the person, once a session, when the window cannot hold IronClaw's instructions, an
/// answer and one run with its result: every turn would then lose context.
fn warn_if_too_small(
    inner: &Inner,
    rt: &Runtime,
    estimator: &Estimator,
    system: &str,
    tools: &[ToolSpec],
) {
    let window = rt.context_window.tokens;
    let needs = estimator.request(system, tools, &[])
        + crate::context::fit::answer_room(window, MAX_OUTPUT)
        + ROUND_TRIP;
    if needs <= u64::from(window)
        || inner
            .window_warned
            .swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        return;
    }
    inner.emit(AgentEvent::Note {
        text: format!(
            "{}'s context window ({} tokens, {}) is too small for IronClaw's instructions, an \
             answer and one run with its result (about {needs} tokens): it will lose track of \
             the conversation quickly. Choose a model with a larger window, or set a larger \
             one if the model supports it.",
            rt.model,
            window,
            rt.context_window.source.describe()
        ),
    });
}

/// Learns from the provider's count of the prompt it was sent.
pub(super) fn learn(inner: &Inner, request: &ChatRequest, reported_input_tokens: u64) {
    if let Ok(mut estimator) = inner.estimator.lock() {
        estimator.calibrate(
            &request.system,
            &request.tools,
            &request.messages,
            reported_input_tokens,
        );
    }
}

fn estimator(inner: &Inner, model: &str) -> Estimator {
    match inner.estimator.lock() {
        Ok(mut e) => {
            *e = e.for_model(model);
            *e
        }
        Err(_) => Estimator::default().for_model(model),
    }
}

#[allow(clippy::too_many_arguments)]
async fn summarise(
    inner: &Inner,
    rt: &Runtime,
    estimator: &Estimator,
    transcript: &[Message],
    previous: Option<&Compaction>,
    covers: usize,
    cancel: &CancellationToken,
) -> Result<Compaction, StepError> {
    // The summary's own request must fit too: its answer's room, and some slack.
    let window = u64::from(rt.context_window.tokens);
    let room = window.saturating_sub(1024 + 512) * 9 / 10;
    let mut request =
        compact::summary_request(&rt.model, estimator, transcript, previous, covers, room);
    request.context_window = Some(rt.context_window.tokens);
    let span =
        tracing::info_span!("llm.compact", provider = rt.provider.id(), model = %rt.model, covers);
    let text = compact::summarise(rt.provider.as_ref(), &request, cancel)
        .instrument(span)
        .await
        .map_err(|e| match e {
            ironclaw_llm::Error::Cancelled => StepError::Cancelled,
            other => StepError::Failed(format!(
                "The conversation no longer fits the model's context window, and asking the \
                 model to summarise its start failed: {other}"
            )),
        })?;
    let compaction = Compaction {
        covers_user_messages: covers,
        text,
    };
    *inner.compaction.lock().await = Some(compaction.clone());
    Ok(compaction)
}

/// When the model cannot summarise the conversation's start (an error, an empty answer), that
/// start is left out with a marker the model and the person both see: a conversation never
/// dies of its own length.
async fn left_out(inner: &Inner, covers: usize, why: &str) -> Compaction {
    tracing::warn!(
        why,
        covers,
        "no summary: the conversation's start is left out"
    );
    inner.emit(AgentEvent::Note {
        text: format!(
            "The conversation outgrew the model's context window and the model could not \
             summarise its start ({why}), so its first {covers} message(s) of yours and what \
             followed them are left out of what the model reads. The history keeps them."
        ),
    });
    let compaction = Compaction {
        covers_user_messages: covers,
        text: format!(
            "[The first {covers} user message(s) of this conversation and the replies to them \
             are left out: they no longer fit the context window and could not be summarised. \
             Ask the user if something from them is needed.]"
        ),
    };
    *inner.compaction.lock().await = Some(compaction.clone());
    compaction
}

/// Keeps the summary in the history and tells the person.
fn record(
    inner: &Inner,
    turn_id: TurnId,
    compaction: &Compaction,
    tokens_before: u64,
    tokens_after: u64,
) -> Result<(), StepError> {
    inner
        .deps
        .history
        .add_message(&NewMessage {
            conversation_id: inner.conversation,
            turn_id: Some(turn_id),
            role: MessageRole::Summary,
            content: compaction.to_json(),
            status: MessageStatus::Complete,
            model: None,
        })
        .map_err(|e| {
            StepError::Failed(format!("could not save the summary to the history: {e}"))
        })?;
    tracing::info!(
        tokens_before,
        tokens_after,
        covers = compaction.covers_user_messages,
        "conversation compacted"
    );
    inner.emit(AgentEvent::Compacted {
        summary: compaction.text.clone(),
        tokens_before,
        tokens_after,
    });
    Ok(())
}

fn too_big(rt: &Runtime, fitted: &Fitted) -> String {
    format!(
        "The latest message and what it needs no longer fit the model's context window: about \
         {} tokens, and {} of the {}-token window ({}) are left for them. Start a new \
         conversation, send a shorter message, or — if the model can read more — set a larger \
         context window (context_window in the provider settings).",
        fitted.tokens,
        fitted.budget,
        rt.context_window.tokens,
        rt.context_window.source.describe()
    )
}
