// The Api over Tauri IPC: the generated command wrappers (streams such as agent events and image
// progress use Channels there), plus the rare app-wide signals, global events named here and
// nowhere else.

import { listen } from "@tauri-apps/api/event";
import type { ConversationSummary } from "../bindings/ConversationSummary";
import type { ExecutionFilesEvent } from "../bindings/ExecutionFilesEvent";
import type { FilesDroppedEvent } from "../bindings/FilesDroppedEvent";
import type { FocusApprovalEvent } from "../bindings/FocusApprovalEvent";
import type { PendingApprovalsEvent } from "../bindings/PendingApprovalsEvent";
import { tauriCommands } from "./commands";
import type { Api, Unlisten } from "./types";

export const APP_EVENTS = {
  pendingApprovals: "pending-approvals",
  focusApproval: "focus-approval",
  executionFiles: "execution-files",
  conversationUpdated: "conversation-updated",
  filesDropped: "files-dropped",
} as const;

/** The window's own drag-and-drop events (Tauri's); the drop itself comes as `files-dropped`. */
const DRAG_EVENTS = { enter: "tauri://drag-enter", leave: "tauri://drag-leave", drop: "tauri://drag-drop" } as const;

function sub<T>(name: string, fn: (payload: T) => void): Promise<Unlisten> {
  return listen<T>(name, (ev) => fn(ev.payload));
}

export const tauriApi: Api = {
  ...tauriCommands,
  onPendingApprovals: (fn) => sub<PendingApprovalsEvent>(APP_EVENTS.pendingApprovals, fn),
  onFocusApproval: (fn) => sub<FocusApprovalEvent>(APP_EVENTS.focusApproval, fn),
  onExecutionFiles: (fn) => sub<ExecutionFilesEvent>(APP_EVENTS.executionFiles, fn),
  onConversationUpdated: (fn) => sub<ConversationSummary>(APP_EVENTS.conversationUpdated, fn),
  onFilesDropped: (fn) => sub<FilesDroppedEvent>(APP_EVENTS.filesDropped, fn),
  onDragHover: async (fn) => {
    const off = await Promise.all([
      sub<unknown>(DRAG_EVENTS.enter, () => fn(true)),
      sub<unknown>(DRAG_EVENTS.leave, () => fn(false)),
      sub<unknown>(DRAG_EVENTS.drop, () => fn(false)),
    ]);
    return () => off.forEach((u) => u());
  },
};
