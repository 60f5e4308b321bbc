//! The gate between "the model asked to run this" and "this runs". Nothing reaches the sandbox
//! without a [`Ticket`], and the only ways to get one are: a person's decision that names the
//! pending approval's id *and* its code hash, a saved "always allow this exact code in this
//! session" rule, or the session's explicit policy.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Serialize;

use ironclaw_protocol::{
    ApprovalId, ApprovalPolicy, CodeHash, ConversationId, DecidedBy, Decision, DecisionChoice,
    DecisionScope, Language,
};

/// What the gate needs to know about code it has not seen run: the risk classifier's view.
pub trait Classifier: Send + Sync {
    /// Proven to only read: may run unasked under [`ApprovalPolicy::AskUnlessSafe`].
    fn is_read_only(&self, language: Language, code: &str) -> bool;
    /// Needs a second, deliberate confirmation.
    fn is_destructive(&self, language: Language, code: &str) -> bool;
    /// Destructive in a way a person should see before it happens, even with Undo offered
    /// after (a deletion, discarded git work...): why, in the classifier's words. Asked under
    /// [`ApprovalPolicy::AskUnlessUndoable`].
    fn destructive_beyond_undo(&self, language: Language, code: &str) -> Option<String>;
}

/// What the gate says about a requested execution before anyone is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Triage {
    /// Runs without asking: `reason` says which rule or policy allowed it.
    AutoApproved { reason: String },
    /// Runs without asking only if every effect it has can be taken back: the caller proves
    /// that (the workspace checkpointed before it, no earlier run's thread still running) and
    /// passes `undoable` to [`Gate::auto_ticket`]; otherwise it asks.
    IfUndoable { reason: String },
    /// Waits for a person.
    Ask,
    /// Waits for a person, though the policy runs most code unasked: `because` says why not
    /// this code.
    AskBecause(String),
}

/// An execution waiting for a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    pub id: ApprovalId,
    pub hash: CodeHash,
    pub language: Language,
    pub code: String,
    pub destructive: bool,
}

/// Permission to run exactly `code` once. The agent runs `ticket.code`, nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Ticket {
    /// `None` when no person was asked (policy or saved rule).
    pub approval_id: Option<ApprovalId>,
    pub hash: CodeHash,
    pub language: Language,
    pub code: String,
    pub user_edited: bool,
    /// The hash of what the model asked for (differs from `hash` when edited).
    pub requested_hash: CodeHash,
    pub source: DecidedBy,
    pub scope: DecisionScope,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    Run(Ticket),
    Denied {
        approval_id: ApprovalId,
        reason: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    #[error("no pending approval {0}: it was already decided, expired, or never existed; nothing was run")]
    UnknownApproval(ApprovalId),
    #[error(
        "the decision is for different code (hash {got}, pending hash {expected}); nothing was run"
    )]
    HashMismatch { expected: CodeHash, got: CodeHash },
    #[error("this code is destructive: approve it again with the explicit second confirmation")]
    NeedsConfirmation,
    #[error("the edited code is empty; deny instead")]
    EmptyEdit,
    #[error("destructive code is decided one run at a time and cannot be always allowed: approve it once (with the confirmation) or deny it; nothing was run")]
    DestructiveNotAlwaysAllowed,
}

/// A saved "always allow this exact code in this session" rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    pub hash: CodeHash,
    pub language: Language,
    pub code: String,
}

pub struct Gate {
    session: ConversationId,
    policy: ApprovalPolicy,
    classifier: Arc<dyn Classifier>,
    pending: HashMap<ApprovalId, Pending>,
    rules: BTreeMap<CodeHash, Rule>,
    /// Set once code ran that can change what later code does (aliases, PATH, monkey-patching,
    /// code only known at run time). From then on "read-only" is no longer provable from the
    /// text alone, so ask-unless-safe asks for everything in this session.
    tainted: Option<String>,
}

