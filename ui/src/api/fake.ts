// An in-browser stand-in for the Tauri backend, used by the Vitest screen tests and, outside the
// app, by the builds that carry it (`npm run dev`, `npm run build:fake`; never the production
// bundle, see `connect()` in index.ts). It simulates what the real core does — streamed text,
// approvals bound to id + hash, streamed output with resource samples, a destructive request
// that needs confirmation — so every screen can be driven. The turn itself is in fake-turn.ts,
// fixed answers about the machine in fake-answers.ts, what the model says in fake-script.ts.

import type { ImageInput } from "../bindings/ImageInput";
import type { RecoveryOutcome } from "../bindings/RecoveryOutcome";
import type { StartupNotice } from "../bindings/StartupNotice";
import type { StartupState } from "../bindings/StartupState";
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
import type { ChangeDetail } from "../bindings/ChangeDetail";
import type { FilesDroppedEvent } from "../bindings/FilesDroppedEvent";
import type { FocusApprovalEvent } from "../bindings/FocusApprovalEvent";
import type { AttachedItem } from "../bindings/AttachedItem";
import type { AttachProgress } from "../bindings/AttachProgress";
import type { ModelMenu } from "../bindings/ModelMenu";
import type { ImageProgress } from "../bindings/ImageProgress";
import type { LogChunk } from "../bindings/LogChunk";
import type { OutputStream } from "../bindings/OutputStream";
import type { PendingApproval } from "../bindings/PendingApproval";
import type { PendingApprovalsEvent } from "../bindings/PendingApprovalsEvent";
import type { ProfileInfo } from "../bindings/ProfileInfo";
import type { ProviderCheck } from "../bindings/ProviderCheck";
import type { SessionRuleView } from "../bindings/SessionRuleView";
import type { Settings } from "../bindings/Settings";
import type { UndoUsage } from "../bindings/UndoUsage";
import type { McpOverview } from "../bindings/McpOverview";
import type { McpProbe } from "../bindings/McpProbe";
import type { McpServerEntry } from "../bindings/McpServerEntry";
import type { WorkspaceEntry } from "../bindings/WorkspaceEntry";
import type { CommandError } from "../bindings/CommandError";
import type { ErrorKind } from "../bindings/ErrorKind";
import type { Api, ExportFormat, Unlisten } from "./types";
import { DAMAGED, FRESH_HISTORY, HISTORY_MISSING, IMAGE_DONE, IMAGE_START, PROFILES, doctorReport, folderOpening, imageImportStep, logText, providerCheck, recovered } from "./fake-answers";
import { runFlood, runLive, type Runner } from "./fake-runs";
import { changeDetail, redoRun, rewindTo, undoRun } from "./fake-undo";
import { SEED_CONVERSATIONS, chartSvg, requestFor } from "./fake-script";
import { DEMO_INSTRUCTIONS, newId, runTurn, streamText, type Conv, type TurnHost } from "./fake-turn";

/** The models the fake offers in the chat header's menu. */
const FAKE_MODELS = [
  { provider: "openai", model: "gpt-4o" },
  { provider: "openai", model: "gpt-4o-mini" },
  { provider: "anthropic", model: "claude-sonnet-4-5" },
];

export interface FakeOptions {
  /** Delay of each simulated step; 0 runs steps on the next macrotask. */
  latencyMs?: number;
  /**
   * "", "doctor" (Docker down, no image, no provider), "noimage", "nomodel" (no provider, no
   * Ollama), "approval", "destructive", "live", "flood".
   */
  scenario?: string;
}

/** What the real backend rejects with. */
function fail(kind: ErrorKind, message: string): CommandError {
  return { kind, message };
}

type Listeners = {
  pending: Set<(e: PendingApprovalsEvent) => void>;
  focus: Set<(e: FocusApprovalEvent) => void>;
  files: Set<(e: ExecutionFilesEvent) => void>;
  updated: Set<(e: ConversationSummary) => void>;
  dropped: Set<(e: FilesDroppedEvent) => void>;
  hover: Set<(over: boolean) => void>;
};

