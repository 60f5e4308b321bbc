// One execution: the code that ran, live stdout/stderr (bounded), exit status, duration, live
// CPU/memory gauges, a stop button, inline images and a link to the full log.

import type { AgentEvent } from "../bindings/AgentEvent";
import type { HistoryItem } from "../bindings/HistoryItem";
import { BoundedText, BoundedView, formatHidden } from "../lib/bounded";
import { formatBytes, formatDuration, h } from "../lib/dom";
import { highlightElement } from "../lib/highlight";
import { sandboxText } from "../lib/invisible";
import type { FileChange } from "../bindings/FileChange";
import { type ChangesState, ChangesStrip, type UndoActions } from "./changes";

type Ended = Extract<AgentEvent, { type: "executionEnded" }>;
type Resources = Extract<AgentEvent, { type: "executionResources" }>;
type ExecutionItem = Extract<HistoryItem, { type: "execution" }>;

export type CellState = "running" | "ok" | "failed" | "cancelled" | "timedOut" | "oomKilled" | "quotaExceeded";

export interface CellActions extends UndoActions {
  stop(): void;
  openLog(executionId: string): void;
}

export function endState(e: { exitCode: number | null; timedOut: boolean; cancelled: boolean; oomKilled: boolean; quotaExceeded?: string | null }): CellState {
  if (e.quotaExceeded) return "quotaExceeded";
  if (e.cancelled) return "cancelled";
  if (e.timedOut) return "timedOut";
  if (e.oomKilled) return "oomKilled";
  return e.exitCode === 0 ? "ok" : "failed";
}

const STATE_LABEL: Record<CellState, string> = {
  running: "Running",
  ok: "Finished",
  failed: "Failed",
  cancelled: "Stopped",
  timedOut: "Timed out",
  oomKilled: "Out of memory",
  quotaExceeded: "Workspace quota",
};

const MAX_IMAGES = 12;

export class ExecutionCell {
  readonly el: HTMLElement;
  readonly stdout: BoundedView;
  readonly stderr: BoundedView;
  readonly status: HTMLElement;
  private readonly exit: HTMLElement;
  private readonly duration: HTMLElement;
  private readonly cpu: HTMLElement;
  private readonly cpuBar: HTMLElement;
  private readonly memory: HTMLElement;
  private readonly memBar: HTMLElement;
  private readonly gauges: HTMLElement;
  private readonly stopBtn: HTMLButtonElement;
  private readonly note: HTMLElement;
  private readonly fullLog: HTMLButtonElement;
  private readonly images: HTMLElement;
  private readonly netLine: HTMLElement = h("div", { testid: "cell-network", className: "cell-network", hidden: true });
  private readonly quotaLine: HTMLElement = h("div", { testid: "cell-quota", className: "cell-quota", hidden: true });
  private readonly started = performance.now();
  private timer: ReturnType<typeof setInterval> | null = null;
  private hasLog = false;
  private imageCount = 0;
  private readonly outputBox: HTMLElement;
  /** "Run #3": warnings about an altered interpreter name runs by this number. */
  private readonly numberLabel: HTMLElement = h("span", { testid: "cell-number", className: "cell-number", hidden: true });
  /** While running, the output box follows the newest text unless the person scrolled up. */
  private follow = true;

