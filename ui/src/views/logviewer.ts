// The full log of one execution, read from disk a page at a time. The view itself stays bounded:
// past MAX_CHARS the oldest pages are dropped from the screen (they stay in the file).

import type { Api } from "../api";
import { errorText } from "../api";
import type { OutputStream } from "../bindings/OutputStream";
import { formatBytes, h } from "../lib/dom";

const PAGE = 256 * 1024;
const MAX_CHARS = 2 * 1024 * 1024;

export class LogViewer {
  readonly el: HTMLDialogElement;
  private readonly text: HTMLElement;
  private readonly more: HTMLButtonElement;
  private readonly info: HTMLElement;
  private offset = 0;
  private total = 0;
  private dropped = 0;
  private stream: OutputStream = "stdout";
  private readonly tabs: HTMLButtonElement[];

  constructor(private readonly api: Api, private readonly executionId: string, private readonly onClose: () => void) {
    this.text = h("pre", { testid: "log-text", className: "log-text", tabindex: 0 });
    this.more = h("button", { testid: "log-more", className: "btn", type: "button" }, "Load more");
    this.more.addEventListener("click", () => void this.load());
    const close = h("button", { testid: "log-close", className: "btn", type: "button" }, "Close");
    close.addEventListener("click", () => this.close());
    this.info = h("span", { className: "muted" });
    this.tabs = (["stdout", "stderr"] as const).map((stream) => {
      const b = h("button", { testid: `log-stream-${stream}`, className: "btn btn-small btn-quiet", type: "button", "aria-pressed": stream === this.stream ? "true" : "false" }, stream === "stdout" ? "Output" : "Errors");
      b.addEventListener("click", () => void this.show(stream));
      return b;
    });
    this.el = h(
      "dialog",
      { testid: "log-viewer", className: "log-viewer", "aria-label": "Full log" },
      h("header", { className: "log-head" }, h("h2", {}, "Full log"), ...this.tabs, h("span", { className: "spacer" }), this.info),
      this.text,
      h("footer", { className: "row-end" }, this.more, close),
    );
    this.el.addEventListener("cancel", (ev) => {
      ev.preventDefault();
      this.close();
    });
    this.el.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") {
        ev.preventDefault();
        this.close();
      }
    });
  }

  async open(): Promise<void> {
    document.body.append(this.el);
    if (typeof this.el.showModal === "function") {
      try {
        this.el.showModal();
      } catch {
        this.el.setAttribute("open", "");
      }
    } else this.el.setAttribute("open", "");
    await this.load();
    this.text.focus();
  }

  /** Switches between the run's stdout and stderr logs, from the start. */
  async show(stream: OutputStream): Promise<void> {
    if (stream === this.stream) return;
    this.stream = stream;
    this.tabs.forEach((b, i) => b.setAttribute("aria-pressed", String((i === 0) === (stream === "stdout"))));
    this.offset = 0;
    this.total = 0;
    this.dropped = 0;
    this.text.textContent = "";
    await this.load();
  }

  async load(): Promise<void> {
    this.more.disabled = true;
    try {
      const chunk = await this.api.readLog(this.executionId, this.stream, this.offset, PAGE);
      this.offset = Number(chunk.nextOffset);
      this.total = Number(chunk.totalBytes);
      let shown = (this.text.textContent ?? "") + chunk.text;
      if (shown.length > MAX_CHARS) {
        this.dropped += shown.length - MAX_CHARS;
        shown = shown.slice(shown.length - MAX_CHARS);
      }
      this.text.textContent = shown;
      this.info.textContent =
        `${formatBytes(this.offset)} of ${formatBytes(this.total)}` +
        (this.dropped ? ` · first ${formatBytes(this.dropped)} scrolled out of view` : "");
      this.more.hidden = this.offset >= this.total || chunk.text.length === 0;
    } catch (e) {
      this.info.textContent = `Could not read the log: ${errorText(e)}`;
    } finally {
      this.more.disabled = false;
    }
  }

  close(): void {
    if (this.el.open && typeof this.el.close === "function") this.el.close();
    this.el.remove();
    this.onClose();
  }
}
