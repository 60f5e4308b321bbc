// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
/** Payload of the app event `pending-approvals`. */
export type PendingApprovalsEvent = { count: number };