  constructor(
    readonly executionId: string,
    language: string,
    code: string,
    private readonly actions: CellActions,
    private readonly memoryLimit: number | null = null,
  ) {
    const codeEl = h("code", { "data-lang": language === "mcp" ? "json" : language }, code);
    this.stdout = new BoundedView(new BoundedText(), "cell-stdout", () => this.painted());
    this.stderr = new BoundedView(new BoundedText(), "cell-stderr", () => this.painted());
    this.stderr.el.classList.add("stderr");
    // A live region: a screen reader hears "Running" → "Finished"; the output itself is not one.
    this.status = h("span", { className: "cell-status", role: "status" }, STATE_LABEL.running);
    this.exit = h("span", { testid: "cell-exit", className: "cell-exit", hidden: true });
    this.duration = h("span", { testid: "cell-duration", className: "cell-duration" }, "0.0 s");
    this.cpuBar = h("span", { className: "gauge-fill" });
    this.memBar = h("span", { className: "gauge-fill" });
    this.cpu = h("span", { testid: "cell-cpu", className: "gauge-value" }, "–");
    this.memory = h("span", { testid: "cell-memory", className: "gauge-value" }, "–");
    this.gauges = h(
      "div",
      { className: "cell-gauges", "aria-label": "Resource use" },
      h("span", { className: "gauge" }, h("span", { className: "gauge-label" }, "CPU"), h("span", { className: "gauge-track" }, this.cpuBar), this.cpu),
      h("span", { className: "gauge" }, h("span", { className: "gauge-label" }, "Memory"), h("span", { className: "gauge-track" }, this.memBar), this.memory),
    );
    this.stopBtn = h("button", { testid: "cell-stop", className: "btn btn-small btn-danger-quiet", type: "button" }, "Stop");
    this.stopBtn.addEventListener("click", () => {
      this.stopBtn.disabled = true;
      this.stopBtn.textContent = "Stopping…";
      this.actions.stop();
    });
    this.note = h("span", { testid: "cell-collapsed-note", className: "cell-note", hidden: true });
    this.fullLog = h("button", { testid: "cell-full-log", className: "btn-link", type: "button", hidden: true }, "Open full log");
    this.fullLog.addEventListener("click", () => this.actions.openLog(this.executionId));
    this.images = h("div", { className: "cell-images" });
    // Not a live region: a screen reader must not read a flood of output aloud.
    // Focusable, so a keyboard can scroll long output; named, so a screen reader says what it is.
    this.outputBox = h("div", { className: "cell-output", "aria-live": "off", tabindex: 0, role: "region", "aria-label": `Output of this ${language} run` }, this.stdout.el, this.stderr.el);
    this.outputBox.addEventListener("scroll", () => {
      const o = this.outputBox;
      this.follow = o.scrollHeight - o.scrollTop - o.clientHeight < 24;
    });

    this.el = h(
      "section",
      { testid: "execution-cell", className: "cell", "data-execution-id": executionId, "data-state": "running" },
      h(
        "header",
        { className: "cell-head" },
        this.numberLabel,
        h("span", { className: "cell-lang" }, language === "mcp" ? "MCP tool call" : language),
        this.status,
        this.exit,
        h("span", { className: "spacer" }),
        this.gauges,
        this.duration,
        this.stopBtn,
      ),
      h("pre", { testid: "cell-code", className: "cell-code", tabindex: 0, "aria-label": language === "mcp" ? "MCP tool call that was made" : `${language} code that ran` }, codeEl),
      this.outputBox,
      this.images,
      this.netLine,
      this.quotaLine,
      h("footer", { className: "cell-foot" }, this.note, this.fullLog),
    );
    highlightElement(codeEl);
    // Folded (older) cells open again with a click on their header.
    this.el.querySelector("header")?.addEventListener("click", (ev) => {
      if ((ev.target as Element).closest("button")) return;
      if (this.el.getAttribute("data-collapsed") === "true") this.el.setAttribute("data-collapsed", "false");
    });
    this.timer = setInterval(() => {
      this.duration.textContent = formatDuration(performance.now() - this.started);
    }, 250);
  }

  /** The hosts this run reached and was refused (allowlist mode). Host names are text only. */
  network(allowed: string[], denied: string[]): void {
    const parts: (string | HTMLElement)[] = ["Network: "];
    if (allowed.length) parts.push("reached ", h("code", {}, allowed.join(", ")));
    if (allowed.length && denied.length) parts.push(" · ");
    if (denied.length) parts.push("blocked ", h("code", { className: "denied" }, denied.join(", ")));
    this.netLine.replaceChildren(...parts);
    this.netLine.hidden = false;
  }

  /** Shows the run's place in its conversation (from 1), as warnings refer to it. */
  /** What the run changed in the workspace, with Undo. */
  strip: ChangesStrip | null = null;

  showChanges(changes: FileChange[], state: ChangesState): void {
    if (changes.length === 0 && !state.undone && !state.changesUnknown) return;
    this.strip?.el.remove();
    this.strip = new ChangesStrip(this.executionId, changes, state, this.actions);
    this.el.append(this.strip.el);
  }

  /** "Run #3", as the person sees it. */
  get label(): string {
    return this.numberLabel.hidden ? "a later run" : this.numberLabel.textContent ?? "a later run";
  }

  numbered(n: number): this {
    this.numberLabel.textContent = `Run #${n}`;
    this.numberLabel.hidden = false;
    return this;
  }

