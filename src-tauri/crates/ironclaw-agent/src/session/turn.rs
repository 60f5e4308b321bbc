//! One turn: ask the model, stream its answer, run the code it asks for (each through the
//! approval gate), give it the results, and repeat until it answers without a tool call, the
//! step limit is reached, the person cancels, or something fails.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use ironclaw_llm::{ChatRequest, Message, StopReason, StreamEvent, TurnAccumulator};
use ironclaw_store::{MessageRole, MessageStatus, NewMessage, NewToolCall};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::context::{self, Effort};
use super::step::StepError;
use super::{decide, fetch, mcp, run_code, view_image, Inner};
use crate::prompt::system_prompt;
use crate::tools;
use ironclaw_protocol::{AgentEvent, TurnOutcome};

/// How often streamed text is saved, so a crash loses at most this much of an answer.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(250);

/// What the model is told about tool calls it did not finish writing.
const CUT_CALL_RESULT: &str = "Not run: your answer hit the output token limit before this \
    call was complete, so the code may be cut off. Nothing ran. Write the code again in \
    smaller steps (one short call at a time).";

pub(super) async fn run(
    inner: Arc<Inner>,
    queued: super::images::Queued,
    cancel: CancellationToken,
) {
    let super::images::Queued {
        text: user_text,
        images,
        refused,
    } = queued;
    let turn = match inner.deps.history.begin_turn(inner.conversation) {
        Ok(t) => t,
        Err(e) => {
            inner.emit(AgentEvent::Error {
                message: format!("could not start a turn: {e}"),
            });
            return;
        }
    };
    inner.emit(AgentEvent::TurnStarted {
        conversation_id: inner.conversation,
        turn_id: turn.id,
    });
    // What IronClaw has to tell the model (an undone run) goes in front, as on a rebuild.
    let mut notes: Vec<String> = inner
        .model_notes
        .lock()
        .map(|mut n| std::mem::take(&mut *n))
        .unwrap_or_default();
    for why in &refused {
        // The person reads why; the model is told, so it does not answer as if it saw it.
        if let Err(e) = tell(&inner, turn.id, why) {
            tracing::debug!(error = ?e, "a refused picture's note was not saved");
        }
        notes.push(why.clone());
    }
    let user_text = super::transcript::with_notes(&mut notes, user_text);
    inner.transcript.lock().await.push(Message::User {
        content: user_text,
        images: images.iter().map(crate::vision::for_model).collect(),
    });
    // A failed append in an earlier turn is news only if it fails again.
    if let Ok(mut unaudited) = inner.unaudited.lock() {
        *unaudited = None;
    }
    let (mut status, mut error) = match steps(&inner, turn.id, &cancel).await {
        Ok(()) => (TurnOutcome::Done, None),
        Err(StepError::Cancelled) => (TurnOutcome::Cancelled, None),
        Err(
            StepError::Failed(message)
            | StepError::ContextTooLong(message)
            | StepError::AfterRun { message, .. },
        ) => (TurnOutcome::Failed, Some(message)),
    };
    // A turn that ended for any reason can no longer run what it was waiting for.
    decide::expire_pending(&inner);
    if let Err(e) = inner.deps.history.end_turn(turn.id, status) {
        // The turn is over either way; the front end hears it failed to be recorded (the next
        // start marks it interrupted), in the one message that ends it.
        let unrecorded = format!("could not record the end of the turn: {e}");
        error = Some(match error {
            Some(first) => format!("{first}\n{unrecorded}"),
            None => unrecorded,
        });
        status = TurnOutcome::Failed;
    }
    inner.emit(AgentEvent::TurnEnded {
        turn_id: turn.id,
        status,
        error,
    });
}

/// The project instructions for this turn, read now so an edit counts from the next turn; the
/// person is told which files are in force when that changes.
fn load_instructions(inner: &Inner, rt: &super::runtime::Runtime) -> String {
    // Before the first run there is no session record yet, but the folder may be there already
    // (the app's "Open folder" makes it): the default place, as the record will name it.
    let workspace = rt
        .sandbox
        .workspace(&inner.sandbox_session)
        .unwrap_or_else(|_| {
            rt.sandbox
                .paths()
                .workspaces_dir()
                .join(inner.sandbox_session.as_str())
        });
    let loaded = crate::instructions::load(&rt.sandbox.paths().config_dir, Some(&workspace));
    if let Ok(mut seen) = inner.instructions_seen.lock() {
        if *seen != loaded.files {
            inner.emit(AgentEvent::Instructions {
                files: loaded.files.clone(),
            });
            *seen = loaded.files;
        }
    }
    loaded.prompt
}

