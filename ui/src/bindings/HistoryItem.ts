// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { ApprovalRequest } from "./ApprovalRequest";
import type { ApprovalState } from "./ApprovalState";
import type { DecidedBy } from "./DecidedBy";
import type { MessageStatus } from "./MessageStatus";

export type HistoryItem =
  | { type: "user"; id: string; text: string; at: number }
  | { type: "assistant"; id: string; text: string; status: MessageStatus; at: number }
  | { type: "note"; id: string; text: string; at: number }
  | {
      type: "approval";
      request: ApprovalRequest;
      state: ApprovalState;
      decidedBy?: DecidedBy | null;
      reason?: string | null;
      userEdited: boolean;
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
      interrupted: boolean;
      truncated: boolean;
      logFile: string | null;
    };
