// An in-browser stand-in for the Tauri backend, used only when the page is not inside the app
// (vite preview, headless screenshots) and by the Vitest screen tests. It simulates what the
// real core does — streamed text, approvals bound to id + hash, streamed output with resource
// samples, a destructive request that needs confirmation — so every screen can be driven.

import type { RecoveryOutcome } from "../bindings/RecoveryOutcome";
import type { StartupNotice } from "../bindings/StartupNotice";
import type { StartupState } from "../bindings/StartupState";
import type { AgentEvent } from "../bindings/AgentEvent";
import type { ApprovalPolicy } from "../bindings/ApprovalPolicy";
import type { ApprovalRequest } from "../bindings/ApprovalRequest";
import type { ConversationSummary } from "../bindings/ConversationSummary";
import type { ConversationView } from "../bindings/ConversationView";
import type { Decision } from "../bindings/Decision";
import type { HostDecision } from "../bindings/HostDecision";
import type { DoctorReport } from "../bindings/DoctorReport";
import type { ExecutionFilesEvent } from "../bindings/ExecutionFilesEvent";
import type { FolderOpening } from "../bindings/FolderOpening";
import type { RunImage } from "../bindings/RunImage";
import type { FocusApprovalEvent } from "../bindings/FocusApprovalEvent";
import type { HistoryItem } from "../bindings/HistoryItem";
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
import type { Api, ExportFormat, Unlisten } from "./types";
import { runFlood, runLive, type Runner } from "./fake-runs";
import { SEED_CONVERSATIONS, chartSvg, requestFor, replyFor } from "./fake-script";

export interface FakeOptions {
  /** Delay of each simulated step; 0 runs steps on the next macrotask. */
  latencyMs?: number;
  /**
   * "", "doctor" (Docker down, no image, no provider), "noimage", "nomodel" (no provider, no
   * Ollama), "approval", "destructive", "live", "flood".
   */
  scenario?: string;
}

export interface Conv {
  summary: ConversationSummary;
  items: HistoryItem[];
  pending: ApprovalRequest[];
  policy: ApprovalPolicy;
  rules: SessionRuleView[];
  files: WorkspaceEntry[];
  waiters: Map<string, (d: { decision: Decision } | null) => void>;
  cancelled: boolean;
}

type Listeners = {
  pending: Set<(e: PendingApprovalsEvent) => void>;
  focus: Set<(e: FocusApprovalEvent) => void>;
  files: Set<(e: ExecutionFilesEvent) => void>;
  updated: Set<(e: ConversationSummary) => void>;
};

let counter = 0;
const newId = (p: string) => `${p}-${Date.now().toString(36)}-${(++counter).toString(36)}`;

export class FakeBackend implements Api {
  /** Every call, in order, for tests to inspect. */
  readonly calls: { name: string; args: unknown[] }[] = [];
  readonly convs = new Map<string, Conv>();
  private open: { id: string; onEvent: (e: AgentEvent) => void } | null = null;
  private readonly listeners: Listeners = { pending: new Set(), focus: new Set(), files: new Set(), updated: new Set() };
  private settings: Settings;
  private readonly latency: number;
  private readonly scenario: string;
  private imageReady: boolean;
  private dockerUp: boolean;
  private logs = new Map<string, string>();
  private liveStarted = false;

