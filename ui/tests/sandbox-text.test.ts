// One rule for text the sandbox chose, wherever it reaches a person: the table is the Unicode
// list (the same file the Rust side's test reads), and names, output and notes are shown with
// every hidden code point marked and nothing able to reorder the text around it.
import { describe, expect, it } from "vitest";
import { isHidden, renderVisible, sandboxText } from "../src/lib/invisible";
import { BoundedText, BoundedView } from "../src/lib/bounded";
import LIST from "../../src-tauri/crates/ironclaw-risk/src/hidden-code-points.txt?raw";


describe("the table", () => {
  it("is the Unicode list of controls, format characters and blanks, code point for code point", () => {
    const listed = new Set<number>();
    for (const line of LIST.split("\n")) {
      if (!line || line.startsWith("#")) continue;
      const [lo, hi] = line.split("..").map((x: string) => parseInt(x, 16));
      for (let cp = lo!; cp <= (hi ?? lo!); cp++) listed.add(cp);
    }
    expect(listed.size).toBeGreaterThan(300);
    const wrong: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      if (isHidden(cp) !== listed.has(cp)) wrong.push(cp.toString(16));
    }
    expect(wrong).toEqual([]);
  });
});

describe("text the sandbox chose", () => {
  const NAME = "invoice\u202etxt.exe";

  it("a name is isolated and its override shown, so it never reads as invoiceexe.txt", () => {
    const el = sandboxText(NAME);
    expect(el.tagName).toBe("BDI");
    expect(el.textContent).toBe("invoice⟨U+202E⟩txt.exe");
    expect(el.querySelector(".invisible-char")?.getAttribute("data-codepoint")).toBe("202E");
  });

  it("run output shows escape sequences and overrides as tokens, and carriage returns as line breaks", () => {
    const view = new BoundedView(new BoundedText(), "cell-stdout");
    view.text.push(`\x1b[2J\x1b]52;c;ZXZpbA==\x07ok\r\n${NAME}\rnext`);
    view.paint();
    expect(view.el.textContent).toBe(`⟨U+001B⟩[2J⟨U+001B⟩]52;c;ZXZpbA==⟨U+0007⟩ok\ninvoice⟨U+202E⟩txt.exe\nnext`);
  });

  it("plain text is returned as it is", () => {
    const text = "plain café ✓ 👨‍👩‍👧 ⚠️\n\tend";
    expect(renderVisible(text)).toBe(text);
  });
});
