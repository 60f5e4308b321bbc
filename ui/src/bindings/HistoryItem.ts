// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { ApprovalRequest } from "./ApprovalRequest";
import type { ApprovalState } from "./ApprovalState";
import type { DecidedBy } from "./DecidedBy";

export type HistoryItem =
  | { type: "user"; id: string; text: string; at: string }
  | { type: "assistant"; id: string; text: string; status: string; at: string }
  | {
      type: "approval";
      request: ApprovalRequest;
      state: ApprovalState;
      decidedBy: DecidedBy | null;
      reason: string | null;
    }
  | {
      type: "execution";
      executionId: string;
      approvalId: string;
      language: string;
      code: string;
      stdout: string;
      stderr: string;
      exitCode: number | null;
      durationMs: number | null;
      timedOut: boolean;
      cancelled: boolean;
      oomKilled: boolean;
      truncated: boolean;
      logFile: string | null;
    };
