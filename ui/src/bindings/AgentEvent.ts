// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { ApprovalPolicy } from "./ApprovalPolicy";
import type { DecidedBy } from "./DecidedBy";
import type { OutputStream } from "./OutputStream";
import type { RiskLevel } from "./RiskLevel";
import type { RiskReason } from "./RiskReason";
import type { TurnStatus } from "./TurnStatus";

export type AgentEvent =
  | { type: "turnStarted"; conversationId: string; turnId: string }
  | { type: "textDelta"; messageId: string; text: string }
  | { type: "assistantMessage"; messageId: string; text: string }
  | {
      type: "approvalRequested";
      approvalId: string;
      codeHash: string;
      language: string;
      code: string;
      risk: RiskLevel;
      reasons: Array<RiskReason>;
      destructive: boolean;
    }
  | {
      type: "approvalResolved";
      approvalId: string;
      approved: boolean;
      decidedBy: DecidedBy;
      userEdited: boolean;
      auto: boolean;
      reason: string | null;
    }
  | { type: "decisionRejected"; approvalId: string; message: string; stillPending: boolean }
  | { type: "executionStarted"; executionId: string; approvalId: string; language: string; code: string }
  | { type: "executionOutput"; executionId: string; stream: OutputStream; text: string }
  | { type: "executionResources"; executionId: string; cpuPercent: number; memoryBytes: number; pids: number }
  | {
      type: "executionEnded";
      executionId: string;
      exitCode: number;
      durationMs: number;
      timedOut: boolean;
      cancelled: boolean;
      oomKilled: boolean;
      peakMemoryBytes: number;
      truncated: boolean;
      logFile: string | null;
    }
  | { type: "turnEnded"; turnId: string; status: TurnStatus; error: string | null }
  | { type: "policyChanged"; policy: ApprovalPolicy; flagged: boolean }
  | { type: "error"; message: string };