export class FakeBackend implements Api {
  /** Every call, in order, for tests to inspect. */
  readonly calls: { name: string; args: unknown[] }[] = [];
  readonly convs = new Map<string, Conv>();
  private open: { id: string; onEvent: (e: AgentEvent) => void } | null = null;
  private readonly listeners: Listeners = { pending: new Set(), focus: new Set(), files: new Set(), updated: new Set(), dropped: new Set(), hover: new Set() };
  /** Attachments the next message tells the model about, per conversation. */
  private attached = new Map<string, AttachedItem[]>();
  private drops = new Map<number, string[]>();
  private settings: Settings;
  private readonly latency: number;
  private readonly scenario: string;
  private imageReady: boolean;
  private dockerUp: boolean;
  private logs = new Map<string, string>();
  /** Pictures sent with messages, as readMessageImage gives them back. */
  private readonly pictures = new Map<string, string>();
  private liveStarted = false;
  /** What a turn (fake-turn.ts) needs from the backend. */
  private readonly host: TurnHost;

  constructor(opts: FakeOptions = {}) {
    this.latency = opts.latencyMs ?? 0;
    this.host = {
      latency: this.latency,
      emit: (id, e) => this.emit(id, e),
      tick: (ms) => this.tick(ms),
      announcePending: () => this.announcePending(),
      filesChanged: (e) => this.emitExecutionFiles(e),
      keepLog: (executionId, text) => void this.logs.set(executionId, text),
    };
    this.scenario = opts.scenario ?? "";
    const firstRun = this.scenario === "doctor" || this.scenario === "noimage";
    this.imageReady = !firstRun;
    this.dockerUp = this.scenario !== "doctor";
    this.settings = {
      provider: firstRun || this.scenario === "nomodel" ? null : { kind: "ollama", baseUrl: "http://127.0.0.1:11434", model: "qwen2.5-coder:7b", hasApiKey: false, toolMode: "auto", moreModels: ["llama3.1:8b"] },
      defaultProfile: null,
      defaultPolicy: "ask_unless_safe",
      notifications: true,
      longRunNotifyMs: 10_000,
      undoKeepBytes: null,
      undoKeepTotalBytes: null,
    };
    for (const seed of SEED_CONVERSATIONS()) {
      this.convs.set(seed.summary.id, {
        ...seed,
        pending: [],
        policy: "ask_unless_safe",
        rules: [],
        waiters: new Map(),
        cancelled: false,
      });
    }
    const first = [...this.convs.values()][0];
    if (first && (this.scenario === "approval" || this.scenario === "destructive")) {
      const req = requestFor(this.scenario === "destructive" ? "clean up the build folder" : "plot it");
      first.pending.push(req);
      first.items.push({ type: "approval", request: req, state: "pending", decidedBy: null, reason: null, userEdited: false });
      first.summary.pendingApprovals = 1;
    }
  }

  private log(name: string, ...args: unknown[]): void {
    this.calls.push({ name, args });
  }

  private tick(ms = this.latency): Promise<void> {
    return new Promise((r) => setTimeout(r, ms));
  }

  private conv(id: string): Conv {
    const c = this.convs.get(id);
    if (!c) throw fail("history", `Conversation ${id} does not exist any more — pick another one in the sidebar.`);
    return c;
  }

  /** What the scripted runs in fake-runs.ts need from the backend. */
  private runner(id: string): Runner {
    return { emit: (e) => this.emit(id, e), tick: (ms) => this.tick(ms), streamText: (text) => streamText(this.host, id, this.conv(id), text), conversationId: id };
  }

  /** Sends an event as the backend would (only the open conversation has a channel). */
  emit(conversationId: string, e: AgentEvent): void {
    if (this.open?.id === conversationId) this.open.onEvent(e);
  }

  emitFocusApproval(e: FocusApprovalEvent): void {
    for (const fn of this.listeners.focus) fn(e);
  }

  emitExecutionFiles(e: ExecutionFilesEvent): void {
    for (const fn of this.listeners.files) fn(e);
  }

  private pendingCount(): number {
    let n = 0;
    for (const c of this.convs.values()) n += c.pending.length;
    return n;
  }

