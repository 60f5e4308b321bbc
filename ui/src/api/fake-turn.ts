// One turn of the fake backend: the assistant streams its text, asks to run code, waits for the
// decision and then streams the run's output, as the real core's session does.

import type { FileChange } from "../bindings/FileChange";
import type { AgentEvent } from "../bindings/AgentEvent";
import type { ApprovalPolicy } from "../bindings/ApprovalPolicy";
import type { ApprovalRequest } from "../bindings/ApprovalRequest";
import type { ConversationSummary } from "../bindings/ConversationSummary";
import type { Decision } from "../bindings/Decision";
import type { ExecutionFilesEvent } from "../bindings/ExecutionFilesEvent";
import type { HistoryItem } from "../bindings/HistoryItem";
import type { InstructionFile } from "../bindings/InstructionFile";
import type { SessionRuleView } from "../bindings/SessionRuleView";
import type { WorkspaceEntry } from "../bindings/WorkspaceEntry";
import { replyFor, requestFor, thinkingFor } from "./fake-script";

/** One conversation as the fake keeps it. */
export interface Conv {
  summary: ConversationSummary;
  items: HistoryItem[];
  pending: ApprovalRequest[];
  policy: ApprovalPolicy;
  rules: SessionRuleView[];
  files: WorkspaceEntry[];
  waiters: Map<string, (d: { decision: Decision } | null) => void>;
  cancelled: boolean;
  /** The model switched to, if any. */
  model?: { provider: string; model: string };
}

let counter = 0;
export const newId = (p: string) => `${p}-${Date.now().toString(36)}-${(++counter).toString(36)}`;

/** What a turn needs from the backend around it. */
export interface TurnHost {
  /** The delay of each simulated step; 0 runs steps on the next macrotask. */
  readonly latency: number;
  emit(conversationId: string, e: AgentEvent): void;
  tick(ms: number): Promise<void>;
  /** Tells listeners how many approvals wait, after `pending` changed. */
  announcePending(): void;
  filesChanged(e: ExecutionFilesEvent): void;
  /** Keeps a finished run's output for `readLog`. */
  keepLog(executionId: string, text: string): void;
}

/** Streams an assistant message a few words at a time, then records it. */
export async function streamText(host: TurnHost, id: string, c: Conv, text: string, thinking = ""): Promise<void> {
  const messageId = newId("msg");
  if (thinking) host.emit(id, { type: "reasoningDelta", messageId, text: thinking });
  const words = text.split(/(?<=\s)/);
  for (let i = 0; i < words.length; i += 3) {
    await host.tick(host.latency ? 25 : 0);
    host.emit(id, { type: "textDelta", messageId, text: words.slice(i, i + 3).join("") });
  }
  host.emit(id, { type: "assistantMessage", messageId, text });
  c.items.push({ type: "assistant", id: messageId, text, status: "complete", at: Date.now(), model: c.model ? `${c.model.provider}:${c.model.model}` : null });
}

/** The demo workspace's AGENTS.md, as the core reports it. */
export const DEMO_INSTRUCTIONS: InstructionFile[] = [
  { scope: "workspace", name: "AGENTS.md", path: "~/.local/share/ironclaw/workspaces/demo/AGENTS.md", bytes: 412, cut: false, problem: null },
];