impl Gate {
    pub fn new(
        session: ConversationId,
        policy: ApprovalPolicy,
        classifier: Arc<dyn Classifier>,
    ) -> Self {
        Self {
            session,
            policy,
            classifier,
            pending: HashMap::new(),
            rules: BTreeMap::new(),
            tainted: None,
        }
    }

    pub fn policy(&self) -> ApprovalPolicy {
        self.policy
    }

    pub fn set_policy(&mut self, policy: ApprovalPolicy) {
        self.policy = policy;
    }

    pub fn hash(&self, language: Language, code: &str) -> CodeHash {
        CodeHash::of(self.session, language, code)
    }

    /// Whether a saved rule lets this code run unasked. Destructive code never matches one:
    /// a rule saved before destructive code was refused rules (or a classifier that learned
    /// more since) must not let a deletion run without a person seeing it.
    ///
    /// An MCP call's rule covers its tool, whatever the arguments: the call's first line names
    /// the server, the tool and the digest of the tool's definition, so a tool whose server
    /// changed what it says it does is not covered.
    fn rule_allows(&self, language: Language, code: &str) -> bool {
        let saved = if language == Language::Mcp {
            let tool = code.lines().next().unwrap_or_default();
            !tool.is_empty()
                && self
                    .rules
                    .values()
                    .any(|r| r.language == Language::Mcp && r.code.lines().next() == Some(tool))
        } else {
            self.rules.contains_key(&self.hash(language, code))
        };
        saved && !self.classifier.is_destructive(language, code)
    }

    /// Whether this code may run without asking, and why.
    pub fn check(&self, language: Language, code: &str) -> Triage {
        if self.rule_allows(language, code) {
            return Triage::AutoApproved {
                reason: if language == Language::Mcp {
                    "you chose to always allow this tool (as its server described it then) in this conversation".into()
                } else {
                    "you chose to always allow this exact code in this conversation".into()
                },
            };
        }
        match self.policy {
            ApprovalPolicy::AskAlways => Triage::Ask,
            ApprovalPolicy::AskUnlessSafe => {
                if self.tainted.is_none() && self.classifier.is_read_only(language, code) {
                    Triage::AutoApproved {
                        reason: "read-only code under the ask-unless-safe policy".into(),
                    }
                } else {
                    Triage::Ask
                }
            }
            ApprovalPolicy::AskUnlessUndoable => {
                // Undo is offered after destructive code runs, but a person should see a
                // deletion before it happens, not only after.
                if let Some(why) = self.classifier.destructive_beyond_undo(language, code) {
                    Triage::AskBecause(format!(
                        "the classifier rates this code destructive ({why}): Undo is offered \
                         after it ran, but a deletion is shown before it happens"
                    ))
                } else {
                    Triage::IfUndoable {
                        reason: "every effect can be undone (the workspace was checkpointed, \
                                 the network reaches only hosts already allowed) under the \
                                 ask-unless-undoable policy"
                            .into(),
                    }
                }
            }
            ApprovalPolicy::NeverAsk => Triage::AutoApproved {
                reason: "the conversation's never-ask policy".into(),
            },
        }
    }

    /// A ticket for code [`Gate::check`] auto-approved (or approved if undoable, and the caller
    /// made sure it is). Re-checks, so a caller cannot skip it.
    pub fn auto_ticket(&self, language: Language, code: &str, undoable: bool) -> Option<Ticket> {
        let hash = self.hash(language, code);
        let scope = match self.check(language, code) {
            Triage::Ask | Triage::AskBecause(_) => return None,
            Triage::IfUndoable { .. } if !undoable => return None,
            Triage::IfUndoable { .. } => DecisionScope::PolicyAuto,
            Triage::AutoApproved { .. } if self.rule_allows(language, code) => {
                DecisionScope::SessionRule
            }
            Triage::AutoApproved { .. } => DecisionScope::PolicyAuto,
        };
        Some(Ticket {
            approval_id: None,
            hash,
            language,
            code: code.to_string(),
            user_edited: false,
            requested_hash: hash,
            source: DecidedBy::Policy,
            scope,
        })
    }