  private announcePending(): void {
    for (const c of this.convs.values()) c.summary.pendingApprovals = c.pending.length;
    const count = this.pendingCount();
    for (const fn of this.listeners.pending) fn({ count });
  }

  // --- first run ---------------------------------------------------------------------------

  async doctor(): Promise<DoctorReport> {
    this.log("doctor");
    await this.tick();
    return doctorReport({
      dockerUp: this.dockerUp, imageReady: this.imageReady,
      configured: this.settings.provider !== null, noOllamaModels: this.scenario === "nomodel",
    });
  }

  async prepareImage(onProgress: (p: ImageProgress) => void): Promise<void> {
    this.log("prepareImage");
    onProgress({ ...IMAGE_START });
    for (let i = 0; i <= 20; i++) {
      await this.tick(Math.max(this.latency, 60));
      onProgress(imageImportStep(i, 20));
    }
    this.imageReady = true;
    this.dockerUp = true;
    onProgress({ ...IMAGE_DONE });
  }

  async getSettings(): Promise<Settings> {
    this.log("getSettings");
    return structuredClone(this.settings);
  }

  async saveSettings(settings: Settings): Promise<Settings> {
    this.log("saveSettings", structuredClone(settings));
    this.settings = structuredClone(settings);
    return structuredClone(settings);
  }

  async setApiKey(provider: string, key: string): Promise<void> {
    // Records that a key arrived, never the key itself.
    this.log("setApiKey", provider, key.length > 0 ? "<redacted>" : "");
  }

  async checkProvider(): Promise<ProviderCheck> {
    this.log("checkProvider");
    await this.tick();
    return providerCheck(this.settings.provider);
  }

  async listProfiles(): Promise<ProfileInfo[]> {
    this.log("listProfiles");
    return structuredClone([...PROFILES]);
  }

  // --- conversations -----------------------------------------------------------------------

  async listConversations(query?: string): Promise<ConversationSummary[]> {
    this.log("listConversations", query);
    const all = [...this.convs.values()].sort((a, b) => b.summary.updatedAt - a.summary.updatedAt);
    const q = query?.trim().toLowerCase();
    if (!q) return all.map((c) => ({ ...c.summary }));
    const hits: ConversationSummary[] = [];
    for (const c of all) {
      const texts = [c.summary.title, ...c.items.map((i) => ("text" in i ? i.text : i.type === "execution" ? i.code : ""))];
      const hit = texts.find((t) => t.toLowerCase().includes(q));
      if (hit) {
        const at = hit.toLowerCase().indexOf(q);
        hits.push({
          ...c.summary,
          snippet: `${hit.slice(Math.max(0, at - 30), at)}«${hit.slice(at, at + q.length)}»${hit.slice(at + q.length, at + q.length + 40)}`,
        });
      }
    }
    return hits;
  }

  async createConversation(): Promise<ConversationSummary> {
    this.log("createConversation");
    const summary: ConversationSummary = {
      id: newId("conv"),
      title: "New conversation",
      updatedAt: Date.now(),
      pendingApprovals: 0,
    };
    this.convs.set(summary.id, {
      summary, items: [], pending: [], policy: this.settings.defaultPolicy, rules: [], files: [],
      waiters: new Map(), cancelled: false,
    });
    return { ...summary };
  }

  async readMessageImage(messageId: string, ordinal: number): Promise<string> {
    this.log("readMessageImage", messageId, ordinal);
    const url = this.pictures.get(`${messageId}#${ordinal}`);
    if (!url) throw new Error(`no picture ${ordinal} in message ${messageId}`);
    return url;
  }

  async branchConversation(id: string, messageId: string): Promise<ConversationSummary> {
    this.log("branchConversation", id, messageId);
    const source = this.conv(id);
    const at = source.items.findIndex((i) => i.type === "user" && i.id === messageId);
    if (at < 0) throw new Error("a branch starts at one of the person's messages in that conversation");
    const summary: ConversationSummary = {
      id: newId("conv"),
      title: `${source.summary.title} (branch)`,
      updatedAt: Date.now(),
      pendingApprovals: 0,
    };
    const note = { type: "note" as const, id: newId("msg"), text: `This conversation branched from “${source.summary.title}” at your message. Its Python interpreter starts fresh.`, at: Date.now() };
    this.convs.set(summary.id, {
      summary, items: [...source.items.slice(0, at).filter((i) => i.type !== "approval" && i.type !== "execution"), note], pending: [], policy: source.policy, rules: [], files: [...source.files],
      waiters: new Map(), cancelled: false,
    });
    return { ...summary };
  }