  /** A finished execution from history. */
  static fromHistory(item: ExecutionItem, actions: CellActions): ExecutionCell {
    const cell = new ExecutionCell(item.executionId, item.language, item.code, actions).numbered(item.number);
    cell.stdout.push(item.stdout);
    cell.stderr.push(item.stderr);
    if (item.exitCode === null || item.interrupted) {
      // Never finished (IronClaw stopped mid-run): shown as stopped, not running forever.
      cell.finish({ ...item, cancelled: true });
      cell.status.textContent = "Interrupted";
    } else {
      cell.finish({ ...item });
    }
    cell.stdout.paint();
    cell.stderr.paint();
    cell.showChanges(item.changes, { undoable: item.undoable, undone: item.undone, notUndoable: item.notUndoable, changesUnknown: item.changesUnknown });
    return cell;
  }

  get state(): CellState {
    return this.el.getAttribute("data-state") as CellState;
  }

  output(stream: "stdout" | "stderr", text: string): void {
    (stream === "stderr" ? this.stderr : this.stdout).push(text);
  }

  resources(r: Pick<Resources, "cpuPercent" | "memoryBytes">): void {
    const cpu = Math.max(0, Number(r.cpuPercent));
    const mem = Number(r.memoryBytes);
    this.cpu.textContent = `${cpu.toFixed(0)}%`;
    this.cpuBar.style.width = `${Math.min(100, cpu)}%`;
    this.memory.textContent = formatBytes(mem);
    const limit = this.memoryLimit ?? 512 * 1024 * 1024;
    this.memBar.style.width = `${Math.min(100, (mem / limit) * 100)}%`;
  }

  finish(e: Pick<Ended, "timedOut" | "cancelled" | "oomKilled" | "truncated" | "logFile"> & { exitCode: number | null; durationMs: number | null; peakMemoryBytes?: number; quotaExceeded?: string | null }): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    // Output still queued for the next frame belongs before the final state and note.
    this.stdout.paint();
    this.stderr.paint();
    const state = endState(e);
    this.el.setAttribute("data-state", state);
    this.status.textContent = STATE_LABEL[state];
    this.exit.hidden = e.exitCode === null;
    this.exit.textContent = e.exitCode === null ? "" : `exit ${e.exitCode}`;
    this.duration.textContent = e.durationMs === null ? "–" : formatDuration(e.durationMs);
    this.stopBtn.hidden = true;
    // The core's sentence (what passed which limit, what to do), as text: never markup.
    this.quotaLine.hidden = !e.quotaExceeded;
    this.quotaLine.textContent = e.quotaExceeded ? e.quotaExceeded.replace(/^\[IronClaw\] /, "") : "";
    if (e.peakMemoryBytes !== undefined && Number(e.peakMemoryBytes) > 0) {
      this.memory.textContent = `peak ${formatBytes(Number(e.peakMemoryBytes))}`;
    } else if (this.cpu.textContent === "–") {
      this.gauges.hidden = true;
    }
    this.cpuBar.style.width = "0%";
    this.hasLog = Boolean(e.logFile) || e.truncated;
    this.updateNote();
  }

  /** An image the run wrote, as a data: URL the backend produced for a workspace file. */
  addImage(path: string, dataUrl: string): void {
    if (!/^data:image\/(png|jpeg|gif|webp|svg\+xml);base64,/i.test(dataUrl)) return;
    if (this.imageCount >= MAX_IMAGES || this.hasImage(path)) return;
    this.imageCount++;
    const img = h("img", { testid: "cell-image", className: "cell-image", alt: path, title: path, "data-path": path });
    img.src = dataUrl;
    this.images.append(h("figure", { "data-path": path }, img, h("figcaption", {}, sandboxText(path))));
  }

  /** An image the run wrote that cannot be shown any more (deleted, or now refused). */
  addMissingImage(path: string, why: string): void {
    if (this.imageCount >= MAX_IMAGES || this.hasImage(path)) return;
    this.imageCount++;
    this.images.append(
      h("figure", { testid: "cell-image-missing", className: "cell-image-missing", "data-path": path },
        h("div", { className: "cell-image-placeholder", role: "img", "aria-label": `${path}: ${why}` }, why),
        h("figcaption", {}, sandboxText(path))),
    );
  }

  private hasImage(path: string): boolean {
    return [...this.images.children].some((f) => f.getAttribute("data-path") === path);
  }

  private painted(): void {
    this.updateNote();
    if (this.follow && this.state === "running") this.outputBox.scrollTop = this.outputBox.scrollHeight;
  }

  private updateNote(): void {
    const hidden = this.stdout.text.hiddenBytes + this.stderr.text.hiddenBytes;
    this.note.hidden = hidden === 0;
    this.note.textContent = hidden ? `${formatHidden(hidden)} of output hidden` : "";
    this.fullLog.hidden = !(hidden > 0 || this.hasLog);
  }

  dispose(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