async fn steps(
    inner: &Arc<Inner>,
    turn_id: ironclaw_protocol::TurnId,
    cancel: &CancellationToken,
) -> Result<(), StepError> {
    let mut runtime = inner.runtime().await.map_err(StepError::Failed)?;
    let mut rt = &runtime;
    let (profile_name, profile) = rt
        .sandbox
        .policy()
        .profile(inner.config.profile.as_deref())
        .map_err(|e| StepError::Failed(e.to_string()))?;
    let system = format!(
        "{}{}",
        system_prompt(profile_name, profile),
        load_instructions(inner, rt)
    );
    if !rt.images {
        say_images_unread(inner, rt, turn_id).await?;
    }
    let mut cut_off_calls = 0;
    let mut effort = Effort::Normal;
    for step in 0..inner.config.max_steps {
        let mut code_blocks = inner.uses_code_blocks(rt);
        let request = if code_blocks {
            let system = format!("{system}{}", crate::code_blocks::RULES);
            let mut request =
                context::prepare(inner, rt, turn_id, &system, Vec::new(), effort, cancel).await?;
            request.messages = crate::code_blocks::to_plain(&request.messages);
            request
        } else {
            let mut tools = tools::specs_for(rt.images);
            if let Some(servers) = mcp::servers(inner, rt, turn_id).await {
                tools.extend(mcp::specs(&servers));
            }
            context::prepare(inner, rt, turn_id, &system, tools, effort, cancel).await?
        };
        let span = tracing::info_span!("llm.generate", provider = rt.provider.id(), model = %request.model, step);
        let answer = match generate(inner, rt.provider.as_ref(), turn_id, &request, cancel)
            .instrument(span)
            .await
        {
            // The server named its window, smaller than assumed: fit to that, from now on.
            Err(StepError::ContextTooLong(message))
                if ironclaw_llm::window_from_refusal(&message)
                    .is_some_and(|w| inner.learn_refused_window(rt, w)) =>
            {
                tracing::warn!(%message, "the server named a smaller window; fitting to it");
                runtime = inner.runtime().await.map_err(StepError::Failed)?;
                rt = &runtime;
                continue;
            }
            // Our estimate said it fit; the provider counts differently. Once.
            Err(StepError::ContextTooLong(message)) if effort == Effort::Normal => {
                tracing::warn!(%message, "the provider found the request too long; compacting harder");
                effort = Effort::Harder;
                continue;
            }
            Err(StepError::ContextTooLong(message)) => {
                return Err(StepError::Failed(format!(
                    "The conversation does not fit the model's context window even after it was \
                     summarised and old outputs were cut ({message}). Start a new conversation, \
                     or set the model's real context window (context_window in the provider \
                     settings) if IronClaw's is too large."
                )))
            }
            other => other?,
        };
        effort = Effort::Normal;
        context::learn(inner, &request, answer.usage.input_tokens);
        let mut answer = answer;
        if answer.tool_calls.is_empty() {
            if !code_blocks && shows_code_instead_of_calling(inner, rt, &answer).await {
                switch_to_code_blocks(inner, turn_id)?;
                code_blocks = true;
            }
            if code_blocks {
                // Through the same gate as any call: each block is approved (or not) as the
                // exact code it holds.
                answer.tool_calls =
                    crate::code_blocks::calls(&answer.text, &answer.message_id.to_string());
            }
        }
        inner.transcript.lock().await.push(Message::Assistant {
            content: answer.text.clone(),
            tool_calls: answer.tool_calls.clone(),
        });
        if answer.tool_calls.is_empty() {
            if let Some(note) = stop_note(&answer) {
                tell(inner, turn_id, &note)?;
            }
            return Ok(());
        }
        if answer.stop_reason == StopReason::MaxTokens {
            // The last call's code may be cut anywhere; approving it would approve something
            // the model did not mean, so none of the calls runs.
            refuse_cut_calls(inner, turn_id, &answer).await?;
            cut_off_calls += 1;
            if cut_off_calls >= 2 {
                let note = "The model's answer was cut off at its output limit twice while it \
                    was writing code, so nothing ran. Ask for the work in smaller steps, or \
                    choose a model with a larger output limit.";
                save_message(inner, turn_id, MessageRole::SystemNote, note)?;
                return Err(StepError::Failed(note.into()));
            }
            tell(
                inner,
                turn_id,
                "The model's answer was cut off at its output limit while it was writing code; \
                 nothing ran, and it was asked to write it again in smaller steps.",
            )?;
            continue;
        }
        for (i, call) in answer.tool_calls.iter().enumerate() {
            let recorded = inner
                .deps
                .history
                .record_tool_call(&NewToolCall {
                    message_id: answer.message_id,
                    model_call_id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    arguments_parsed: tools::parses(&call.name, &call.arguments),
                    echo: call.echo.clone(),
                })
                .map_err(|e| StepError::Failed(format!("could not record the tool call: {e}")))?;
            let mut shown = Vec::new();
            // Only what this request offered runs: a model that names another tool (one it
            // was offered before a switch of model, or none at all) is told so, and nothing
            // happens on its behalf.
            let offered = request.tools.iter().any(|t| t.name == call.name)
                || (code_blocks && call.name == tools::RUN_CODE);
            let handled = if !offered {
                Ok((
                    format!(
                        "unknown tool `{}`: it was not offered to you in this request, so \
                         nothing ran. Use only the tools you were given.",
                        call.name
                    ),
                    true,
                ))
            } else if call.name == tools::FETCH_URL {
                fetch::handle(inner, recorded.id, call, cancel).await
            } else if call.name == tools::VIEW_IMAGE {
                view_image::handle(inner, recorded.id, call).await.map(
                    |(content, is_error, images)| {
                        shown = images;
                        (content, is_error)
                    },
                )
            } else {
                run_code::handle(inner, turn_id, recorded.id, call, cancel).await
            };
            let (content, is_error) = match handled {
                Ok(result) => result,
                Err(e) => {
                    // Every provider rejects a transcript with an unanswered tool call, so the
                    // calls this turn will not get to are answered before the next turn.
                    let mut transcript = inner.transcript.lock().await;
                    let (why, not_run) = match &e {
                        StepError::Cancelled => {
                            ("The user cancelled the turn; this call did not run.", i)
                        }
                        StepError::Failed(_) | StepError::ContextTooLong(_) => {
                            ("The turn failed before this call ran.", i)
                        }
                        StepError::AfterRun {
                            content, is_error, ..
                        } => {
                            transcript.push(Message::tool_result(
                                call.id.clone(),
                                content.clone(),
                                *is_error,
                            ));
                            ("The turn failed before this call ran.", i + 1)
                        }
                    };
                    for pending in &answer.tool_calls[not_run..] {
                        transcript.push(Message::tool_result(pending.id.clone(), why, true));
                    }
                    return Err(e);
                }
            };
            // The model gets the result even when saving it fails: the run happened.
            inner.transcript.lock().await.push(Message::Tool {
                call_id: call.id.clone(),
                content: content.clone(),
                is_error,
                images: shown.iter().map(crate::vision::for_model).collect(),
            });
            if let Err(e) = save_tool_result(inner, turn_id, &content, &shown) {
                let mut transcript = inner.transcript.lock().await;
                for pending in &answer.tool_calls[i + 1..] {
                    transcript.push(Message::tool_result(
                        pending.id.clone(),
                        "The turn failed before this call ran.",
                        true,
                    ));
                }
                return Err(e);
            }
        }
        tracing::debug!(step, "tool round trip done");
    }
    let note = format!(
        "Stopped after {} model calls in one turn (the limit). Send a message to continue.",
        inner.config.max_steps
    );
    save_message(inner, turn_id, MessageRole::SystemNote, &note)?;
    Err(StepError::Failed(note))
}