  async renameConversation(id: string, title: string): Promise<void> {
    this.log("renameConversation", id, title);
    this.conv(id).summary.title = title;
  }

  async deleteConversation(id: string): Promise<void> {
    this.log("deleteConversation", id);
    this.conv(id);
    this.convs.delete(id);
    if (this.open?.id === id) this.open = null;
    this.announcePending();
  }

  async exportConversation(id: string, format: ExportFormat): Promise<string> {
    this.log("exportConversation", id, format);
    this.conv(id);
    return `/home/you/Documents/IronClaw/${id}.${format === "json" ? "json" : "md"}`;
  }

  async openConversation(id: string, onEvent: (e: AgentEvent) => void): Promise<ConversationView> {
    this.log("openConversation", id);
    const c = this.conv(id);
    this.open = { id, onEvent };
    if ((this.scenario === "live" || this.scenario === "flood") && !this.liveStarted) {
      this.liveStarted = true;
      setTimeout(() => void (this.scenario === "flood" ? runFlood(this.runner(id)) : runLive(this.runner(id), c)), 50);
    }
    return structuredClone({
      conversation: c.summary, items: c.items, pendingApprovals: c.pending, policy: c.policy,
      policyFlagged: c.policy === "never_ask", busy: c.waiters.size > 0,
      instructions: id === "conv-sales" ? DEMO_INSTRUCTIONS : [],
      attached: this.attached.get(id) ?? [],
      model: c.model ?? FAKE_MODELS[0]!,
      // The seeded conversation was used before: its meter shows from the start.
      context: id === "conv-sales" ? { model: "mock", usedTokens: 2100, windowTokens: 8192, windowSource: "known for this model" } : null,
    });
  }

  async sendMessage(id: string, text: string, images?: ImageInput[] | null): Promise<void> {
    this.log("sendMessage", id, text, images ?? []);
    const c = this.conv(id);
    const attached = this.attached.get(id);
    this.attached.delete(id);
    if (attached?.length) {
      text = `[The person attached files; they are in your workspace now: ${attached.map((a) => `/workspace/${a.name}${a.isDir ? "/" : ""}`).join("; ")}.]\n\n${text}`;
    }
    // As the app keeps them: the picture as sent (the fake does not scale it).
    const messageId = newId("msg");
    const sent = (images ?? []).map((i, ordinal) => {
      this.pictures.set(`${messageId}#${ordinal}`, `data:image/png;base64,${i.data}`);
      return { messageId, ordinal, name: i.name, width: 0, height: 0 };
    });
    c.items.push({ type: "user", id: messageId, text, images: sent, at: Date.now() });
    this.emit(id, { type: "userMessageSaved", messageId });
    if (c.summary.title === "New conversation") {
      c.summary.title = text.length > 40 ? `${text.slice(0, 40)}…` : text;
    }
    c.summary.updatedAt = Date.now();
    for (const fn of this.listeners.updated) fn({ ...c.summary });
    void runTurn(this.host, id, c, text);
  }

  async undoRun(id: string, executionId: string, force: boolean): Promise<void> {
    this.log("undoRun", id, executionId, force);
    await this.tick();
    this.emit(id, undoRun(this.conv(id), executionId, force));
  }

  async runChange(executionId: string, path: string): Promise<ChangeDetail> {
    this.log("runChange", executionId, path);
    await this.tick();
    return changeDetail(this.convs.values(), executionId, path);
  }

  async rewindTo(id: string, executionId: string): Promise<void> {
    this.log("rewindTo", id, executionId);
    await this.tick();
    for (const e of rewindTo(this.conv(id), executionId)) this.emit(id, e);
  }