    /// Stages code for a person's decision, under the id the history gave the request.
    pub fn request(&mut self, id: ApprovalId, language: Language, code: &str) -> Pending {
        let pending = Pending {
            id,
            hash: self.hash(language, code),
            language,
            code: code.to_string(),
            destructive: self.classifier.is_destructive(language, code),
        };
        self.pending.insert(pending.id, pending.clone());
        pending
    }

    pub fn pending(&self) -> impl Iterator<Item = &Pending> {
        self.pending.values()
    }

    /// Applies a decision. It must name a pending approval and carry that approval's hash;
    /// destructive code (including an edit that became destructive) needs `confirmed`.
    /// On error the approval stays pending, untouched.
    pub fn decide(
        &mut self,
        id: ApprovalId,
        presented: &CodeHash,
        decision: Decision,
        source: DecidedBy,
        confirmed: bool,
    ) -> Result<Resolution, GateError> {
        let pending = self
            .pending
            .get(&id)
            .ok_or(GateError::UnknownApproval(id))?;
        if pending.hash != *presented {
            return Err(GateError::HashMismatch {
                expected: pending.hash,
                got: *presented,
            });
        }
        let (code, edited, scope) = match &decision {
            Decision::Deny { reason } => {
                let reason = reason.clone();
                self.pending.remove(&id);
                return Ok(Resolution::Denied {
                    approval_id: id,
                    reason,
                });
            }
            Decision::ApproveOnce => (pending.code.clone(), false, DecisionScope::Once),
            Decision::AlwaysAllowInSession => {
                (pending.code.clone(), false, DecisionScope::SessionRule)
            }
            Decision::EditAndApprove { code } => {
                if code.trim().is_empty() {
                    return Err(GateError::EmptyEdit);
                }
                (code.clone(), *code != pending.code, DecisionScope::Once)
            }
        };
        let destructive = if edited {
            self.classifier.is_destructive(pending.language, &code)
        } else {
            pending.destructive
        };
        // The same list the request offered (for an edit: the edited code's), so what a front
        // end shows and what is accepted cannot drift apart.
        match DecisionChoice::find(&DecisionChoice::for_code(destructive), decision.kind()) {
            None => return Err(GateError::DestructiveNotAlwaysAllowed),
            Some(choice) if choice.needs_confirmation && !confirmed => {
                return Err(GateError::NeedsConfirmation)
            }
            Some(_) => {}
        }
        let Some(pending) = self.pending.remove(&id) else {
            return Err(GateError::UnknownApproval(id));
        };
        let hash = self.hash(pending.language, &code);
        if scope == DecisionScope::SessionRule {
            self.rules.insert(
                hash,
                Rule {
                    hash,
                    language: pending.language,
                    code: code.clone(),
                },
            );
        }
        Ok(Resolution::Run(Ticket {
            approval_id: Some(id),
            hash,
            language: pending.language,
            code,
            user_edited: edited,
            requested_hash: pending.hash,
            source,
            scope,
        }))
    }

    /// Drops every pending approval (turn cancelled); returns their ids so they can be
    /// recorded as expired. A late decision for one of them is then `UnknownApproval`.
    pub fn expire_all(&mut self) -> Vec<ApprovalId> {
        self.pending.drain().map(|(id, _)| id).collect()
    }

    /// Records that code which can change later code's meaning ran (see `tainted`).
    pub fn taint(&mut self, why: impl Into<String>) {
        self.tainted.get_or_insert_with(|| why.into());
    }

    pub fn rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules.values()
    }

    pub fn add_rule(&mut self, language: Language, code: &str) {
        let hash = self.hash(language, code);
        self.rules.insert(
            hash,
            Rule {
                hash,
                language,
                code: code.to_string(),
            },
        );
    }

    pub fn revoke_rule(&mut self, hash: &CodeHash) -> bool {
        self.rules.remove(hash).is_some()
    }
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
