import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { splitNote } from "../src/views/attach";
import { all, key, q, settle, startFakeApp } from "./helpers";

let root: HTMLElement;

beforeEach(() => {
  root = document.createElement("div");
  document.body.append(root);
});
afterEach(() => document.body.replaceChildren());

const startApp = () => startFakeApp(root);

describe("files in", () => {
  it("a drop shows the overlay while hovering, then chips; the next message tells the model once", async () => {
    const { api } = await startApp();
    api.hoverFiles(true);
    expect(q("drop-overlay").hidden).toBe(false);
    api.hoverFiles(false);
    expect(q("drop-overlay").hidden).toBe(true);

    api.dropFiles(["data.csv", "project"]);
    await settle(20);
    const call = api.calls.find((c) => c.name === "attachDropped");
    expect(call?.args[1]).toBe(1);
    const chips = all("attached-chip").map((c) => c.textContent);
    expect(chips).toEqual(["data.csv · 2.0 KiB", "project/ · 12 files, 3.0 MiB1 left out"]);
    expect(q("attach-status").hidden).toBe(true);

    q<HTMLTextAreaElement>("message-input").value = "sum the csv";
    q<HTMLButtonElement>("send-button").click();
    await settle(20);
    // The page sends what was typed; the backend puts the note ahead of it, once.
    const id = api.calls.find((c) => c.name === "sendMessage")!.args[0] as string;
    const told = api.convs.get(id)!.items.filter((i) => i.type === "user").map((i) => (i as { text: string }).text);
    expect(told[told.length - 1]).toMatch(/^\[The person attached files; they are in your workspace now: \/workspace\/data\.csv; \/workspace\/project\/\.\]\n\nsum the csv$/);
    expect(all("attached-chip")).toHaveLength(0);
    const users = all("message").filter((m) => m.dataset["role"] === "user");
    const last = users[users.length - 1]!;
    expect(q("message-attached", last).textContent).toBe("Attached: data.csv, project/");
    expect(q("message-body", last).textContent).toBe("sum the csv");
  });

  it("a drop claimed twice is refused with what to do, and nothing is attached", async () => {
    const { api } = await startApp();
    api.dropFiles(["a.txt"]);
    await settle(20);
    const id = api.calls.find((c) => c.name === "attachDropped")!.args[0] as string;
    await expect(api.attachDropped(id, 1, () => {})).rejects.toMatchObject({ message: expect.stringContaining("drop them again") });
  });

  it("the Attach button offers files or a folder; Escape closes its menu", async () => {
    const { api } = await startApp();
    const button = q<HTMLButtonElement>("attach-button");
    button.click();
    expect(button.getAttribute("aria-expanded")).toBe("true");
    key(q("attach-folder"), "Escape");
    expect(button.getAttribute("aria-expanded")).toBe("false");
    button.click();
    q<HTMLButtonElement>("attach-folder").click();
    await settle(20);
    expect(api.calls.find((c) => c.name === "attachPicked")?.args[1]).toBe(true);
    expect(all("attached-chip").map((c) => c.textContent?.startsWith("project/"))).toEqual([true]);
  });

  it("names with bidi overrides are shown as tokens, never live", async () => {
    const { api } = await startApp();
    api.dropFiles(["invoice\u202Efdp.exe"]);
    await settle(20);
    const chip = all("attached-chip")[0]!;
    expect(chip.textContent).toContain("invoice⟨U+202E⟩fdp.exe");
    expect(chip.textContent).not.toMatch(/\u202E/);
  });

  it("a reopened conversation shows the note it sent apart from what was typed", () => {
    expect(splitNote("[The person attached files; they are in your workspace now: /workspace/a.csv (2.0 KiB).]\n\nhi")).toEqual({
      note: "Attached: /workspace/a.csv (2.0 KiB).",
      typed: "hi",
    });
    expect(splitNote("[not a note]\n\nhi")).toEqual({ note: null, typed: "[not a note]\n\nhi" });
  });
});
