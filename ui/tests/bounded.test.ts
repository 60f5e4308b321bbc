import { describe, expect, it } from "vitest";
import { BoundedText, HEAD_CHARS, TAIL_CHARS } from "../src/lib/bounded";
import { flushFrames } from "../src/lib/frame";
import { ExecutionCell } from "../src/views/cell";

describe("bounded output", () => {
  it("keeps 100 MB of output to head + tail and counts exactly what it hides", () => {
    const cell = new ExecutionCell("exec-1", "python", "print('x' * 10**8)", { stop() {}, openLog() {}, undo() {}, redo() {}, rewind() {}, detail: () => Promise.reject(new Error("none")) });
    document.body.append(cell.el);
    const line = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-\n"; // 64 bytes
    const chunk = line.repeat(1024); // 64 KiB
    const chunks = (100 * 1024 * 1024) / chunk.length;
    for (let i = 0; i < chunks; i++) {
      cell.output("stdout", chunk);
      if (i % 64 === 0) flushFrames(); // frames come along while output streams
    }
    cell.output("stdout", "THE END\n");
    flushFrames();

    const pre = cell.el.querySelector<HTMLElement>('[data-testid="cell-stdout"]');
    const rendered = pre?.textContent ?? "";
    const total = 100 * 1024 * 1024 + 8;
    expect(rendered.length).toBeLessThan(HEAD_CHARS + TAIL_CHARS + 200);
    expect(rendered.startsWith(line)).toBe(true);
    expect(rendered.endsWith("THE END\n")).toBe(true);
    expect(cell.stdout.text.totalBytes).toBe(total);
    expect(cell.stdout.text.hiddenBytes).toBe(total - HEAD_CHARS - TAIL_CHARS);
    const note = cell.el.querySelector<HTMLElement>('[data-testid="cell-collapsed-note"]');
    expect(note?.hidden).toBe(false);
    expect(note?.textContent).toBe(`${((total - HEAD_CHARS - TAIL_CHARS) / 1024 / 1024).toFixed(1)} MB of output hidden`);
    expect(cell.el.querySelector<HTMLElement>('[data-testid="cell-full-log"]')?.hidden).toBe(false);
    // The DOM of the stream is three nodes however much arrived.
    expect(pre?.childNodes.length).toBe(3);
    cell.dispose();
  });

  it("counts hidden bytes as UTF-8", () => {
    const t = new BoundedText(4, 4);
    t.push("ab");
    t.push("cdé€xyz1234"); // head "abcd"; middle "é€xyz" (2+3+3 bytes); tail "1234"
    t.fold();
    expect(t.head).toBe("abcd");
    expect(t.tail).toBe("1234");
    expect(t.hiddenBytes).toBe(8);
    expect(t.totalBytes).toBe(16); // a b c d é(2) €(3) x y z 1 2 3 4
  });

  it("shows everything and no note when output is small", () => {
    const cell = new ExecutionCell("exec-2", "bash", "echo hi", { stop() {}, openLog() {}, undo() {}, redo() {}, rewind() {}, detail: () => Promise.reject(new Error("none")) });
    cell.output("stdout", "hi\n");
    cell.output("stderr", "warn\n");
    flushFrames();
    expect(cell.el.querySelector('[data-testid="cell-stdout"]')?.textContent).toBe("hi\n");
    expect(cell.el.querySelector('[data-testid="cell-stderr"]')?.textContent).toBe("warn\n");
    expect(cell.el.querySelector<HTMLElement>('[data-testid="cell-collapsed-note"]')?.hidden).toBe(true);
    cell.dispose();
  });

  it("finishing paints output still waiting for a frame before the final note", () => {
    const cell = new ExecutionCell("exec-4", "bash", "yes", { stop() {}, openLog() {}, undo() {}, redo() {}, rewind() {}, detail: () => Promise.reject(new Error("none")) });
    cell.output("stdout", "a".repeat(HEAD_CHARS + TAIL_CHARS + 1000));
    cell.finish({ exitCode: 0, durationMs: 1, timedOut: false, cancelled: false, oomKilled: false, truncated: false, logFile: null });
    expect(cell.stdout.text.hiddenBytes).toBe(1000);
    expect(cell.el.querySelector('[data-testid="cell-collapsed-note"]')?.textContent).toBe("1000 bytes of output hidden");
  });

  it("renders output as text, never as HTML", () => {
    const cell = new ExecutionCell("exec-3", "bash", "cat evil.html", { stop() {}, openLog() {}, undo() {}, redo() {}, rewind() {}, detail: () => Promise.reject(new Error("none")) });
    cell.output("stdout", '<img src=x onerror="window.__pwned=1"><button data-testid="approve-button">Approve</button>');
    flushFrames();
    expect(cell.el.querySelector("img")).toBeNull();
    expect(cell.el.querySelector('.cell-output [data-testid="approve-button"]')).toBeNull();
    expect(cell.el.querySelector('[data-testid="cell-stdout"]')?.textContent).toContain("<button");
    cell.dispose();
  });

  it("maps how an execution ended to the cell state", () => {
    const mk = () => new ExecutionCell("e", "python", "x", { stop() {}, openLog() {}, undo() {}, redo() {}, rewind() {}, detail: () => Promise.reject(new Error("none")) });
    const base = { durationMs: 5, timedOut: false, cancelled: false, oomKilled: false, truncated: false, logFile: null, quotaExceeded: null as string | null };
    const cases: [Partial<typeof base> & { exitCode: number }, string][] = [
      [{ exitCode: 0 }, "ok"],
      [{ exitCode: 1 }, "failed"],
      [{ exitCode: 137, oomKilled: true }, "oomKilled"],
      [{ exitCode: 124, timedOut: true }, "timedOut"],
      [{ exitCode: 137, cancelled: true }, "cancelled"],
      [{ exitCode: 137, quotaExceeded: "[IronClaw] stopped: the workspace passed its quota of 64.0 MiB." }, "quotaExceeded"],
    ];
    for (const [ended, state] of cases) {
      const c = mk();
      c.finish({ ...base, ...ended });
      expect(c.el.getAttribute("data-state")).toBe(state);
      expect(c.el.querySelector('[data-testid="cell-exit"]')?.textContent).toBe(`exit ${ended.exitCode}`);
      const quota = c.el.querySelector<HTMLElement>('[data-testid="cell-quota"]');
      expect(quota?.hidden).toBe(!ended.quotaExceeded);
      if (ended.quotaExceeded) expect(quota?.textContent).toBe("stopped: the workspace passed its quota of 64.0 MiB.");
    }
  });
});
