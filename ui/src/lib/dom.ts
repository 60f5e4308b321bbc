// Small typed DOM helpers. No framework: the views own their nodes and update them directly,
// which is what keeps streaming output cheap and the DOM bounded.

type Attrs = Record<string, string | number | boolean | null | undefined>;
type Child = Node | string | null | undefined | false;

/** Creates an element. `testid` maps to `data-testid`; `false`/`null` attributes are skipped. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs & { testid?: string } = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    const attr = name === "testid" ? "data-testid" : name === "className" ? "class" : name;
    el.setAttribute(attr, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    parent.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  }
}

/** Looks an element up by `data-testid` within `root`. */
export function byTestId<T extends HTMLElement = HTMLElement>(root: ParentNode, id: string): T | null {
  return root.querySelector<T>(`[data-testid="${id}"]`);
}

export function on<K extends keyof HTMLElementEventMap>(
  el: EventTarget,
  type: K,
  fn: (ev: HTMLElementEventMap[K]) => void,
): () => void {
  el.addEventListener(type, fn as EventListener);
  return () => el.removeEventListener(type, fn as EventListener);
}

export function show(el: HTMLElement, visible: boolean): void {
  el.hidden = !visible;
}

/** Human size: 1536 → "1.5 KB". */
export function formatBytes(n: number): string {
  const v = Number(n);
  if (!Number.isFinite(v) || v < 0) return "–";
  if (v < 1024) return `${v} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let x = v / 1024;
  let i = 0;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return `${x < 10 ? x.toFixed(1) : Math.round(x)} ${units[i]}`;
}

export function formatDuration(ms: number): string {
  const v = Number(ms);
  if (!Number.isFinite(v)) return "–";
  if (v < 1000) return `${Math.round(v)} ms`;
  if (v < 60_000) return `${(v / 1000).toFixed(v < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(v / 60_000);
  const s = Math.round((v % 60_000) / 1000);
  return s ? `${m} min ${s} s` : `${m} min`;
}

/** Accepts RFC 3339 strings or ms since the epoch (the bindings allow either). */
export function formatTime(at: string | number): string {
  const d = new Date(typeof at === "number" ? at : Date.parse(at));
  if (Number.isNaN(d.getTime())) return "";
  const now = new Date();
  if (d.toDateString() === now.toDateString()) {
    return d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  }
  return d.toLocaleDateString(undefined, { month: "short", day: "numeric" });
}

const NON_ASCII = /[^\x00-\x7f]/;

/** Number of bytes `s` takes as UTF-8, without allocating an encoded copy. */
export function utf8Length(s: string): number {
  // Output is mostly ASCII: a native regex scan beats the JS loop by far.
  if (!NON_ASCII.test(s)) return s.length;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
