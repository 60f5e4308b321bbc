//! What earlier runs left in a conversation's interpreters (a live thread, a shadowing
//! function, a changed PATH…), named by the run that left it: remembered after each run,
//! learned from the sandbox once after a restart, and said before the next approval.

use ironclaw_protocol::Language;
use ironclaw_sandbox::protocol::Alteration;

use super::Inner;

pub(super) fn describe(inner: &Inner, altered: &[Alteration]) -> String {
    altered
        .iter()
        .map(|a| attributed(inner, a))
        .collect::<Vec<_>>()
        .join("; ")
}

/// One finding, naming the run that left it as the person knows it ("run #3 left: …"), or
/// "an earlier run" when that run is not this session's (the app restarted since).
pub(super) fn attributed(inner: &Inner, alteration: &Alteration) -> String {
    match run_number(inner, alteration.seq) {
        Some(n) => format!("run #{n} left: {}", alteration.detail),
        None => format!("an earlier run left: {}", alteration.detail),
    }
}

pub(super) fn run_number(inner: &Inner, seq: u32) -> Option<u32> {
    inner.run_numbers.lock().ok()?.get(&seq).copied()
}

/// The conversation's numbers of the runs that left `altered`, in order, for the audit log.
pub(super) fn runs_named(inner: &Inner, altered: &[Alteration]) -> Vec<u32> {
    let mut runs: Vec<u32> = altered
        .iter()
        .filter_map(|a| run_number(inner, a.seq))
        .collect();
    runs.sort_unstable();
    runs.dedup();
    runs
}

/// What the person reads before approving code for `language`'s interpreter.
pub(super) fn altered_notes(inner: &Inner, language: Language) -> Vec<String> {
    let altered = inner
        .altered
        .lock()
        .ok()
        .and_then(|a| a.get(&language).cloned())
        .unwrap_or_default();
    altered.iter().map(|a| attributed(inner, a)).collect()
}

/// Once per session, before its first decision: what the sandbox's interpreters already carry
/// from runs before this session began (the app restarted, or the CLI ran code there), so
/// that decision is warned and not auto-approved. Nothing is started for it; when the sandbox
/// cannot be asked, the run's own report (`altered_before`) still says it.
pub(super) async fn learn_leftovers(inner: &Inner) {
    use std::sync::atomic::Ordering;
    if inner.leftovers_learned.load(Ordering::Acquire) {
        return;
    }
    let sandbox = match inner.runtime().await {
        Ok(rt) => rt.sandbox.clone(),
        Err(e) => {
            tracing::warn!(error = %e, "no sandbox to ask what earlier runs left");
            return;
        }
    };
    match sandbox.leftovers(&inner.sandbox_session).await {
        Ok(leftovers) => {
            inner.leftovers_learned.store(true, Ordering::Release);
            for (language, altered) in leftovers {
                match language.parse::<Language>() {
                    Ok(language) if !altered.is_empty() => {
                        remember_alterations(inner, language, &altered)
                    }
                    _ => {}
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, "could not ask the sandbox what earlier runs left"),
    }
}

/// Keeps what the interpreter looks like after a run, and stops policy auto-approval while it
/// is altered: a person must see what the code will run in.
pub(super) fn remember_alterations(inner: &Inner, language: Language, after: &[Alteration]) {
    if let Ok(mut altered) = inner.altered.lock() {
        altered.insert(language, after.to_vec());
    }
    if !after.is_empty() {
        if let Ok(mut gate) = inner.gate.lock() {
            gate.taint(format!(
                "an earlier run left the {language} interpreter altered ({})",
                describe(inner, after)
            ));
        }
    }
}