struct Answer {
    message_id: ironclaw_protocol::MessageId,
    text: String,
    tool_calls: Vec<ironclaw_llm::ToolCall>,
    stop_reason: StopReason,
    usage: ironclaw_llm::Usage,
}

/// The model shows runnable code blocks and has never called the tool: it writes code blocks
/// instead (many local models do).
async fn shows_code_instead_of_calling(
    inner: &Inner,
    rt: &super::runtime::Runtime,
    answer: &Answer,
) -> bool {
    if rt.tool_mode != ironclaw_llm::ToolMode::Auto
        || crate::code_blocks::extract(&answer.text).is_empty()
    {
        return false;
    }
    let transcript = inner.transcript.lock().await;
    !transcript
        .iter()
        .any(|m| matches!(m, Message::Assistant { tool_calls, .. } if !tool_calls.is_empty()))
}

fn switch_to_code_blocks(
    inner: &Inner,
    turn_id: ironclaw_protocol::TurnId,
) -> Result<(), StepError> {
    inner
        .code_blocks
        .store(true, std::sync::atomic::Ordering::Relaxed);
    if let Err(e) = inner
        .deps
        .history
        .set_setting(&super::code_blocks_key(inner.conversation), &true)
    {
        tracing::warn!(error = %e, "could not remember that the model writes code blocks");
    }
    tell(
        inner,
        turn_id,
        "This model answers with code blocks instead of calling IronClaw's tool, so each \
         ```python or ```bash block in its answers is now a request to run that code — each \
         still needs your approval. Change this with the provider's tool mode in Settings.",
    )
}

