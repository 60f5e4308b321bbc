// The Api over Tauri IPC. Streams (agent events, image progress) use Channels; rare app-wide
// signals use global events, named here and nowhere else.

import { Channel, invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import type { AgentEvent } from "../bindings/AgentEvent";
import type { ConversationSummary } from "../bindings/ConversationSummary";
import type { ConversationView } from "../bindings/ConversationView";
import type { DoctorReport } from "../bindings/DoctorReport";
import type { ExecutionFilesEvent } from "../bindings/ExecutionFilesEvent";
import type { FolderOpening } from "../bindings/FolderOpening";
import type { RunImage } from "../bindings/RunImage";
import type { FocusApprovalEvent } from "../bindings/FocusApprovalEvent";
import type { ImageProgress } from "../bindings/ImageProgress";
import type { LogChunk } from "../bindings/LogChunk";
import type { PendingApproval } from "../bindings/PendingApproval";
import type { PendingApprovalsEvent } from "../bindings/PendingApprovalsEvent";
import type { ProfileInfo } from "../bindings/ProfileInfo";
import type { ProviderCheck } from "../bindings/ProviderCheck";
import type { SessionRuleView } from "../bindings/SessionRuleView";
import type { Settings } from "../bindings/Settings";
import type { WorkspaceEntry } from "../bindings/WorkspaceEntry";
import type { RecoveryOutcome } from "../bindings/RecoveryOutcome";
import type { StartupNotice } from "../bindings/StartupNotice";
import type { StartupState } from "../bindings/StartupState";
import type { Api, Unlisten } from "./types";

export const APP_EVENTS = {
  pendingApprovals: "pending-approvals",
  focusApproval: "focus-approval",
  executionFiles: "execution-files",
  conversationUpdated: "conversation-updated",
} as const;

function sub<T>(name: string, fn: (payload: T) => void): Promise<Unlisten> {
  return listen<T>(name, (ev) => fn(ev.payload));
}

export const tauriApi: Api = {
  doctor: () => invoke<DoctorReport>("doctor"),
  prepareImage: (onProgress) => {
    const ch = new Channel<ImageProgress>();
    ch.onmessage = onProgress;
    return invoke<void>("prepare_image", { onProgress: ch });
  },
  getSettings: () => invoke<Settings>("get_settings"),
  saveSettings: (settings) => invoke<Settings>("save_settings", { settings }),
  setApiKey: (provider, key) => invoke<void>("set_api_key", { provider, key }),
  checkProvider: () => invoke<ProviderCheck>("check_provider"),
  listProfiles: () => invoke<ProfileInfo[]>("list_profiles"),

  listConversations: (query) =>
    invoke<ConversationSummary[]>("list_conversations", query ? { query } : {}),
  createConversation: () => invoke<ConversationSummary>("create_conversation"),
  renameConversation: (id, title) => invoke<void>("rename_conversation", { id, title }),
  deleteConversation: (id) => invoke<void>("delete_conversation", { id }),
  exportConversation: (id, format) => invoke<string>("export_conversation", { id, format }),
  openConversation: (id, onEvent) => {
    const events = new Channel<AgentEvent>();
    events.onmessage = onEvent;
    return invoke<ConversationView>("open_conversation", { id, events });
  },
  sendMessage: (id, text) => invoke<void>("send_message", { id, text }),
  decide: (id, approvalId, codeHash, decision, confirmed, freshInterpreter) =>
    invoke<void>("decide", { id, approvalId, codeHash, decision, confirmed, freshInterpreter: freshInterpreter ?? false }),
  decideHost: (id, target, decision) => invoke<void>("decide_host", { id, target, decision }),
  cancel: (id) => invoke<void>("cancel", { id }),
  setPolicy: (id, policy) => invoke<void>("set_policy", { id, policy }),
  listRules: (id) => invoke<SessionRuleView[]>("list_rules", { id }),
  revokeRule: (id, codeHash) => invoke<void>("revoke_rule", { id, codeHash }),

  listWorkspace: (id) => invoke<WorkspaceEntry[]>("list_workspace", { id }),
  readWorkspaceImage: (id, path) => invoke<string>("read_workspace_image", { id, path }),
  readRunImage: (executionId, path) => invoke<RunImage>("read_run_image", { executionId, path }),
  readLog: (executionId, stream, offset, length) => invoke<LogChunk>("read_log", { executionId, stream, offset, length }),
  openWorkspaceFolder: (id) => invoke<FolderOpening>("open_workspace_folder", { id }),
  openExternal: (url) => invoke<void>("open_external", { url }),
  pendingApprovals: () => invoke<PendingApproval[]>("pending_approvals"),
  runningSandboxes: () => invoke<number>("running_sandboxes"),
  appReady: () => invoke<void>("app_ready"),
  startupState: () => invoke<StartupState>("startup_state"),
  startFreshHistory: () => invoke<RecoveryOutcome>("start_fresh_history"),
  recoverHistory: () => invoke<RecoveryOutcome>("recover_history"),
  startupNotices: () => invoke<StartupNotice[]>("startup_notices"),

  onPendingApprovals: (fn) => sub<PendingApprovalsEvent>(APP_EVENTS.pendingApprovals, fn),
  onFocusApproval: (fn) => sub<FocusApprovalEvent>(APP_EVENTS.focusApproval, fn),
  onExecutionFiles: (fn) => sub<ExecutionFilesEvent>(APP_EVENTS.executionFiles, fn),
  onConversationUpdated: (fn) => sub<ConversationSummary>(APP_EVENTS.conversationUpdated, fn),
};
