// Characters a person cannot see, or that reorder how text is displayed ("Trojan Source"),
// shown as marked tokens such as ⟨U+202E⟩. The approval hash covers the real text; this makes
// sure the person reads every code point of it. The table mirrors the one definition in
// src-tauri/crates/ironclaw-risk/src/visible.rs (controls except \n and \t, DEL, C1, every
// format character, tag characters, spaces other than U+0020, variation selectors); keep them
// in step. One U+FE0E/U+FE0F right after an emoji-like symbol and a zero-width joiner between
// two of them are how emoji are written and are left alone.

const HIDDEN_RANGES: readonly (readonly [number, number])[] = [
  [0x00, 0x08], [0x0b, 0x1f], [0x7f, 0x9f], [0xa0, 0xa0], [0xad, 0xad], [0x034f, 0x034f],
  [0x0600, 0x0605], [0x061c, 0x061c], [0x06dd, 0x06dd], [0x070f, 0x070f], [0x0890, 0x0891],
  [0x08e2, 0x08e2], [0x115f, 0x1160], [0x1680, 0x1680], [0x17b4, 0x17b5], [0x180b, 0x180f],
  [0x2000, 0x200f], [0x2028, 0x202f], [0x205f, 0x206f], [0x2800, 0x2800],
  [0x3000, 0x3000], [0x3164, 0x3164], [0xfe00, 0xfe0f], [0xfeff, 0xfeff], [0xffa0, 0xffa0],
  [0xfff9, 0xfffb], [0x110bd, 0x110bd], [0x110cd, 0x110cd], [0x13430, 0x1343f],
  [0x1bca0, 0x1bca3], [0x1d173, 0x1d17a], [0xe0000, 0xe007f], [0xe0100, 0xe01ef],
];

const EMOJI_LIKE: readonly (readonly [number, number])[] = [
  [0xa9, 0xa9], [0xae, 0xae], [0x203c, 0x203c], [0x2049, 0x2049], [0x2122, 0x2122],
  [0x2139, 0x2139], [0x2194, 0x21aa], [0x231a, 0x23ff], [0x24c2, 0x24c2], [0x25aa, 0x27bf],
  [0x2934, 0x2935], [0x2b05, 0x2b55], [0x3030, 0x3030], [0x303d, 0x303d], [0x3297, 0x3297],
  [0x3299, 0x3299], [0x1f000, 0x1faff],
];

const inRanges = (cp: number, ranges: readonly (readonly [number, number])[]): boolean =>
  ranges.some(([lo, hi]) => cp >= lo && cp <= hi);

/** True for a code point that is invisible, a control, or reorders text (before the emoji exceptions). */
export function isHidden(cp: number): boolean {
  return inRanges(cp, HIDDEN_RANGES);
}

/** `⟨U+202E⟩`: how a hidden code point is shown. */
export function token(cp: number): string {
  return `⟨U+${cp.toString(16).toUpperCase().padStart(4, "0")}⟩`;
}

export interface Piece {
  text: string;
  /** Set when this piece is one hidden code point. */
  hidden?: number;
}

/** Splits `text` into visible runs and single hidden code points. */
export function split(text: string): Piece[] {
  const cps = Array.from(text, (c) => c.codePointAt(0) ?? 0);
  const pieces: Piece[] = [];
  let run = "";
  cps.forEach((cp, i) => {
    let hidden = isHidden(cp);
    if (hidden && (cp === 0xfe0e || cp === 0xfe0f)) {
      hidden = !(i > 0 && inRanges(cps[i - 1]!, EMOJI_LIKE));
    } else if (hidden && cp === 0x200d) {
      const left = cps[i - 1] === 0xfe0f ? cps[i - 2] : cps[i - 1];
      const right = cps[i + 1];
      hidden = !(left !== undefined && right !== undefined && inRanges(left, EMOJI_LIKE) && inRanges(right, EMOJI_LIKE));
    }
    if (!hidden) {
      run += String.fromCodePoint(cp);
      return;
    }
    if (run) pieces.push({ text: run });
    run = "";
    pieces.push({ text: String.fromCodePoint(cp), hidden: cp });
  });
  if (run) pieces.push({ text: run });
  return pieces;
}

