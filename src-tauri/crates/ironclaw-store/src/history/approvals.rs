//! Requests to run code, the decisions on them, and the session rules decisions create.

use rusqlite::{params, OptionalExtension, Transaction};

use super::conversations::touch;
use super::rows::{self, APPROVAL_COLUMNS, SESSION_RULE_COLUMNS};
use super::History;
use crate::error::{Result, StoreError};
use crate::model::{
    Approval, ApprovalDecision, ApprovalStatus, NewApproval, RuleKind, SessionRule, Verdict,
};
use crate::time::Timestamp;
use ironclaw_protocol::{ApprovalId, CodeHash, ConversationId, DecisionScope, SessionRuleId};

impl History {
    /// Records that the agent wants to run `request.code`; the approval starts `Pending`.
    pub fn request_approval(&self, request: &NewApproval) -> Result<Approval> {
        let id = ApprovalId::new();
        let now = Timestamp::now();
        let reasons = serde_json::to_string(&request.reasons)?;
        let approval = self.write(|tx| {
            touch(tx, request.conversation_id, now)?;
            tx.execute(
                "INSERT INTO approvals (id, conversation_id, tool_call_id, code_hash, language, code,
                     risk, reasons, status, user_edited, requested_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0, ?10)",
                params![
                    id,
                    request.conversation_id,
                    request.tool_call_id,
                    CodeHash::of(request.conversation_id, request.language, &request.code),
                    request.language,
                    request.code,
                    request.risk,
                    reasons,
                    ApprovalStatus::Pending,
                    now
                ],
            )?;
            get_approval(tx, id)
        })?;
        tracing::info!(approval_id = %id, risk = %approval.risk, "approval requested");
        Ok(approval)
    }

    /// Records the decision on a pending approval. Fails with `NotPending` if it was already
    /// decided or expired, so a dialog answered after a restart cannot approve stale code.
    ///
    /// Approving with edited code replaces the code that may run (the model's version stays
    /// identified by `original_hash`). Approving with scope `SessionRule` also creates a rule
    /// for the approved code's hash, in the same transaction.
    pub fn decide_approval(&self, id: ApprovalId, decision: &ApprovalDecision) -> Result<Approval> {
        let now = Timestamp::now();
        let approval = self.write(|tx| {
            let current = get_approval(tx, id)?;
            if current.status != ApprovalStatus::Pending {
                return Err(StoreError::NotPending {
                    id: id.to_string(),
                    status: current.status,
                });
            }
            // Edits only matter when approving: a denial keeps the code that was proposed.
            let edited = match (decision.verdict, &decision.edited_code) {
                (Verdict::Approve, Some(code)) if *code != current.code => Some(code),
                (Verdict::Approve | Verdict::Deny, _) => None,
            };
            let (code, hash, original_hash) = match edited {
                Some(code) => (
                    code.as_str(),
                    CodeHash::of(current.conversation_id, current.language, code),
                    Some(current.code_hash),
                ),
                None => (current.code.as_str(), current.code_hash, None),
            };
            tx.execute(
                "UPDATE approvals SET status = ?2, scope = ?3, decided_by = ?4, reason = ?5,
                     code = ?6, code_hash = ?7, user_edited = ?8, original_hash = ?9, decided_at = ?10
                 WHERE id = ?1",
                params![
                    id,
                    decision.verdict.status(),
                    decision.scope,
                    decision.decided_by,
                    decision.reason,
                    code,
                    hash,
                    edited.is_some(),
                    original_hash,
                    now
                ],
            )?;
            let wants_rule = match (decision.verdict, decision.scope) {
                (Verdict::Approve, DecisionScope::SessionRule) => true,
                (Verdict::Approve, DecisionScope::Once | DecisionScope::PolicyAuto)
                | (Verdict::Deny, _) => false,
            };
            if wants_rule {
                insert_rule(tx, current.conversation_id, RuleKind::CodeHash, &hash.to_hex(), Some(id), now)?;
            }
            touch(tx, current.conversation_id, now)?;
            get_approval(tx, id)
        })?;
        tracing::info!(
            approval_id = %id,
            status = %approval.status,
            decided_by = %decision.decided_by,
            user_edited = approval.user_edited,
            "approval decided"
        );
        Ok(approval)
    }

    /// One approval.
    pub fn get_approval(&self, id: ApprovalId) -> Result<Approval> {
        self.read(|tx| get_approval(tx, id))
    }

    /// Adds a standing rule to the conversation. Adding a rule that is already live returns
    /// the existing one.
    pub fn add_session_rule(
        &self,
        conversation_id: ConversationId,
        kind: RuleKind,
        pattern: &str,
    ) -> Result<SessionRule> {
        let now = Timestamp::now();
        self.write(|tx| insert_rule(tx, conversation_id, kind, pattern, None, now))
    }

    /// The conversation's rules, oldest first; revoked ones only when asked for.
    pub fn list_session_rules(
        &self,
        conversation_id: ConversationId,
        include_revoked: bool,
    ) -> Result<Vec<SessionRule>> {
        self.read(|tx| list_rules(tx, conversation_id, include_revoked))
    }

    /// The conversation's active "always allow" rules, oldest first, each with the approval it
    /// was made from (its code, language and hash). A rule whose approval cannot be read is
    /// left out: it could be neither shown nor matched.
    pub fn active_rules(
        &self,
        conversation_id: ConversationId,
    ) -> Result<Vec<(SessionRule, Approval)>> {
        self.read(|tx| {
            let rules = list_rules(tx, conversation_id, false)?;
            Ok(rules
                .into_iter()
                .filter_map(|rule| {
                    let approval = get_approval(tx, rule.approval_id?).ok()?;
                    Some((rule, approval))
                })
                .collect())
        })
    }

    /// The live rule matching `pattern`, if any: what the agent checks before asking.
    pub fn find_session_rule(
        &self,
        conversation_id: ConversationId,
        kind: RuleKind,
        pattern: &str,
    ) -> Result<Option<SessionRule>> {
        self.read(|tx| live_rule(tx, conversation_id, kind, pattern))
    }

    /// Revokes a rule; later runs of that code are asked about again. Revoking twice is a
    /// no-op that keeps the first revocation time.
    pub fn revoke_session_rule(&self, id: SessionRuleId) -> Result<SessionRule> {
        let now = Timestamp::now();
        let sql = format!("SELECT {SESSION_RULE_COLUMNS} FROM session_rules WHERE id = ?1");
        self.write(|tx| {
            tx.execute(
                "UPDATE session_rules SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
                params![id, now],
            )?;
            rows::one(tx, "session rule", &sql, &id, rows::session_rule)
        })
    }
}