  async redoRun(id: string, executionId: string): Promise<void> {
    this.log("redoRun", id, executionId);
    await this.tick();
    this.emit(id, redoRun(this.conv(id), executionId));
  }

  async decideHost(id: string, target: string, decision: HostDecision): Promise<void> {
    this.log("decideHost", id, target, decision);
    this.emit(id, { type: "networkDecided", target, decision, decidedBy: "user_dialog" });
  }

  async decide(id: string, approvalId: string, codeHash: string, decision: Decision, confirmed: boolean): Promise<void> {
    this.log("decide", id, approvalId, codeHash, structuredClone(decision), confirmed);
    const c = this.conv(id);
    const req = c.pending.find((r) => r.approvalId === approvalId);
    if (!req) {
      this.emit(id, { type: "decisionRejected", approvalId, message: "This approval was already decided.", stillPending: false });
      return;
    }
    if (req.codeHash !== codeHash) {
      this.emit(id, { type: "decisionRejected", approvalId, message: "The code hash does not match the request; nothing ran.", stillPending: true });
      return;
    }
    const approving = decision.type !== "deny";
    if (approving && req.destructive && !confirmed) {
      this.emit(id, {
        type: "decisionRejected", approvalId,
        message: "This code is destructive: tick the confirmation before approving.", stillPending: true,
      });
      return;
    }
    await this.tick();
    c.pending = c.pending.filter((r) => r.approvalId !== approvalId);
    const item = c.items.find((i) => i.type === "approval" && i.request.approvalId === approvalId);
    if (item && item.type === "approval") {
      item.state = approving ? "approved" : "denied";
      item.decidedBy = "user_dialog";
    }
    if (decision.type === "alwaysAllowInSession") {
      c.rules.push({ codeHash, language: req.language, code: req.code, createdAt: Date.now() });
    }
    this.emit(id, {
      type: "approvalResolved", approvalId, approved: approving, decidedBy: "user_dialog",
      userEdited: decision.type === "editAndApprove", auto: false,
      reason: decision.type === "deny" ? (decision.reason ?? null) : null,
    });
    this.announcePending();
    const waiter = c.waiters.get(approvalId);
    c.waiters.delete(approvalId);
    waiter?.({ decision });
  }

  async cancel(id: string): Promise<void> {
    this.log("cancel", id);
    const c = this.conv(id);
    c.cancelled = true;
    for (const w of c.waiters.values()) w(null);
    c.waiters.clear();
  }

  async setPolicy(id: string, policy: ApprovalPolicy): Promise<void> {
    this.log("setPolicy", id, policy);
    this.conv(id).policy = policy;
    this.emit(id, { type: "policyChanged", policy, flagged: policy === "never_ask" });
  }

  async listRules(id: string): Promise<SessionRuleView[]> {
    this.log("listRules", id);
    return structuredClone(this.conv(id).rules);
  }

  async revokeRule(id: string, codeHash: string): Promise<void> {
    this.log("revokeRule", id, codeHash);
    const c = this.conv(id);
    c.rules = c.rules.filter((r) => r.codeHash !== codeHash);
  }

  // --- workspace, logs, app ----------------------------------------------------------------

  async listWorkspace(id: string): Promise<WorkspaceEntry[]> {
    this.log("listWorkspace", id);
    return structuredClone(this.conv(id).files);
  }

  async readWorkspaceImage(id: string, path: string): Promise<string> {
    this.log("readWorkspaceImage", id, path);
    if (path.includes("..")) throw fail("invalid_input", "That path leaves the workspace.");
    return `data:image/svg+xml;base64,${btoa(chartSvg())}`;
  }

  async readRunImage(executionId: string, path: string): Promise<RunImage> {
    this.log("readRunImage", executionId, path);
    for (const c of this.convs.values()) {
      const run = c.items.find((i) => i.type === "execution" && i.executionId === executionId);
      if (!run || run.type !== "execution") continue;
      if (!run.images.includes(path)) throw fail("invalid_input", `refused to open "${path}": it is not an image this run wrote`);
      if (!c.files.some((f) => f.path === path)) return { state: "gone" };
      return { state: "shown", dataUrl: `data:image/svg+xml;base64,${btoa(chartSvg())}` };
    }
    throw fail("history", `no execution ${executionId}`);
  }