/** The hidden code points of `text`, in order (repeats included). */
export function hiddenCodePoints(text: string): number[] {
  return split(text).flatMap((p) => (p.hidden === undefined ? [] : [p.hidden]));
}

const hex = (cp: number): string => `\\u{${cp.toString(16)}}`;
/** Any code point of the table: most text has none and is returned as it is, unsplit. */
const ANY_HIDDEN = new RegExp(`[${HIDDEN_RANGES.map(([lo, hi]) => `${hex(lo)}-${hex(hi)}`).join("")}]`, "u");

/** `text` with each hidden code point replaced by its token, as plain text. */
export function renderVisible(text: string): string {
  if (!ANY_HIDDEN.test(text)) return text;
  return split(text)
    .map((p) => (p.hidden === undefined ? p.text : token(p.hidden)))
    .join("");
}

const MARK_CLASS = "invisible-char";

/**
 * Replaces each hidden code point in the text under `root` with a marked, styled token
 * (`<span class="invisible-char" data-codepoint="202E">⟨U+202E⟩</span>`). Returns how many were
 * marked. Idempotent: tokens already marked are left as they are.
 */
export function markInvisible(root: Node): number {
  const doc = root.ownerDocument ?? document;
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!(n.parentElement?.classList.contains(MARK_CLASS) ?? false)) texts.push(n as Text);
  }
  let marked = 0;
  for (const node of texts) {
    const pieces = split(node.data);
    if (!pieces.some((p) => p.hidden !== undefined)) continue;
    const frag = doc.createDocumentFragment();
    for (const p of pieces) {
      if (p.hidden === undefined) {
        frag.append(doc.createTextNode(p.text));
        continue;
      }
      const name = token(p.hidden);
      const span = doc.createElement("span");
      span.className = MARK_CLASS;
      span.dataset["codepoint"] = p.hidden.toString(16).toUpperCase();
      span.title = `invisible or direction-changing character ${name.slice(1, -1)}`;
      span.textContent = name;
      frag.append(span);
      marked += 1;
    }
    node.replaceWith(frag);
  }
  return marked;
}

/** The real text under `el`: marked tokens turned back into the code points they stand for. */
export function originalText(el: Node): string {
  let out = "";
  for (const child of Array.from(el.childNodes)) {
    if (child instanceof HTMLElement && child.classList.contains(MARK_CLASS)) {
      out += String.fromCodePoint(parseInt(child.dataset["codepoint"] ?? "", 16) || 0xfffd);
    } else if (child.nodeType === Node.TEXT_NODE) {
      out += (child as Text).data;
    } else {
      out += originalText(child);
    }
  }
  return out;
}

/** A sentence for the dialog, or null when every character is visible. */
export function describeHidden(text: string): string | null {
  const cps = hiddenCodePoints(text);
  if (cps.length === 0) return null;
  const distinct = [...new Set(cps)];
  const names = distinct.slice(0, 8).map((cp) => token(cp).slice(1, -1));
  if (distinct.length > 8) names.push(`and ${distinct.length - 8} more`);
  const noun = cps.length === 1 ? "character" : "characters";
  return `This code contains ${cps.length} invisible or direction-changing ${noun} (${names.join(" ")}), shown marked as ⟨U+…⟩. What runs includes them: read the code as marked, not as it would normally appear.`;
}

/**
 * Text the sandbox chose (a file name, a line of output, a note that quotes one) as an element:
 * every hidden code point marked, and the whole isolated (`<bdi>`), so nothing in it can
 * reorder the text around it or draw what it does not say.
 */
export function sandboxText(text: string, className = "sandbox-text"): HTMLElement {
  const el = document.createElement("bdi");
  el.className = className;
  el.textContent = text;
  markInvisible(el);
  return el;
}
