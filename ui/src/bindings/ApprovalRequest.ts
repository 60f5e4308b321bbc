// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { RiskLevel } from "./RiskLevel";
import type { RiskReason } from "./RiskReason";

/** What the person is asked to decide. `code` is exactly what will run if approved. */
export type ApprovalRequest = {
  approvalId: string;
  codeHash: string;
  language: string;
  code: string;
  risk: RiskLevel;
  reasons: Array<RiskReason>;
  destructive: boolean;
};
