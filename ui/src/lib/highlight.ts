// Syntax highlighting with highlight.js core and only the languages the sandbox runs (python,
// bash) plus JSON. Loaded on first use so it never delays the first paint.

import type { HLJSApi } from "highlight.js";
import { markInvisible, originalText } from "./invisible";

let hljs: HLJSApi | null = null;
let loading: Promise<HLJSApi> | null = null;
const waiting = new Set<HTMLElement>();

const ALIASES: Record<string, string> = {
  python: "python", py: "python", python3: "python",
  bash: "bash", sh: "bash", shell: "bash", zsh: "bash", console: "bash",
  json: "json",
};

export function languageFor(lang: string | null | undefined): string | null {
  return ALIASES[(lang ?? "").toLowerCase()] ?? null;
}

export function loadHighlighter(): Promise<HLJSApi> {
  if (hljs) return Promise.resolve(hljs);
  loading ??= Promise.all([
    import("highlight.js/lib/core"),
    import("highlight.js/lib/languages/python"),
    import("highlight.js/lib/languages/bash"),
    import("highlight.js/lib/languages/json"),
  ]).then(([core, python, bash, json]) => {
    const api = core.default;
    api.registerLanguage("python", python.default);
    api.registerLanguage("bash", bash.default);
    api.registerLanguage("json", json.default);
    hljs = api;
    for (const el of waiting) if (el.isConnected) paint(api, el);
    waiting.clear();
    return api;
  });
  return loading;
}

// The same code is highlighted twice on the way to its output: in the approval dialog, then in
// the run's cell once it is approved. The second comes from here (1–2 ms for 16 lines of Python
// in the app's web view, on the path from the Approve click to the first output painted).
// Keyed by the exact text, so a cell never shows another code's colours.
const RECENT_MAX = 8;
const RECENT_MAX_CHARS = 16 * 1024;
const recent = new Map<string, string>();

function highlighted(api: HLJSApi, text: string, language: string): string {
  const key = `${language}\u0000${text}`;
  const hit = recent.get(key);
  if (hit !== undefined) {
    // Most recently used last, so the oldest goes first.
    recent.delete(key);
    recent.set(key, hit);
    return hit;
  }
  const html = api.highlight(text, { language, ignoreIllegals: true }).value;
  if (text.length <= RECENT_MAX_CHARS) {
    recent.set(key, html);
    if (recent.size > RECENT_MAX) recent.delete(recent.keys().next().value as string);
  }
  return html;
}

function paint(api: HLJSApi, code: HTMLElement): void {
  const language = languageFor(code.getAttribute("data-lang"));
  if (!language || code.hasAttribute("data-highlighted")) return;
  // highlight.js escapes the source; its output holds only its own <span class="hljs-…">.
  // The source is the real text (already-marked invisible characters turned back), and they
  // are marked again afterwards, so highlighting never makes one invisible.
  const text = originalText(code);
  code.innerHTML = highlighted(api, text, language);
  markInvisible(code);
  code.setAttribute("data-highlighted", "");
  code.classList.add("hljs");
}

/** Highlights one code element now if the highlighter is loaded, else as soon as it is. */
export function highlightElement(code: HTMLElement): void {
  if (hljs) {
    paint(hljs, code);
    return;
  }
  waiting.add(code);
  void loadHighlighter().catch((e: unknown) => console.warn("highlighter unavailable", e));
}

/** Highlights every `code[data-lang]` under `root`. */
export function highlightIn(root: ParentNode): void {
  for (const code of root.querySelectorAll<HTMLElement>("pre > code[data-lang]")) {
    if (languageFor(code.getAttribute("data-lang"))) highlightElement(code);
  }
}