  async readLog(executionId: string, stream: OutputStream, offset: number, length: number): Promise<LogChunk> {
    this.log("readLog", executionId, stream, offset, length);
    const full = logText(stream, this.logs.get(executionId));
    const text = full.slice(offset, offset + length);
    return { text, offset, nextOffset: offset + text.length, totalBytes: full.length };
  }

  async modelMenu(id: string): Promise<ModelMenu> {
    this.log("modelMenu", id);
    await this.tick();
    return { current: this.conv(id).model ?? FAKE_MODELS[0]!, options: FAKE_MODELS };
  }

  async useModel(id: string, provider: string, model: string): Promise<void> {
    this.log("useModel", id, provider, model);
    await this.tick();
    const c = this.conv(id);
    if (!FAKE_MODELS.some((m) => m.provider === provider && m.model === model)) {
      this.emit(id, { type: "error", message: `could not switch to ${model}: no provider named "${provider}" is configured` });
      return;
    }
    c.model = { provider, model };
    this.emit(id, { type: "modelChanged", provider, model });
  }

  /** What a person dropping these files on the window makes the backend do (tests, the demo). */
  dropFiles(names: string[]): void {
    const dropId = this.drops.size + 1;
    this.drops.set(dropId, names);
    for (const fn of this.listeners.dropped) fn({ dropId, names });
  }

  hoverFiles(over: boolean): void {
    for (const fn of this.listeners.hover) fn(over);
  }

  async attachDropped(id: string, dropId: number, onProgress: (p: AttachProgress) => void): Promise<AttachedItem[]> {
    this.log("attachDropped", id, dropId);
    const names = this.drops.get(dropId);
    this.drops.delete(dropId);
    if (!names) throw fail("io", "those dropped files are no longer waiting (a drop is kept for a minute and attached once); drop them again");
    return this.copyIn(id, names, onProgress);
  }

  async attachPicked(id: string, folders: boolean, onProgress: (p: AttachProgress) => void): Promise<AttachedItem[]> {
    this.log("attachPicked", id, folders);
    return this.copyIn(id, folders ? ["project"] : ["notes.txt"], onProgress);
  }

  private async copyIn(id: string, names: string[], onProgress: (p: AttachProgress) => void): Promise<AttachedItem[]> {
    const items: AttachedItem[] = [];
    for (const name of names) {
      const isDir = !name.includes(".");
      const bytes = isDir ? 3 * 1024 * 1024 : 2048;
      for (const done of [0, bytes / 2, bytes]) {
        onProgress({ name, done, all: bytes });
        await this.tick();
      }
      items.push({ name, isDir, files: isDir ? 12 : 1, bytes, leftOut: isDir ? [`${name}/link-to-home (a symbolic link)`] : [] });
    }
    this.attached.set(id, [...(this.attached.get(id) ?? []), ...items]);
    return items;
  }

  async openWorkspaceFolder(id: string): Promise<FolderOpening> {
    this.log("openWorkspaceFolder", id);
    return folderOpening(id, this.scenario !== "nofilemanager");
  }

  /** Quitting, as the app would; tests read how often it was asked. */
  quitRequests = 0;
  async quitApp(): Promise<void> {
    this.quitRequests += 1;
  }

  async openExternal(url: string): Promise<void> {
    this.log("openExternal", url);
  }

  async pendingApprovals(): Promise<PendingApproval[]> {
    this.log("pendingApprovals");
    const out: PendingApproval[] = [];
    for (const c of this.convs.values()) {
      for (const request of c.pending) out.push({ conversationId: c.summary.id, title: c.summary.title, request: structuredClone(request) });
    }
    return out;
  }

  /** Bytes the undo history holds, for `undoUsage` (tests set it). */
  undoKept = 300 * 1024 * 1024;

  async undoUsage(): Promise<UndoUsage> {
    this.log("undoUsage");
    const GIB = 1024 ** 3;
    return {
      keptBytes: this.undoKept,
      keepBytes: this.settings.undoKeepBytes ?? 2 * GIB,
      keepTotalBytes: this.settings.undoKeepTotalBytes ?? 10 * GIB,
      policyKeepBytes: 2 * GIB,
      policyKeepTotalBytes: 10 * GIB,
    };
  }