/// What the person should be told about an answer without tool calls, if anything.
fn stop_note(answer: &Answer) -> Option<String> {
    let said_nothing = answer.text.trim().is_empty();
    match &answer.stop_reason {
        StopReason::MaxTokens => Some(
            "The answer was cut off at the model's output limit. Send “continue” to have it go on."
                .into(),
        ),
        StopReason::Refusal if said_nothing => {
            Some("The model declined to answer this request, without saying why.".into())
        }
        StopReason::Other(reason) if said_nothing => Some(format!(
            "The provider stopped the answer before it said anything (reason: “{reason}”). \
             Rephrasing the request may help."
        )),
        _ if said_nothing => {
            Some("The model gave an empty answer. Try again, or rephrase the request.".into())
        }
        _ => None,
    }
}

/// A note for the person: shown now and kept in the history, never sent to the model.
/// Tells the person when the picture they just sent goes to a model that reads none (the
/// request carries a note in its place, see `context::prepare`).
async fn say_images_unread(
    inner: &Inner,
    rt: &super::Runtime,
    turn_id: ironclaw_protocol::TurnId,
) -> Result<(), StepError> {
    let count = {
        let transcript = inner.transcript.lock().await;
        transcript
            .iter()
            .rev()
            .find(|m| matches!(m, Message::User { .. }))
            .map_or(0, |m| m.images().len())
    };
    if count == 0 {
        return Ok(());
    }
    let what = if count == 1 {
        "the picture you sent was".to_string()
    } else {
        format!("the {count} pictures you sent were")
    };
    tell(
        inner,
        turn_id,
        &format!(
            "{} does not read images, so {what} not shown to it (it is told so). Switch to a              model that does, or set `images: true` for it in provider.yaml if it can.",
            rt.model
        ),
    )
}

pub(super) fn tell(
    inner: &Inner,
    turn_id: ironclaw_protocol::TurnId,
    text: &str,
) -> Result<(), StepError> {
    inner.emit(AgentEvent::Note {
        text: text.to_string(),
    });
    save_message(inner, turn_id, MessageRole::SystemNote, text)
}

/// Answers each call of a cut-off answer with an error result, in the transcript and in the
/// history (so a rebuilt transcript is the same).
async fn refuse_cut_calls(
    inner: &Inner,
    turn_id: ironclaw_protocol::TurnId,
    answer: &Answer,
) -> Result<(), StepError> {
    for call in &answer.tool_calls {
        inner
            .deps
            .history
            .record_tool_call(&NewToolCall {
                message_id: answer.message_id,
                model_call_id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                arguments_parsed: false,
                echo: call.echo.clone(),
            })
            .map_err(|e| StepError::Failed(format!("could not record the tool call: {e}")))?;
    }
    let mut transcript = inner.transcript.lock().await;
    for call in &answer.tool_calls {
        transcript.push(Message::tool_result(call.id.clone(), CUT_CALL_RESULT, true));
    }
    drop(transcript);
    for _ in &answer.tool_calls {
        save_message(inner, turn_id, MessageRole::Tool, CUT_CALL_RESULT)?;
    }
    Ok(())
}