  constructor(opts: FakeOptions = {}) {
    this.latency = opts.latencyMs ?? 0;
    this.scenario = opts.scenario ?? "";
    const firstRun = this.scenario === "doctor" || this.scenario === "noimage";
    this.imageReady = !firstRun;
    this.dockerUp = this.scenario !== "doctor";
    this.settings = {
      provider: firstRun || this.scenario === "nomodel" ? null : { kind: "ollama", baseUrl: "http://127.0.0.1:11434", model: "qwen2.5-coder:7b", hasApiKey: false },
      defaultProfile: null,
      defaultPolicy: "ask_unless_safe",
      notifications: true,
      longRunNotifyMs: 10_000,
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
    if (!c) throw `Conversation ${id} does not exist any more — pick another one in the sidebar.`;
    return c;
  }

  /** What the scripted runs in fake-runs.ts need from the backend. */
  private runner(id: string): Runner {
    return { emit: (e) => this.emit(id, e), tick: (ms) => this.tick(ms), streamText: (text) => this.streamText(id, this.conv(id), text), conversationId: id };
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
    const tag = "ironclaw-sandbox:3f9c2e1a";
    return {
      docker: this.dockerUp
        ? { state: "ok", message: "Docker 20.10.24 (API 1.41) at unix:///var/run/docker.sock", fix: null }
        : {
            state: "notRunning",
            message: "The Docker engine does not answer at unix:///var/run/docker.sock.",
            fix: "Start it: `sudo systemctl start docker` (or open Docker Desktop), then press Check again.",
          },
      image: this.imageReady
        ? { state: "ready", tag, message: "The sandbox image is ready." }
        : this.dockerUp
          ? { state: "missing", tag, message: "The sandbox image is not built yet." }
          : { state: "unknown", tag, message: "Docker must run before the image can be checked." },
      model: {
        configured: this.settings.provider !== null,
        ollamaModels: this.scenario === "nomodel" ? [] : ["qwen2.5-coder:7b", "llama3.1:8b"],
        keyringAvailable: true,
        keyringMessage: "Keys are stored in the Secret Service keyring.",
      },
      dataDir: "/home/you/.local/share/ironclaw",
      ready: this.dockerUp && this.imageReady,
    };
  }

  async prepareImage(onProgress: (p: ImageProgress) => void): Promise<void> {
    this.log("prepareImage");
    onProgress({ phase: "debootstrap", message: "Building a minimal Debian root file system", fraction: null, done: false });
    for (let i = 0; i <= 20; i++) {
      await this.tick(Math.max(this.latency, 60));
      onProgress({ phase: "import", message: `Importing into Docker — ${i * 5} MB of 99 MB`, fraction: i / 20, done: false });
    }
    this.imageReady = true;
    this.dockerUp = true;
    onProgress({ phase: "done", message: "Ready: ironclaw-sandbox:3f9c2e1a", fraction: 1, done: true });
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
    const p = this.settings.provider;
    if (!p) return { ok: false, model: null, message: "No provider is configured." };
    const model = p.model ?? "qwen2.5-coder:7b";
    const url = p.baseUrl ?? (p.kind === "ollama" ? "http://127.0.0.1:11434/v1" : "http://localhost:8000/v1");
    return { ok: true, model, message: `Connected: the server at ${url} answers and offers 1 model. IronClaw will use “${model}”.` };
  }

  async listProfiles(): Promise<ProfileInfo[]> {
    this.log("listProfiles");
    return [
      { name: "default", description: "Everyday analysis", memoryBytes: 512 * 1024 ** 2, cpus: 1, pids: 128, timeoutMs: 120_000, network: "none", isDefault: true },
      { name: "heavy", description: "Bigger data sets", memoryBytes: 2 * 1024 ** 3, cpus: 2, pids: 256, timeoutMs: 600_000, network: "none", isDefault: false },
      { name: "locked", description: "Tight limits for untrusted tasks", memoryBytes: 128 * 1024 ** 2, cpus: 0.5, pids: 32, timeoutMs: 30_000, network: "none", isDefault: false },
    ];
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
    });
  }

  async sendMessage(id: string, text: string): Promise<void> {
    this.log("sendMessage", id, text);
    const c = this.conv(id);
    c.items.push({ type: "user", id: newId("msg"), text, at: Date.now() });
    if (c.summary.title === "New conversation") {
      c.summary.title = text.length > 40 ? `${text.slice(0, 40)}…` : text;
    }
    c.summary.updatedAt = Date.now();
    for (const fn of this.listeners.updated) fn({ ...c.summary });
    void this.runTurn(id, c, text);
  }

  private async streamText(id: string, c: Conv, text: string): Promise<void> {
    const messageId = newId("msg");
    const words = text.split(/(?<=\s)/);
    for (let i = 0; i < words.length; i += 3) {
      await this.tick(this.latency ? 25 : 0);
      this.emit(id, { type: "textDelta", messageId, text: words.slice(i, i + 3).join("") });
    }
    this.emit(id, { type: "assistantMessage", messageId, text });
    c.items.push({ type: "assistant", id: messageId, text, status: "complete", at: Date.now() });
  }

  private async runTurn(id: string, c: Conv, text: string): Promise<void> {
    const turnId = newId("turn");
    c.cancelled = false;
    this.emit(id, { type: "turnStarted", conversationId: id, turnId });
    await this.tick();
    const reply = replyFor(text);
    await this.streamText(id, c, reply.before);
    if (!reply.request || c.cancelled) {
      this.emit(id, { type: "turnEnded", turnId, status: c.cancelled ? "cancelled" : "done", error: null });
      return;
    }
    const req = requestFor(text);
    c.pending.push(req);
    c.items.push({ type: "approval", request: req, state: "pending", decidedBy: null, reason: null, userEdited: false });
    this.emit(id, { type: "approvalRequested", ...req });
    this.announcePending();
    const decided = await new Promise<{ decision: Decision } | null>((resolve) => c.waiters.set(req.approvalId, resolve));
    if (!decided) {
      c.pending = c.pending.filter((p) => p.approvalId !== req.approvalId);
      this.emit(id, { type: "approvalExpired", approvalId: req.approvalId, reason: "the turn was cancelled before a decision" });
      this.announcePending();
      this.emit(id, { type: "turnEnded", turnId, status: "cancelled", error: null });
      return;
    }
    const { decision } = decided;
    if (decision.type === "deny") {
      await this.streamText(id, c, "Understood — I won't run that. Tell me what you'd like instead.");
      this.emit(id, { type: "turnEnded", turnId, status: "done", error: null });
      return;
    }
    const code = decision.type === "editAndApprove" ? decision.code : req.code;
    await this.execute(id, c, req, code, reply.outputLines);
    if (!c.cancelled) await this.streamText(id, c, reply.after);
    this.emit(id, { type: "turnEnded", turnId, status: c.cancelled ? "cancelled" : "done", error: null });
  }

  private async execute(id: string, c: Conv, req: ApprovalRequest, code: string, lines: number): Promise<void> {
    const executionId = newId("exec");
    const number = c.items.filter((i) => i.type === "execution").length + 1;
    this.emit(id, { type: "executionStarted", executionId, number, approvalId: req.approvalId, language: req.language, code });
    const started = Date.now();
    let stdout = "";
    for (let i = 1; i <= lines && !c.cancelled; i++) {
      const line = `row ${i}: region=${["north", "south", "east", "west"][i % 4]} total=${(i * 137.5).toFixed(2)}\n`;
      stdout += line;
      this.emit(id, { type: "executionOutput", executionId, stream: "stdout", text: line });
      if (i % 10 === 0) {
        this.emit(id, {
          type: "executionResources", executionId,
          cpuPercent: 35 + ((i * 7) % 50), memoryBytes: (40 + ((i * 3) % 60)) * 1024 * 1024, pids: 3,
        });
        await this.tick(this.latency ? 40 : 0);
      }
    }
    const warn = "warning: 3 rows had an empty 'region' and were skipped\n";
    this.emit(id, { type: "executionOutput", executionId, stream: "stderr", text: warn });
    this.logs.set(executionId, stdout + warn);
    const durationMs = Math.max(Date.now() - started, 412);
    const ended = {
      executionId, exitCode: c.cancelled ? 137 : 0, durationMs, timedOut: false, cancelled: c.cancelled,
      oomKilled: false, peakMemoryBytes: 98 * 1024 * 1024, truncated: false, logFile: `logs/${executionId}.log`,
    };
    this.emit(id, { type: "executionEnded", ...ended, quotaExceeded: null });
    c.items.push({ type: "execution", number, approvalId: req.approvalId, language: req.language, code, stdout, stderr: warn, interrupted: false, ...ended, images: c.cancelled ? [] : ["chart.svg"] });
    if (!c.cancelled) {
      const file: WorkspaceEntry = { path: "chart.svg", size: 2048, modifiedMs: Date.now(), kind: "image", changedByLastRun: true };
      c.files = [file, ...c.files.filter((f) => f.path !== file.path).map((f) => ({ ...f, changedByLastRun: false }))];
      this.emitExecutionFiles({ conversationId: id, executionId, files: [file] });
    }
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
    if (path.includes("..")) throw "That path leaves the workspace.";
    return `data:image/svg+xml;base64,${btoa(chartSvg())}`;
  }

  async readRunImage(executionId: string, path: string): Promise<RunImage> {
    this.log("readRunImage", executionId, path);
    for (const c of this.convs.values()) {
      const run = c.items.find((i) => i.type === "execution" && i.executionId === executionId);
      if (!run || run.type !== "execution") continue;
      if (!run.images.includes(path)) throw `refused to open "${path}": it is not an image this run wrote`;
      if (!c.files.some((f) => f.path === path)) return { state: "gone" };
      return { state: "shown", dataUrl: `data:image/svg+xml;base64,${btoa(chartSvg())}` };
    }
    throw `no execution ${executionId}`;
  }

  async readLog(executionId: string, stream: OutputStream, offset: number, length: number): Promise<LogChunk> {
    this.log("readLog", executionId, stream, offset, length);
    const full = stream === "stderr" ? "warning: 3 rows skipped\n".repeat(40) : this.logs.get(executionId) ?? Array.from({ length: 4000 }, (_, i) => `row ${i + 1}: region=${["north", "south", "east", "west"][i % 4]} amount=${(i * 13.75).toFixed(2)}\n`).join("");
    const text = full.slice(offset, offset + length);
    return { text, offset, nextOffset: offset + text.length, totalBytes: full.length };
  }

  async openWorkspaceFolder(id: string): Promise<FolderOpening> {
    this.log("openWorkspaceFolder", id);
    const path = `/home/you/.local/share/ironclaw/workspaces/${id}`;
    if (this.scenario !== "nofilemanager") return { path, opened: true };
    return {
      path,
      opened: false,
      problem: "No file manager opened this folder: the system has no application set up to open folders, or it failed to start. Copy the path below and open it in your file manager or a terminal.",
      detail: 'Launcher "xdg-open" "' + path + '" failed with ExitStatus(unix_wait_status(768))',
    };
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
    return {
      historyDamage: {
        path: "/home/me/.local/share/ironclaw/history.sqlite3",
        problem: "database disk image is malformed",
        backup: "/home/me/.local/share/ironclaw/history.sqlite3.corrupt-1795555000000",
        notADatabase: false,
      },
    };
  }

  async startFreshHistory(): Promise<RecoveryOutcome> {
    this.log("startFreshHistory");
    this.damaged = false;
    this.convs.clear();
    return { backup: "/home/me/.local/share/ironclaw/history.sqlite3.corrupt-1795555000000", conversations: 0, messages: 0, executions: 0, incomplete: false, summary: "Started a fresh, empty history." };
  }

  async recoverHistory(): Promise<RecoveryOutcome> {
    this.log("recoverHistory");
    this.damaged = false;
    const n = this.convs.size;
    return { backup: "/home/me/.local/share/ironclaw/history.sqlite3.corrupt-1795555000000", conversations: n, messages: n * 2, executions: 0, incomplete: true, summary: `Recovered ${n} conversations and ${n * 2} messages; some parts of the damaged file could not be read.` };
  }

  async startupNotices(): Promise<StartupNotice[]> {
    this.log("startupNotices");
    if (this.scenario !== "notices" || this.noticesShown) return [];
    this.noticesShown = true;
    return [{ kind: "historyMissing", message: "history is empty but the audit log lists 72 entries for 9 conversations; the history may have been deleted or replaced" }];
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
}
