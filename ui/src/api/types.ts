// The one typed surface between the UI and the backend. Views call only this; `tauri.ts`
// implements it with invoke/Channel/listen, `fake.ts` in the browser and in tests.

import type { AgentEvent } from "../bindings/AgentEvent";
import type { ApprovalPolicy } from "../bindings/ApprovalPolicy";
import type { ConversationSummary } from "../bindings/ConversationSummary";
import type { ConversationView } from "../bindings/ConversationView";
import type { Decision } from "../bindings/Decision";
import type { HostDecision } from "../bindings/HostDecision";
import type { DoctorReport } from "../bindings/DoctorReport";
import type { ExecutionFilesEvent } from "../bindings/ExecutionFilesEvent";
import type { FolderOpening } from "../bindings/FolderOpening";
import type { RunImage } from "../bindings/RunImage";
import type { FocusApprovalEvent } from "../bindings/FocusApprovalEvent";
import type { ImageProgress } from "../bindings/ImageProgress";
import type { LogChunk } from "../bindings/LogChunk";
import type { OutputStream } from "../bindings/OutputStream";
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

export type Unlisten = () => void;
export type ExportFormat = "markdown" | "json";

export interface Api {
  doctor(): Promise<DoctorReport>;
  prepareImage(onProgress: (p: ImageProgress) => void): Promise<void>;
  getSettings(): Promise<Settings>;
  saveSettings(settings: Settings): Promise<Settings>;
  /** The key goes straight to the OS keyring; callers must not keep it afterwards. */
  setApiKey(provider: string, key: string): Promise<void>;
  checkProvider(): Promise<ProviderCheck>;
  listProfiles(): Promise<ProfileInfo[]>;

  listConversations(query?: string): Promise<ConversationSummary[]>;
  createConversation(): Promise<ConversationSummary>;
  renameConversation(id: string, title: string): Promise<void>;
  deleteConversation(id: string): Promise<void>;
  exportConversation(id: string, format: ExportFormat): Promise<string>;
  /** Live events for this conversation go to `onEvent` until another conversation is opened. */
  openConversation(id: string, onEvent: (e: AgentEvent) => void): Promise<ConversationView>;
  sendMessage(id: string, text: string): Promise<void>;
  /** `freshInterpreter`: restart the interpreter the code runs in first (see `alteredSession`). */
  decide(id: string, approvalId: string, codeHash: string, decision: Decision, confirmed: boolean, freshInterpreter?: boolean): Promise<void>;
  /** Answers a host the network policy refused; only a refused, unanswered host is accepted. */
  decideHost(id: string, target: string, decision: HostDecision): Promise<void>;
  cancel(id: string): Promise<void>;
  setPolicy(id: string, policy: ApprovalPolicy): Promise<void>;
  listRules(id: string): Promise<SessionRuleView[]>;
  revokeRule(id: string, codeHash: string): Promise<void>;

  listWorkspace(id: string): Promise<WorkspaceEntry[]>;
  readWorkspaceImage(id: string, path: string): Promise<string>;
  /** An image a run recorded, for a reopened conversation; `gone` when it was deleted since. */
  readRunImage(executionId: string, path: string): Promise<RunImage>;
  readLog(executionId: string, stream: OutputStream, offset: number, length: number): Promise<LogChunk>;
  /** Never rejects for a missing file manager: the result says what failed and names the path. */
  openWorkspaceFolder(id: string): Promise<FolderOpening>;
  openExternal(url: string): Promise<void>;
  pendingApprovals(): Promise<PendingApproval[]>;
  /** How many of the app's sandbox containers run now (all are stopped when the app quits). */
  runningSandboxes(): Promise<number>;
  appReady(): Promise<void>;
  /** Whether the history is damaged (then only the recovery calls below work until one succeeds). */
  startupState(): Promise<StartupState>;
  startFreshHistory(): Promise<RecoveryOutcome>;
  recoverHistory(): Promise<RecoveryOutcome>;
  /** What was found wrong at start and not shown yet; each notice comes once. */
  startupNotices(): Promise<StartupNotice[]>;

  onPendingApprovals(fn: (e: PendingApprovalsEvent) => void): Promise<Unlisten>;
  onFocusApproval(fn: (e: FocusApprovalEvent) => void): Promise<Unlisten>;
  onExecutionFiles(fn: (e: ExecutionFilesEvent) => void): Promise<Unlisten>;
  onConversationUpdated(fn: (e: ConversationSummary) => void): Promise<Unlisten>;
}

/** Errors from commands are strings that say what to do; anything else is made into one. */
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