  /** The servers of the fake `mcp.yaml` (tests set them). */
  mcp: McpServerEntry[] = [];

  async mcpServers(): Promise<McpOverview> {
    this.log("mcpServers");
    return { file: "/home/you/.config/ironclaw/mcp.yaml", servers: structuredClone(this.mcp), problem: null };
  }

  async saveMcpServer(server: McpServerEntry): Promise<McpOverview> {
    this.log("saveMcpServer", server);
    if (!/^[a-z0-9-]{1,24}$/.test(server.name)) throw fail("invalid_input", `server name "${server.name}": use 1 to 24 lower-case letters, digits or -`);
    if (server.command.length === 0 && !server.url) throw fail("invalid_input", "give the program and its arguments, or a remote server's address");
    this.mcp = [...this.mcp.filter((s) => s.name !== server.name), structuredClone(server)].sort((a, b) => a.name.localeCompare(b.name));
    return this.mcpServers();
  }

  async removeMcpServer(name: string): Promise<McpOverview> {
    this.log("removeMcpServer", name);
    this.mcp = this.mcp.filter((s) => s.name !== name);
    return this.mcpServers();
  }

  async checkMcpServers(): Promise<McpProbe[]> {
    this.log("checkMcpServers");
    return this.mcp.filter((s) => s.enabled).map((s) => ({ name: s.name, ok: true, tools: ["get_current_time"], message: "1 tool(s) in its own sandbox container: get_current_time" }));
  }

  /** What `runningSandboxes` answers (tests set it). */
  sandboxesRunning = 0;

  async runningSandboxes(): Promise<number> {
    this.log("runningSandboxes");
    return this.sandboxesRunning;
  }

  async appReady(): Promise<void> {
    this.log("appReady");
  }

  /** Scenario "damaged": the history is damaged until a way out is taken. */
  private damaged = true;
  private noticesShown = false;

  async startupState(): Promise<StartupState> {
    this.log("startupState");
    if (this.scenario !== "damaged" || !this.damaged) return { historyDamage: null };
    return structuredClone(DAMAGED);
  }

  async startFreshHistory(): Promise<RecoveryOutcome> {
    this.log("startFreshHistory");
    this.damaged = false;
    this.convs.clear();
    return { ...FRESH_HISTORY };
  }

  async recoverHistory(): Promise<RecoveryOutcome> {
    this.log("recoverHistory");
    this.damaged = false;
    const n = this.convs.size;
    return recovered(n);
  }

  async startupNotices(): Promise<StartupNotice[]> {
    this.log("startupNotices");
    if (this.scenario !== "notices" || this.noticesShown) return [];
    this.noticesShown = true;
    return [{ ...HISTORY_MISSING }];
  }

  private subscribe<T>(set: Set<(e: T) => void>, fn: (e: T) => void): Promise<Unlisten> {
    set.add(fn);
    return Promise.resolve(() => set.delete(fn));
  }

  onPendingApprovals(fn: (e: PendingApprovalsEvent) => void): Promise<Unlisten> {
    return this.subscribe(this.listeners.pending, fn);
  }
  onFocusApproval(fn: (e: FocusApprovalEvent) => void): Promise<Unlisten> {
    return this.subscribe(this.listeners.focus, fn);
  }
  onExecutionFiles(fn: (e: ExecutionFilesEvent) => void): Promise<Unlisten> {
    return this.subscribe(this.listeners.files, fn);
  }
  onConversationUpdated(fn: (e: ConversationSummary) => void): Promise<Unlisten> {
    return this.subscribe(this.listeners.updated, fn);
  }
  onFilesDropped(fn: (e: FilesDroppedEvent) => void): Promise<Unlisten> {
    return this.subscribe(this.listeners.dropped, fn);
  }
  onDragHover(fn: (over: boolean) => void): Promise<Unlisten> {
    return this.subscribe(this.listeners.hover, fn);
  }
}
