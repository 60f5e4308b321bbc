// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
/** Payload of the app event `focus-approval` (a notification body was clicked). */
export type FocusApprovalEvent = { conversationId: string; approvalId: string };
