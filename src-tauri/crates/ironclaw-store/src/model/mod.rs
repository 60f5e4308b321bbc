//! The history's vocabulary: state enums and record types.

mod enums;
mod records;

pub use enums::{
    ApprovalPolicy, ApprovalStatus, DecidedBy, DecisionScope, MessageRole, MessageStatus,
    RiskLevel, RuleKind, TurnStatus, UnknownVariant, Verdict,
};
pub use records::{
    Approval, ApprovalDecision, ApprovalEntry, ApprovalRequest, Conversation, ConversationSummary,
    Execution, ExecutionOutcome, FullConversation, Message, MessageEntry, NewMessage, NewToolCall,
    OutputExcerpt, RecoveryReport, SearchHit, SessionRule, ToolCall, ToolCallEntry, Turn,
};
