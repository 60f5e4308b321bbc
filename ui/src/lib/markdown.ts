// Model output is untrusted. It goes markdown → marked → DOMPurify (strict allowlist) → DOM.
// Nothing it produces can look like or act as one of our controls: no buttons/forms/inputs, no
// event handlers, no style, no id/class/data-testid. Links keep their URL in `data-href` and are
// opened only by a click handler that re-checks the scheme; images load only from data: URLs.

import createDOMPurify, { type Config } from "dompurify";
import { Marked } from "marked";
import { highlightIn } from "./highlight";

const ALLOWED_TAGS = [
  "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "b", "i", "del", "s",
  "code", "pre", "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th",
  "td", "img", "span", "sup", "sub", "kbd", "details", "summary",
];
// `data-lang` (our fence language) is the only data attribute, added by our own renderer.
const ALLOWED_ATTR = ["href", "title", "alt", "src", "start", "align", "data-lang"];
const SAFE_LINK = /^(https?:|mailto:)/i;
const SCRIPT_URL = /^\s*(javascript|vbscript|data):/i;
const SAFE_IMAGE = /^data:image\/(png|jpeg|gif|webp);base64,[a-z0-9+/=\s]+$/i;

const marked = new Marked({ gfm: true, breaks: false, async: false });
marked.use({
  renderer: {
    code({ text, lang }) {
      const language = (lang ?? "").trim().split(/\s+/)[0]?.toLowerCase() ?? "";
      const pre = document.createElement("pre");
      const code = document.createElement("code");
      if (language) code.setAttribute("data-lang", language);
      code.textContent = text;
      pre.appendChild(code);
      return pre.outerHTML + "\n";
    },
  },
});

let purifier: ReturnType<typeof createDOMPurify> | null = null;

function getPurifier(): ReturnType<typeof createDOMPurify> {
  if (purifier) return purifier;
  const p = createDOMPurify(window);
  p.addHook("afterSanitizeAttributes", (node) => {
    const el = node as Element;
    if (el.nodeType !== 1) return;
    // No attribute keeps a script-ish URL as text either (a title or alt that says "javascript:").
    for (const name of el.getAttributeNames()) {
      if (name !== "href" && name !== "src" && SCRIPT_URL.test(el.getAttribute(name) ?? "")) el.removeAttribute(name);
    }
    if (el.tagName === "A") {
      const href = (el.getAttribute("href") ?? "").trim();
      el.removeAttribute("href");
      if (SAFE_LINK.test(href)) {
        el.setAttribute("data-href", href);
        el.setAttribute("title", href);
      } else if (href) {
        el.setAttribute("data-blocked-link", "");
      }
    } else if (el.tagName === "IMG") {
      const src = (el.getAttribute("src") ?? "").trim();
      if (!SAFE_IMAGE.test(src)) {
        el.removeAttribute("src");
        el.setAttribute("data-blocked-image", "");
      }
    }
  });
  purifier = p;
  return p;
}

const CONFIG: Config = {
  ALLOWED_TAGS,
  ALLOWED_ATTR,
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  ALLOW_UNKNOWN_PROTOCOLS: false,
  FORBID_TAGS: ["style", "script", "iframe", "form", "input", "button", "object", "embed", "textarea", "select", "svg", "math", "dialog"],
  FORBID_ATTR: ["style", "id", "class", "name", "data-testid", "tabindex", "autofocus"],
  KEEP_CONTENT: true,
};

/** Markdown → a sanitized fragment. Only our own hooks add attributes after sanitizing. */
export function renderMarkdown(source: string): DocumentFragment {
  const html = marked.parse(source) as string;
  const frag = getPurifier().sanitize(html, { ...CONFIG, RETURN_DOM_FRAGMENT: true }) as DocumentFragment;
  for (const img of frag.querySelectorAll("img[data-blocked-image]")) {
    const alt = img.getAttribute("alt") ?? "";
    const note = document.createElement("span");
    note.className = "md-blocked-image";
    note.textContent = alt ? `[image not loaded: ${alt}]` : "[image not loaded]";
    img.replaceWith(note);
  }
  for (const a of frag.querySelectorAll("a[data-href]")) a.className = "md-link";
  highlightIn(frag);
  return frag;
}

/** Renders into `target`, replacing its content. */
export function renderMarkdownInto(target: HTMLElement, source: string): void {
  target.replaceChildren(renderMarkdown(source));
}

/** The URL a sanitized link may open, or null. Re-checked at click time, never trusted. */
export function linkTarget(el: Element): string | null {
  const href = el.getAttribute("data-href");
  if (!href || !SAFE_LINK.test(href.trim())) return null;
  try {
    const u = new URL(href.trim());
    if (u.protocol !== "http:" && u.protocol !== "https:" && u.protocol !== "mailto:") return null;
    return u.href;
  } catch {
    return null;
  }
}

/** Delegated click handling for rendered markdown: links go to `open` (the system browser). */
export function wireLinks(root: HTMLElement, open: (url: string) => void): void {
  root.addEventListener("click", (ev) => {
    const a = (ev.target as Element | null)?.closest?.("a");
    if (!a || !root.contains(a)) return;
    ev.preventDefault();
    const url = linkTarget(a);
    if (url) open(url);
  });
}
