// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
export type Decision =
  | { type: "approveOnce" }
  | { type: "alwaysAllowInSession" }
  | { type: "editAndApprove"; code: string }
  | { type: "deny"; reason: string | null };
