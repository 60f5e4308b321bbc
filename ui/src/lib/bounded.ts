// A stream's rendered text stays bounded however much arrives: the first HEAD chars and the last
// TAIL chars are kept, everything between is only counted. Chunks are queued as they come and
// folded in once per frame, so 100 MB of output costs one pass over the text and a few DOM writes.
import { renderVisible } from "./invisible";

import { inNextFrame } from "./frame";
import { utf8Length } from "./dom";

export const HEAD_CHARS = 64 * 1024;
export const TAIL_CHARS = 64 * 1024;

export class BoundedText {
  head = "";
  tail = "";
  /** Bytes (UTF-8) neither in head nor tail. */
  hiddenBytes = 0;
  totalBytes = 0;
  /** Bumped by every fold that changed something; views compare it to skip idle repaints. */
  version = 0;
  private pending: string[] = [];
  private pendingChars = 0;
  private tailBytes = 0;

  constructor(
    private readonly headMax = HEAD_CHARS,
    private readonly tailMax = TAIL_CHARS,
  ) {}

  push(text: string): void {
    if (!text) return;
    this.pending.push(text);
    this.pendingChars += text.length;
    // A flood between two frames is folded early so queued text never piles up in memory.
    if (this.pendingChars > 4 * 1024 * 1024) this.fold();
  }

  get hasPending(): boolean {
    return this.pending.length > 0;
  }

  /** Folds queued chunks in. Returns whether anything changed. */
  fold(): boolean {
    if (this.pending.length === 0) return false;
    const chunks = this.pending;
    this.pending = [];
    this.pendingChars = 0;
    for (let chunk of chunks) {
      this.totalBytes += utf8Length(chunk);
      if (this.head.length < this.headMax && this.hiddenBytes === 0 && this.tail.length === 0) {
        const room = this.headMax - this.head.length;
        this.head += chunk.slice(0, room);
        chunk = chunk.slice(room);
        if (!chunk) continue;
      }
      if (chunk.length >= this.tailMax) {
        // The whole old tail and the front of this chunk fall into the hidden middle.
        const cut = chunk.length - this.tailMax;
        this.hiddenBytes += this.tailBytes + utf8Length(chunk.slice(0, cut));
        this.tail = chunk.slice(cut);
        this.tailBytes = utf8Length(this.tail);
        continue;
      }
      this.tail += chunk;
      this.tailBytes += utf8Length(chunk);
      // Trim only when the tail is well past its size, so trimming stays amortised O(1).
      if (this.tail.length > this.tailMax * 2) this.trimTail();
    }
    if (this.tail.length > this.tailMax) this.trimTail();
    this.version++;
    return true;
  }

  private trimTail(): void {
    const cut = this.tail.length - this.tailMax;
    const dropped = this.tail.slice(0, cut);
    const droppedBytes = utf8Length(dropped);
    this.hiddenBytes += droppedBytes;
    this.tailBytes -= droppedBytes;
    this.tail = this.tail.slice(cut);
  }

  get renderedChars(): number {
    return this.head.length + this.tail.length;
  }
}

/**
 * Renders a BoundedText into a `<pre>`: head text, a separator saying how much is hidden, tail
 * text. Only text nodes are written (never HTML).
 */
export class BoundedView {
  readonly el: HTMLPreElement;
  private readonly headNode = document.createTextNode("");
  private readonly gap: HTMLSpanElement;
  private readonly tailNode = document.createTextNode("");
  private readonly render = () => this.paint();
  private painted = -1;

  constructor(
    readonly text: BoundedText,
    testid: string,
    private readonly onChange: () => void = () => {},
  ) {
    this.el = document.createElement("pre");
    this.el.setAttribute("data-testid", testid);
    this.el.className = "cell-stream";
    this.gap = document.createElement("span");
    this.gap.className = "cell-gap";
    this.gap.hidden = true;
    this.el.append(this.headNode, this.gap, this.tailNode);
    this.el.hidden = true;
  }

  push(chunk: string): void {
    this.text.push(chunk);
    inNextFrame(this.render);
  }

  /** Writes the current state now (also what the frame job does). */
  paint(): void {
    const t = this.text;
    t.fold();
    if (t.version === this.painted) return;
    this.painted = t.version;
    // The code's output: nothing in it may hide, reorder the page's text or pass for ours. A
    // carriage return is a line break here, as a <pre> shows it anyway (progress bars).
    this.headNode.data = renderVisible(t.head.replace(/\r\n?/g, "\n"));
    this.tailNode.data = renderVisible(t.tail.replace(/\r\n?/g, "\n"));
    this.gap.hidden = t.hiddenBytes === 0;
    this.gap.textContent = t.hiddenBytes ? `\n⋯ ${formatHidden(t.hiddenBytes)} hidden ⋯\n` : "";
    this.el.hidden = t.totalBytes === 0;
    this.onChange();
  }
}

export function formatHidden(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
