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

function paint(api: HLJSApi, code: HTMLElement): void {
  const language = languageFor(code.getAttribute("data-lang"));
  if (!language || code.hasAttribute("data-highlighted")) return;
  // highlight.js escapes the source; its output holds only its own <span class="hljs-…">.
  // The source is the real text (already-marked invisible characters turned back), and they
  // are marked again afterwards, so highlighting never makes one invisible.
  const text = originalText(code);
  code.innerHTML = api.highlight(text, { language, ignoreIllegals: true }).value;
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
