//! What a person decides in a conversation, from the app: approvals, refused hosts, the
//! approval policy and saved rules. Each goes to the conversation's session (started from the
//! history alone if it has none), the one place that changes the gate, the history and the
//! audit log.

use ironclaw_protocol::{
    ApprovalId, ApprovalPolicy, CodeHash, ConversationId, DecidedBy, Decision, ExecutionId,
    HostDecision, Op,
};

use crate::desktop::Desktop;
use crate::error::Result;
use crate::types::{PendingApproval, SessionRuleView};

impl Desktop {
    /// The dialog's decision. The outcome arrives as `approvalResolved` or `decisionRejected`.
    pub async fn decide(
        &self,
        id: ConversationId,
        approval_id: ApprovalId,
        code_hash: CodeHash,
        decision: Decision,
        confirmed: bool,
    ) -> Result<()> {
        let session = self.core.session(id).await?;
        session.send(Op::Decide {
            approval_id,
            code_hash,
            decision,
            decided_by: DecidedBy::UserDialog,
            confirmed,
        })?;
        Ok(())
    }

    /// Asks that the run a pending approval allows start in a fresh interpreter (sent just
    /// before the approval itself; see `ApprovalRequest::altered_session`).
    pub async fn fresh_interpreter(
        &self,
        id: ConversationId,
        approval_id: ApprovalId,
    ) -> Result<()> {
        let session = self.core.session(id).await?;
        session.send(Op::FreshInterpreter { approval_id })?;
        Ok(())
    }

    /// Answers a host the network policy refused during one of this conversation's runs. The
    /// session accepts it only for a host it actually refused and has not had answered.
    pub async fn decide_host(
        &self,
        id: ConversationId,
        target: String,
        decision: HostDecision,
    ) -> Result<()> {
        let session = self.core.session(id).await?;
        session.send(Op::DecideHost {
            target,
            decision,
            decided_by: DecidedBy::UserDialog,
        })?;
        Ok(())
    }

    pub async fn cancel(&self, id: ConversationId) -> Result<()> {
        if let Some(session) = self.core.live_session(id).await {
            session.send(Op::Cancel)?;
        }
        Ok(())
    }

    /// Through the conversation's session, live or not (starting one needs only the history),
    /// so there is one way to change a policy and one audit entry for it.
    pub async fn set_policy(&self, id: ConversationId, policy: ApprovalPolicy) -> Result<()> {
        self.core
            .session(id)
            .await?
            .apply(Op::SetPolicy { policy })
            .await?;
        Ok(())
    }

    /// Takes back what a run changed in the workspace; the outcome arrives as `RunUndone` or
    /// `UndoBlocked` (later runs changed the same files: `force` takes them back too).
    pub async fn undo_run(
        &self,
        id: ConversationId,
        execution_id: ExecutionId,
        force: bool,
    ) -> Result<()> {
        self.core
            .session(id)
            .await?
            .apply(Op::UndoRun {
                execution_id,
                force,
            })
            .await?;
        Ok(())
    }

    /// Puts back what an undone run changed; the outcome arrives as `RunRedone`.
    pub async fn redo_run(&self, id: ConversationId, execution_id: ExecutionId) -> Result<()> {
        self.core
            .session(id)
            .await?
            .apply(Op::RedoRun { execution_id })
            .await?;
        Ok(())
    }

    /// Puts the files back as they were right after a run (every later run undone); the
    /// outcome arrives as a `RunUndone` per run, then `Rewound`.
    pub async fn rewind_to(&self, id: ConversationId, execution_id: ExecutionId) -> Result<()> {
        self.core
            .session(id)
            .await?
            .apply(Op::RewindTo { execution_id })
            .await?;
        Ok(())
    }

    pub fn list_rules(&self, id: ConversationId) -> Result<Vec<SessionRuleView>> {
        Ok(self
            .core
            .history
            .active_rules(id)?
            .into_iter()
            .map(|(rule, approval)| SessionRuleView {
                code_hash: approval.code_hash,
                language: approval.language,
                code: approval.code,
                created_at: rule.created_at,
            })
            .collect())
    }

    /// Through the conversation's session, live or not, which revokes it in the gate and the
    /// history and audits it once; returns when that is done, so a list right after no longer
    /// shows the rule.
    pub async fn revoke_rule(&self, id: ConversationId, hash: CodeHash) -> Result<()> {
        self.core
            .session(id)
            .await?
            .apply(Op::RevokeRule { code_hash: hash })
            .await?;
        Ok(())
    }

    pub fn pending_approvals(&self) -> Vec<PendingApproval> {
        self.core.pending.all()
    }

    pub fn pending_count(&self) -> u32 {
        self.core.pending.count()
    }
}