/** Answers one user message; a request to run code waits in `c.waiters` for `decide` or `cancel`. */
export async function runTurn(host: TurnHost, id: string, c: Conv, text: string): Promise<void> {
  const turnId = newId("turn");
  c.cancelled = false;
  host.emit(id, { type: "turnStarted", conversationId: id, turnId });
  await host.tick(host.latency);
  const reply = replyFor(text);
  // As the core does at a session's first turn when the workspace has an AGENTS.md.
  if (c.items.length <= 1) host.emit(id, { type: "instructions", files: DEMO_INSTRUCTIONS });
  // As the core does before each model request: how full the window is.
  host.emit(id, { type: "contextUsage", model: "qwen2.5-coder:7b", usedTokens: 2300 + 900 * c.items.length, windowTokens: 16384, windowSource: "as the provider reports it" });
  await streamText(host, id, c, reply.before, thinkingFor(text));
  if (!reply.request || c.cancelled) {
    host.emit(id, { type: "turnEnded", turnId, status: c.cancelled ? "cancelled" : "done", error: null });
    return;
  }
  const req = requestFor(text);
  c.pending.push(req);
  c.items.push({ type: "approval", request: req, state: "pending", decidedBy: null, reason: null, userEdited: false });
  host.emit(id, { type: "approvalRequested", ...req });
  host.announcePending();
  const decided = await new Promise<{ decision: Decision } | null>((resolve) => c.waiters.set(req.approvalId, resolve));
  if (!decided) {
    c.pending = c.pending.filter((p) => p.approvalId !== req.approvalId);
    host.emit(id, { type: "approvalExpired", approvalId: req.approvalId, reason: "the turn was cancelled before a decision" });
    host.announcePending();
    host.emit(id, { type: "turnEnded", turnId, status: "cancelled", error: null });
    return;
  }
  const { decision } = decided;
  if (decision.type === "deny") {
    await streamText(host, id, c, "Understood — I won't run that. Tell me what you'd like instead.");
    host.emit(id, { type: "turnEnded", turnId, status: "done", error: null });
    return;
  }
  const code = decision.type === "editAndApprove" ? decision.code : req.code;
  await execute(host, id, c, req, code, reply.outputLines);
  if (!c.cancelled) await streamText(host, id, c, reply.after);
  host.emit(id, { type: "turnEnded", turnId, status: c.cancelled ? "cancelled" : "done", error: null });
}

/** A run of approved code: streamed rows, resource samples, a warning, and a chart it writes. */
async function execute(host: TurnHost, id: string, c: Conv, req: ApprovalRequest, code: string, lines: number): Promise<void> {
  const executionId = newId("exec");
  const number = c.items.filter((i) => i.type === "execution").length + 1;
  host.emit(id, { type: "executionStarted", executionId, number, approvalId: req.approvalId, language: req.language, code });
  const started = Date.now();
  let stdout = "";
  for (let i = 1; i <= lines && !c.cancelled; i++) {
    const line = `row ${i}: region=${["north", "south", "east", "west"][i % 4]} total=${(i * 137.5).toFixed(2)}\n`;
    stdout += line;
    host.emit(id, { type: "executionOutput", executionId, stream: "stdout", text: line });
    if (i % 10 === 0) {
      host.emit(id, {
        type: "executionResources", executionId,
        cpuPercent: 35 + ((i * 7) % 50), memoryBytes: (40 + ((i * 3) % 60)) * 1024 * 1024, pids: 3,
      });
      await host.tick(host.latency ? 40 : 0);
    }
  }
  const warn = "warning: 3 rows had an empty 'region' and were skipped\n";
  host.emit(id, { type: "executionOutput", executionId, stream: "stderr", text: warn });
  host.keepLog(executionId, stdout + warn);
  const durationMs = Math.max(Date.now() - started, 412);
  const ended = {
    executionId, exitCode: c.cancelled ? 137 : 0, durationMs, timedOut: false, cancelled: c.cancelled,
    oomKilled: false, peakMemoryBytes: 98 * 1024 * 1024, truncated: false, logFile: `logs/${executionId}.log`,
  };
  const changes: FileChange[] = c.cancelled ? [] : [{ path: "chart.svg", change: "added" }, { path: "sales.csv", change: "modified" }];
  host.emit(id, { type: "executionEnded", ...ended, quotaExceeded: null, changes, notUndoable: null, changesUnknown: null });
  c.items.push({ type: "execution", number, approvalId: req.approvalId, language: req.language, code, stdout, stderr: warn, interrupted: false, ...ended, images: c.cancelled ? [] : ["chart.svg"], changes, undoable: changes.length > 0, notUndoable: null, undone: false, changesUnknown: null });
  if (!c.cancelled) {
    const file: WorkspaceEntry = { path: "chart.svg", size: 2048, modifiedMs: Date.now(), kind: "image", changedByLastRun: true };
    c.files = [file, ...c.files.filter((f) => f.path !== file.path).map((f) => ({ ...f, changedByLastRun: false }))];
    host.filesChanged({ conversationId: id, executionId, files: [file] });
  }
}
