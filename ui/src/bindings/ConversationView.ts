// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { ApprovalPolicy } from "./ApprovalPolicy";
import type { ApprovalRequest } from "./ApprovalRequest";
import type { ConversationSummary } from "./ConversationSummary";
import type { HistoryItem } from "./HistoryItem";

export type ConversationView = {
  conversation: ConversationSummary;
  items: Array<HistoryItem>;
  pendingApprovals: Array<ApprovalRequest>;
  policy: ApprovalPolicy;
};
