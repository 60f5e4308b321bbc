import { afterEach, describe, expect, it } from "vitest";
import type { Api } from "../src/api";
import type { WorkspaceEntry } from "../src/bindings/WorkspaceEntry";
import { WorkspacePanel } from "../src/views/workspace";
import { all, settle } from "./helpers";

function entry(path: string, kind: WorkspaceEntry["kind"], over: Partial<WorkspaceEntry> = {}): WorkspaceEntry {
  return { path, kind, size: 10, modifiedMs: 0, changedByLastRun: false, ...over };
}

async function panelWith(entries: WorkspaceEntry[]): Promise<WorkspacePanel> {
  const api = {
    listWorkspace: async () => entries,
    openWorkspaceFolder: async () => {},
    readWorkspaceImage: async () => "data:image/png;base64,iVBORw0KGgo=",
  } as unknown as Api;
  const panel = new WorkspacePanel(api, () => {});
  document.body.append(panel.el);
  panel.setConversation("c1");
  panel.toggle(true);
  await settle();
  return panel;
}

afterEach(() => document.body.replaceChildren());

describe("workspace panel names", () => {
  it("shows right-to-left overrides, zero-width and control characters in file names as marked tokens", async () => {
    // `rtl‮gnp.exe` renders as `rtlexe.png` when the U+202E is live.
    await panelWith([
      entry("rtl\u202Egnp.exe", "binary"),
      entry("in\u200Bvisible.txt", "text"),
      entry("bell\u0007.txt", "text"),
      entry("iso\u2066late\u2069.png", "image"),
      entry("plain.txt", "text"),
    ]);
    const names = all("workspace-name");
    const byPath = new Map(all("workspace-file").map((li, i) => [li.dataset["path"], names[i]!]));
    const rtl = byPath.get("rtl\u202Egnp.exe")!;
    expect(rtl.textContent).toBe("rtl⟨U+202E⟩gnp.exe");
    expect(rtl.querySelector(".invisible-char")?.getAttribute("data-codepoint")).toBe("202E");
    expect(byPath.get("in\u200Bvisible.txt")!.textContent).toBe("in⟨U+200B⟩visible.txt");
    expect(byPath.get("bell\u0007.txt")!.textContent).toBe("bell⟨U+0007⟩.txt");
    expect(byPath.get("iso\u2066late\u2069.png")!.textContent).toBe("iso⟨U+2066⟩late⟨U+2069⟩.png");
    expect(byPath.get("plain.txt")!.textContent).toBe("plain.txt");
    // No live bidi or invisible character anywhere in what is displayed, tooltips included.
    const live = /[\u0000-\u0008\u000B-\u001F\u200B-\u200F\u202A-\u202E\u2066-\u2069]/;
    for (const li of all("workspace-file")) {
      expect(li.textContent ?? "").not.toMatch(live);
      expect(li.getAttribute("title") ?? "").not.toMatch(live);
      for (const b of li.querySelectorAll("button")) expect(b.getAttribute("title") ?? "").not.toMatch(live);
    }
  });

  it("labels links, pipes, sockets and devices as never opened and gives them no size", async () => {
    await panelWith([
      entry("out/pipe", "fifo", { size: 0 }),
      entry("etc", "symlink", { size: 0 }),
      entry("s.sock", "socket", { size: 0 }),
      entry("null", "device", { size: 0 }),
      entry("notes.md", "text"),
    ]);
    const rows = new Map(all("workspace-file").map((li) => [li.dataset["path"], li]));
    expect(rows.get("out/pipe")!.textContent).toContain("named pipe, not opened");
    expect(rows.get("etc")!.textContent).toContain("link, not followed");
    expect(rows.get("s.sock")!.textContent).toContain("socket, not opened");
    expect(rows.get("null")!.textContent).toContain("device, not opened");
    expect(rows.get("etc")!.querySelector(".ws-size")).toBeNull();
    expect(rows.get("etc")!.querySelector("button")).toBeNull();
    expect(rows.get("notes.md")!.querySelector("[data-testid=workspace-special]")).toBeNull();
  });
});
