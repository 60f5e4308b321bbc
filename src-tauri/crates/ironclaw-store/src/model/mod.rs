//! The history's vocabulary: state enums and record types.

mod enums;
mod records;

pub use enums::{ApprovalStatus, MessageRole, MessageStatus, RuleKind, TurnStatus, Verdict};
pub use records::{
    Approval, ApprovalDecision, ApprovalEntry, Conversation, ConversationSummary, Execution,
    ExecutionOutcome, FullConversation, Message, MessageEntry, NewApproval, NewMessage,
    NewToolCall, OutputExcerpt, RecoveryReport, SearchHit, SessionRule, ToolCall, ToolCallEntry,
    Turn,
};
