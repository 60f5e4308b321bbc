// The one typed surface between the UI and the backend. Views call only this; `tauri.ts`
// implements it over IPC, `fake.ts` in the browser and in tests. The commands are generated
// from the Rust ones (`commands.ts`); only the app-wide events are written here.

import type { CommandError } from "../bindings/CommandError";
import type { ConversationSummary } from "../bindings/ConversationSummary";
import type { ErrorKind } from "../bindings/ErrorKind";
import type { ExecutionFilesEvent } from "../bindings/ExecutionFilesEvent";
import type { FilesDroppedEvent } from "../bindings/FilesDroppedEvent";
import type { FocusApprovalEvent } from "../bindings/FocusApprovalEvent";
import type { PendingApprovalsEvent } from "../bindings/PendingApprovalsEvent";
import type { Commands } from "./commands";

export type { ExportFormat } from "../bindings/ExportFormat";
export type Unlisten = () => void;

export interface Api extends Commands {
  onPendingApprovals(fn: (e: PendingApprovalsEvent) => void): Promise<Unlisten>;
  onFocusApproval(fn: (e: FocusApprovalEvent) => void): Promise<Unlisten>;
  onExecutionFiles(fn: (e: ExecutionFilesEvent) => void): Promise<Unlisten>;
  onConversationUpdated(fn: (e: ConversationSummary) => void): Promise<Unlisten>;
  /** Files dropped on the window: attach them with `attachDropped(id, e.dropId, …)`. */
  onFilesDropped(fn: (e: FilesDroppedEvent) => void): Promise<Unlisten>;
  /** Files are being dragged over the window (true) or no longer (false). */
  onDragHover(fn: (over: boolean) => void): Promise<Unlisten>;
}

function isCommandError(e: unknown): e is CommandError {
  return !!e && typeof e === "object" && "kind" in e && "message" in e;
}

/** Which part of the app a failed command names, when it came from one. */
export function errorKind(e: unknown): ErrorKind | null {
  return isCommandError(e) ? e.kind : null;
}

/** A failed command's message says what to do; anything else thrown is made into words. */
export function errorText(e: unknown): string {
  if (typeof e === "string") return e;
  if (e instanceof Error) return e.message;
  if (e && typeof e === "object" && "message" in e) return String((e as { message: unknown }).message);
  try {
    return JSON.stringify(e);
  } catch {
    return String(e);
  }
}
