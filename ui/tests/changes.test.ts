import { describe, expect, it } from "vitest";
import { changeDetailView } from "../src/views/changes";

const PNG = "data:image/png;base64,iVBORw0KGgo=";

describe("a changed file's detail", () => {
  it("shows an image before and after, and a new image beside 'nothing'", () => {
    const both = changeDetailView({ path: "plot.png", change: "modified", before: { kind: "image", dataUrl: PNG }, after: { kind: "image", dataUrl: PNG }, diff: [], unavailable: null });
    const imgs = [...both.querySelectorAll("img")];
    expect(imgs.map((i) => i.alt)).toEqual(["Before image", "After image"]);
    expect(imgs[0]?.getAttribute("src")).toBe(PNG);
    const added = changeDetailView({ path: "plot.png", change: "added", before: { kind: "absent" }, after: { kind: "image", dataUrl: PNG }, diff: [], unavailable: null });
    expect(added.querySelector("figure")?.textContent).toBe("Beforenothing");
    expect(added.querySelectorAll("img")).toHaveLength(1);
  });

  it("says what a side was when it is not shown: a link (never followed), binary, too large", () => {
    const el = changeDetailView({ path: "latest", change: "modified", before: { kind: "link", target: "/etc/passwd" }, after: { kind: "tooLarge", bytes: 50 << 20 }, diff: [], unavailable: null });
    expect(el.textContent).toContain("a link to /etc/passwd");
    expect(el.textContent).toContain("too large to show here");
    expect(el.querySelector("img")).toBeNull();
  });

  it("code in a diff is text, never markup", () => {
    const el = changeDetailView({ path: "x.html", change: "modified", before: { kind: "text", text: "" }, after: { kind: "text", text: "" }, diff: [{ kind: "added", text: "<img src=x onerror=alert(1)>" }], unavailable: null });
    expect(el.querySelector("img")).toBeNull();
    expect(el.textContent).toContain("+ <img src=x onerror=alert(1)>");
  });

  it("a checkpoint that was dropped says why nothing is shown", () => {
    const el = changeDetailView({ path: "a", change: "modified", before: { kind: "absent" }, after: { kind: "absent" }, diff: [], unavailable: "run r can no longer be undone: its checkpoint was dropped" });
    expect(el.textContent).toBe("Not shown: run r can no longer be undone: its checkpoint was dropped");
  });
});

describe("a reopened run whose checkpoint was dropped", () => {
  it("says it can no longer be undone, and why, instead of offering Undo", async () => {
    const { ExecutionCell } = await import("../src/views/cell");
    const cell = ExecutionCell.fromHistory(
      {
        type: "execution", executionId: "e-old", number: 3, approvalId: "a-old", language: "python", code: "x = 1",
        stdout: "", stderr: "", exitCode: 0, durationMs: 5, timedOut: false, cancelled: false, oomKilled: false,
        interrupted: false, truncated: false, logFile: null, images: [], changes: [{ path: "big.bin", change: "modified" }],
        undoable: false, notUndoable: "its checkpoint was dropped to keep the undo history within its size cap (Settings → Undo history)", undone: false, changesUnknown: null,
      },
      { stop() {}, openLog() {}, undo() {}, redo() {}, rewind() {}, detail: () => Promise.reject(new Error("none")) },
    );
    document.body.append(cell.el);
    const status = cell.el.querySelector('[data-testid="cell-undo-status"]')?.textContent ?? "";
    expect(status).toBe("Cannot be undone: its checkpoint was dropped to keep the undo history within its size cap (Settings → Undo history)");
    expect(cell.el.querySelector<HTMLButtonElement>('[data-testid="cell-undo"]')?.hidden).toBe(true);
    expect(cell.el.querySelector<HTMLButtonElement>('[data-testid="cell-rewind"]')?.hidden).toBe(true);
    cell.el.remove();
  });
});

describe("a run whose changes could not be recorded", () => {
  it("never says how many files changed, offers to put back the state before it, and no redo", async () => {
    const { ChangesStrip } = await import("../src/views/changes");
    const undone: Array<[string, boolean]> = [];
    const strip = new ChangesStrip(
      "e-1",
      [],
      { undoable: true, undone: false, notUndoable: null, changesUnknown: "could not read \"invoice\u202etxt.exe\": no room" },
      { undo: (id, force) => undone.push([id, force]), redo() {}, rewind() {}, detail: () => Promise.reject(new Error("none")) },
    );
    document.body.append(strip.el);
    const q = (id: string) => strip.el.querySelector<HTMLElement>(`[data-testid="${id}"]`);
    expect(q("cell-changes-summary")?.textContent).toBe("Changes not recorded");
    expect(q("cell-changes-summary")?.textContent).not.toMatch(/\d/);
    // The reason names a file the sandbox chose: shown inert, never reordered.
    expect(q("cell-undo-status")?.textContent).not.toContain("\u202e");
    expect(q("cell-undo-status")?.textContent).toContain("U+202E");
    const button = q("cell-undo") as HTMLButtonElement;
    expect(button.hidden).toBe(false);
    expect(button.textContent).toBe("Put back as before this run");
    button.click();
    expect(undone).toEqual([["e-1", false]]);
    strip.undone();
    expect((q("cell-redo") as HTMLButtonElement).hidden).toBe(true);
    strip.el.remove();
  });
});

describe("an opened change", () => {
  it("is brought into view, not left below the fold", async () => {
    const { ChangesStrip } = await import("../src/views/changes");
    const shown: Element[] = [];
    const original = Element.prototype.scrollIntoView;
    Element.prototype.scrollIntoView = function (this: Element) {
      shown.push(this);
    };
    try {
      const strip = new ChangesStrip(
        "e-2",
        [{ path: "notes.txt", change: "modified" }],
        { undoable: true, undone: false, notUndoable: null },
        {
          undo() {}, redo() {}, rewind() {},
          detail: async () => ({ path: "notes.txt", change: "modified", before: { kind: "text", text: "a\n" }, after: { kind: "text", text: "b\n" }, diff: [{ kind: "removed", text: "a" }, { kind: "added", text: "b" }], unavailable: null }),
        },
      );
      document.body.append(strip.el);
      strip.el.querySelector<HTMLButtonElement>('[data-testid="cell-change"]')!.click();
      await new Promise((r) => setTimeout(r, 10));
      const detail = strip.el.querySelector('[data-testid="change-detail"]');
      expect(detail).not.toBeNull();
      expect(shown).toContain(detail);
      strip.el.remove();
    } finally {
      Element.prototype.scrollIntoView = original;
    }
  });
});
