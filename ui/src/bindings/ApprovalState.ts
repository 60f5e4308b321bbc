// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
export type ApprovalState = "pending" | "approved" | "denied" | "expired";
