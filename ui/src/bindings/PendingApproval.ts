// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { ApprovalRequest } from "./ApprovalRequest";

export type PendingApproval = { conversationId: string; title: string; request: ApprovalRequest };