pub(super) fn get_approval(tx: &Transaction<'_>, id: ApprovalId) -> Result<Approval> {
    rows::one(
        tx,
        "approval",
        &format!("SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = ?1"),
        &id,
        rows::approval,
    )
}

pub(super) fn list_rules(
    tx: &Transaction<'_>,
    conversation_id: ConversationId,
    include_revoked: bool,
) -> Result<Vec<SessionRule>> {
    let sql = format!(
        "SELECT {SESSION_RULE_COLUMNS} FROM session_rules
         WHERE conversation_id = ?1 AND (?2 OR revoked_at IS NULL)
         ORDER BY created_at, rowid"
    );
    let mut stmt = tx.prepare(&sql)?;
    let rules = stmt.query_map(
        params![conversation_id, include_revoked],
        rows::session_rule,
    )?;
    Ok(rules.collect::<rusqlite::Result<_>>()?)
}

fn live_rule(
    tx: &Transaction<'_>,
    conversation_id: ConversationId,
    kind: RuleKind,
    pattern: &str,
) -> Result<Option<SessionRule>> {
    let sql = format!(
        "SELECT {SESSION_RULE_COLUMNS} FROM session_rules
         WHERE conversation_id = ?1 AND kind = ?2 AND pattern = ?3 AND revoked_at IS NULL"
    );
    Ok(tx
        .query_row(
            &sql,
            params![conversation_id, kind, pattern],
            rows::session_rule,
        )
        .optional()?)
}

fn insert_rule(
    tx: &Transaction<'_>,
    conversation_id: ConversationId,
    kind: RuleKind,
    pattern: &str,
    approval_id: Option<ApprovalId>,
    now: Timestamp,
) -> Result<SessionRule> {
    if let Some(existing) = live_rule(tx, conversation_id, kind, pattern)? {
        return Ok(existing);
    }
    let rule = SessionRule {
        id: SessionRuleId::new(),
        conversation_id,
        kind,
        pattern: pattern.to_owned(),
        approval_id,
        created_at: now,
        revoked_at: None,
    };
    tx.execute(
        &format!("INSERT INTO session_rules ({SESSION_RULE_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"),
        params![
            rule.id,
            rule.conversation_id,
            rule.kind,
            rule.pattern,
            rule.approval_id,
            rule.created_at,
            rule.revoked_at
        ],
    )?;
    tracing::info!(rule_id = %rule.id, kind = %kind, "session rule added");
    Ok(rule)
}
