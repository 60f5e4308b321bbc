import { afterEach, describe, expect, it, vi } from "vitest";
import { highlightElement, loadHighlighter } from "../src/lib/highlight";

function codeBlock(text: string, lang = "python"): HTMLElement {
  const code = document.createElement("code");
  code.setAttribute("data-lang", lang);
  code.textContent = text;
  return code;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("syntax highlighting", () => {
  it("highlights the approved code once for its dialog and its run's cell", async () => {
    const api = await loadHighlighter();
    const spy = vi.spyOn(api, "highlight");
    const text = "import csv\nfor row in csv.reader(open('a.csv')):\n    print(row)  # each\n";
    const dialog = codeBlock(text);
    const cell = codeBlock(text);
    highlightElement(dialog);
    highlightElement(cell);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(cell.innerHTML).toBe(dialog.innerHTML);
    expect(cell.querySelector(".hljs-keyword")?.textContent).toBe("import");
    expect(cell.textContent).toBe(text);
  });

  it("never shows one code's colours for another, however alike", async () => {
    const api = await loadHighlighter();
    const spy = vi.spyOn(api, "highlight");
    const a = codeBlock("x = 1  # first\n");
    const b = codeBlock("x = 1  # firsT\n");
    const sh = codeBlock("x = 1  # first\n", "bash");
    for (const el of [a, b, sh]) highlightElement(el);
    expect(spy).toHaveBeenCalledTimes(3);
    expect(a.textContent).toBe("x = 1  # first\n");
    expect(b.textContent).toBe("x = 1  # firsT\n");
    expect(sh.innerHTML).not.toBe(a.innerHTML);
  });

  it("keeps invisible characters marked when the highlighting is reused", async () => {
    await loadHighlighter();
    const text = "print('ok')  # \u202Ereversed\n";
    const first = codeBlock(text);
    const second = codeBlock(text);
    highlightElement(first);
    highlightElement(second);
    for (const el of [first, second]) {
      expect(Array.from(el.querySelectorAll(".invisible-char")).map((m) => m.textContent)).toEqual(["⟨U+202E⟩"]);
    }
  });

  it("remembers only the last few codes", async () => {
    const api = await loadHighlighter();
    const texts = Array.from({ length: 9 }, (_, i) => `print(${i} * 'evict')\n`);
    for (const t of texts) highlightElement(codeBlock(t));
    const spy = vi.spyOn(api, "highlight");
    highlightElement(codeBlock(texts[8]!));
    expect(spy).toHaveBeenCalledTimes(0);
    highlightElement(codeBlock(texts[0]!));
    expect(spy).toHaveBeenCalledTimes(1);
  });
});
