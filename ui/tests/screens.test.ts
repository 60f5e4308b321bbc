import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeBackend } from "../src/api/fake";
import { App } from "../src/app";
import { all, q, settle } from "./helpers";

let root: HTMLElement;
beforeEach(() => {
  root = document.createElement("div");
  document.body.append(root);
});
afterEach(() => document.body.replaceChildren());

async function startApp(scenario = "") {
  const api = new FakeBackend({ scenario });
  const app = new App(api, root);
  await app.start();
  await settle();
  return { api, app };
}

describe("composer, cells, log viewer, rules", () => {
  it("Enter sends, Shift+Enter does not", async () => {
    const { api } = await startApp();
    const input = q<HTMLTextAreaElement>("message-input");
    input.value = "line one";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", shiftKey: true, cancelable: true }));
    await settle();
    expect(api.calls.filter((c) => c.name === "sendMessage")).toHaveLength(0);
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", cancelable: true }));
    await settle();
    expect(api.calls.filter((c) => c.name === "sendMessage").map((c) => c.args)).toEqual([["conv-sales", "line one", []]]);
    expect(input.value).toBe("");
  });

  it("a running cell's stop button cancels the conversation's turn", async () => {
    const { api } = await startApp("live");
    await new Promise((r) => setTimeout(r, 120));
    await settle();
    const running = all("execution-cell").find((c) => c.dataset["state"] === "running");
    expect(running).toBeTruthy();
    expect(q("cell-cpu", running).textContent).toMatch(/%$/);
    expect(q("cell-memory", running).textContent).toMatch(/MB$/);
    q<HTMLButtonElement>("cell-stop", running).click();
    await settle();
    expect(api.calls.filter((c) => c.name === "cancel").map((c) => c.args)).toEqual([["conv-sales"]]);
  });

  it("the log viewer pages through read_log and closes", async () => {
    const { api } = await startApp();
    q<HTMLButtonElement>("cell-full-log").click();
    await settle();
    const viewer = q("log-viewer");
    expect(q("log-text", viewer).textContent).toMatch(/^row 1: /);
    const first = api.calls.filter((c) => c.name === "readLog");
    expect(first[0]?.args).toEqual(["exec-seed-1", "stdout", 0, 256 * 1024]);
    const before = q("log-text").textContent?.length ?? 0;
    q<HTMLButtonElement>("log-more").click();
    await settle();
    const reads = api.calls.filter((c) => c.name === "readLog");
    expect(reads[1]?.args.slice(1, 3)).toEqual(["stdout", before]);
    expect(q("log-text").textContent?.endsWith("\n")).toBe(true);
    expect(q<HTMLButtonElement>("log-more").hidden).toBe(true); // the whole log is shown
    // The error stream's log is one click away, from its start.
    q<HTMLButtonElement>("log-stream-stderr").click();
    await settle();
    expect(api.calls.filter((c) => c.name === "readLog").at(-1)?.args).toEqual(["exec-seed-1", "stderr", 0, 256 * 1024]);
    expect(q("log-text").textContent).toMatch(/^warning: 3 rows skipped\n/);
    expect(q("log-stream-stderr").getAttribute("aria-pressed")).toBe("true");
    q<HTMLButtonElement>("log-close").click();
    expect(all("log-viewer")).toHaveLength(0);
  });

  it("always-allow creates a rule that Settings lists and revokes", async () => {
    const { api } = await startApp();
    q<HTMLTextAreaElement>("message-input").value = "total it";
    q<HTMLButtonElement>("send-button").click();
    await settle(40);
    q<HTMLButtonElement>("always-allow-button").click();
    await settle(60);
    q<HTMLButtonElement>("open-settings").click();
    await settle();
    const rules = all("rule-item");
    expect(rules).toHaveLength(1);
    q<HTMLButtonElement>("rule-revoke", rules[0]).click();
    await settle();
    expect(api.calls.find((c) => c.name === "revokeRule")?.args[0]).toBe("conv-sales");
    expect(all("rule-item")).toHaveLength(0);
  });

  it("Settings shows what undo keeps and saves its caps in GiB, empty meaning sandbox.yaml's", async () => {
    const { api } = await startApp();
    q<HTMLButtonElement>("open-settings").click();
    await settle();
    const keep = q<HTMLInputElement>("settings-undo-keep");
    const total = q<HTMLInputElement>("settings-undo-keep-total");
    expect(keep.value).toBe("");
    expect(keep.placeholder).toBe("2 (sandbox.yaml)");
    expect(q("settings-undo-usage").textContent).toContain("300 MB of file copies now, at most 2.0 GB per conversation and 10 GB in all");
    keep.value = "0.5";
    q<HTMLButtonElement>("settings-save").click();
    await settle();
    const saved = api.calls.filter((c) => c.name === "saveSettings").at(-1)?.args[0] as { undoKeepBytes: number | null; undoKeepTotalBytes: number | null };
    expect(saved.undoKeepBytes).toBe(512 * 1024 * 1024);
    expect(saved.undoKeepTotalBytes).toBeNull();
    expect(q("settings-undo-usage").textContent).toContain("at most 512 MB per conversation");
    // Nonsense is refused before anything is saved.
    total.value = "-3";
    const before = api.calls.filter((c) => c.name === "saveSettings").length;
    q<HTMLButtonElement>("settings-save").click();
    await settle();
    expect(api.calls.filter((c) => c.name === "saveSettings").length).toBe(before);
    expect(root.querySelector(".settings-status")?.textContent).toContain("All conversations: enter a size in GiB");
  });

  it("the pending badge counts approvals across conversations and hides at zero", async () => {
    await startApp("approval");
    const badge = q("pending-badge");
    expect(badge.hidden).toBe(false);
    expect(badge.textContent).toBe("1");
    q<HTMLInputElement>("deny-reason").value = "no";
    q<HTMLButtonElement>("deny-button").click();
    await settle(20);
    expect(q("pending-badge").hidden).toBe(true);
  });

  it("an approval that expires (its turn was cancelled) closes the dialog and marks the card expired", async () => {
    const { api } = await startApp();
    q<HTMLTextAreaElement>("message-input").value = "total it";
    q<HTMLButtonElement>("send-button").click();
    await settle(40);
    const id = q("approval-dialog").dataset["approvalId"]!;
    const conv = api.convs.get("conv-sales")!;
    conv.pending = [];
    api.emit("conv-sales", { type: "approvalExpired", approvalId: id, reason: "the turn was cancelled before a decision" });
    await settle(10);
    expect(all("approval-dialog")).toHaveLength(0);
    expect(root.querySelector(`.approval-card[data-approval-id="${id}"]`)?.getAttribute("data-state")).toBe("expired");
  });
});