/// Streams one model answer into events and the history (checkpointed while it streams).
async fn generate(
    inner: &Inner,
    provider: &dyn ironclaw_llm::Provider,
    turn_id: ironclaw_protocol::TurnId,
    request: &ChatRequest,
    cancel: &CancellationToken,
) -> Result<Answer, StepError> {
    let message = inner
        .deps
        .history
        .add_message(&NewMessage {
            conversation_id: inner.conversation,
            turn_id: Some(turn_id),
            role: MessageRole::Assistant,
            content: String::new(),
            status: MessageStatus::Streaming,
            model: Some(inner.model_label(provider, &request.model)),
        })
        .map_err(|e| StepError::Failed(format!("could not save the answer: {e}")))?;
    let mut acc = TurnAccumulator::default();
    let mut stream = match provider.stream(request, cancel.child_token()).await {
        Ok(s) => s,
        Err(e) => {
            let _ = inner.deps.history.interrupt_message(message.id, "");
            return Err(llm_error(e));
        }
    };
    let mut saved_at = Instant::now();
    let mut saved_len = 0;
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => {
                match &event {
                    StreamEvent::TextDelta(text) => inner.emit(AgentEvent::TextDelta {
                        message_id: message.id,
                        text: text.clone(),
                    }),
                    StreamEvent::ReasoningDelta(text) => inner.emit(AgentEvent::ReasoningDelta {
                        message_id: message.id,
                        text: text.clone(),
                    }),
                    _ => {}
                }
                acc.push(&event);
                let text = acc.text();
                if saved_at.elapsed() >= CHECKPOINT_EVERY && text.len() != saved_len {
                    let _ = inner.deps.history.update_message_content(message.id, text);
                    saved_at = Instant::now();
                    saved_len = text.len();
                }
            }
            Err(e) => {
                // Keep what arrived: it was shown, so it must not vanish from history.
                let _ = inner.deps.history.interrupt_message(message.id, acc.text());
                return Err(llm_error(e));
            }
        }
    }
    if !acc.is_done() {
        let _ = inner.deps.history.interrupt_message(message.id, acc.text());
        return Err(StepError::Failed(
            "the model's answer ended without finishing; try again".into(),
        ));
    }
    let turn = acc.finish();
    inner
        .deps
        .history
        .complete_message(message.id, &turn.text)
        .map_err(|e| StepError::Failed(format!("could not save the answer: {e}")))?;
    inner.emit(AgentEvent::AssistantMessage {
        message_id: message.id,
        text: turn.text.clone(),
    });
    Ok(Answer {
        message_id: message.id,
        text: turn.text,
        tool_calls: turn.tool_calls,
        stop_reason: turn.stop_reason,
        usage: turn.usage,
    })
}

fn llm_error(e: ironclaw_llm::Error) -> StepError {
    match e {
        ironclaw_llm::Error::Cancelled => StepError::Cancelled,
        e @ ironclaw_llm::Error::ContextTooLong { .. } => StepError::ContextTooLong(e.to_string()),
        other => StepError::Failed(other.to_string()),
    }
}

/// A tool's result with the pictures it showed, in one write.
fn save_tool_result(
    inner: &Inner,
    turn_id: ironclaw_protocol::TurnId,
    content: &str,
    images: &[ironclaw_store::NewImage],
) -> Result<(), StepError> {
    inner
        .deps
        .history
        .add_message_with_images(
            &NewMessage {
                conversation_id: inner.conversation,
                turn_id: Some(turn_id),
                role: MessageRole::Tool,
                content: content.to_string(),
                status: MessageStatus::Complete,
                model: None,
            },
            images,
        )
        .map(|_| ())
        .map_err(|e| StepError::Failed(format!("could not save to the history: {e}")))
}

pub(super) fn save_message(
    inner: &Inner,
    turn_id: ironclaw_protocol::TurnId,
    role: MessageRole,
    content: &str,
) -> Result<(), StepError> {
    inner
        .deps
        .history
        .add_message(&NewMessage {
            conversation_id: inner.conversation,
            turn_id: Some(turn_id),
            role,
            content: content.to_string(),
            status: MessageStatus::Complete,
            model: None,
        })
        .map(|_| ())
        .map_err(|e| StepError::Failed(format!("could not save to the history: {e}")))
}
