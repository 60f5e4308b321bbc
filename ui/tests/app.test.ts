import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FakeBackend } from "../src/api/fake";
import { App } from "../src/app";
import { all, q, settle } from "./helpers";

let root: HTMLElement;

beforeEach(() => {
  root = document.createElement("div");
  document.body.append(root);
});
afterEach(() => {
  document.body.replaceChildren();
  vi.useRealTimers();
});

async function startApp(scenario = "") {
  const api = new FakeBackend({ scenario });
  const app = new App(api, root);
  await app.start();
  await settle();
  return { api, app };
}

async function send(text: string): Promise<void> {
  q<HTMLTextAreaElement>("message-input").value = text;
  q<HTMLButtonElement>("send-button").click();
  await settle(40);
}

describe("whole screens against the fake backend", () => {
  it("a failed command's kind offers its fix: Docker down opens the system check", async () => {
    const { api } = await startApp();
    // A kind with nothing to fix is only told...
    api.cancel = () => Promise.reject({ kind: "invalid_input", message: "nothing to stop" });
    q<HTMLButtonElement>("stop-button").click();
    await settle(20);
    const toast = all("toast").pop()!;
    expect(toast.textContent).toContain("nothing to stop");
    expect(toast.querySelector("button")).toBeNull();

    // ...one with a fix offers it.
    api.sendMessage = () => Promise.reject({ kind: "docker", message: "Docker is not running: start it" });
    await send("hello");
    const banner = q("chat-banner");
    expect(banner.textContent).toContain("Docker is not running: start it");
    const doctor = vi.spyOn(api, "doctor");
    banner.querySelector("button")!.click();
    await settle(40);
    expect(doctor).toHaveBeenCalled();
    expect(q("doctor-screen")).toBeTruthy();

  });

  it("opens the most recent conversation with its history", async () => {
    await startApp();
    expect(q("sidebar")).toBeTruthy();
    expect(all("conversation-item").length).toBe(3);
    expect(all("message").map((m) => m.dataset["role"])).toEqual(["user", "assistant", "assistant"]);
    const cell = q("execution-cell");
    expect(cell.dataset["state"]).toBe("ok");
    expect(q("cell-stdout", cell).textContent).toContain("north");
  });

  it("ask → approval dialog → approve → output streams into a cell with an inline image", async () => {
    const { api } = await startApp();
    await send("total the sales please");
    const dialog = q("approval-dialog");
    expect(q("approval-code").textContent).toContain("import csv");
    q<HTMLButtonElement>("approve-button").click();
    await settle(60);
    const decide = api.calls.filter((c) => c.name === "decide");
    expect(decide).toHaveLength(1);
    const pending = api.convs.get("conv-sales")!.items.find((i) => i.type === "approval" && i.request.approvalId === dialog.dataset["approvalId"]);
    expect(pending).toBeTruthy();
    expect(decide[0]?.args[1]).toBe(dialog.dataset["approvalId"]);
    expect(all("approval-dialog")).toHaveLength(0);
    const cells = all("execution-cell");
    const cell = cells[cells.length - 1]!;
    expect(cell.dataset["state"]).toBe("ok");
    expect(q("cell-stdout", cell).textContent).toContain("row 24:");
    expect(q("cell-stderr", cell).textContent).toContain("warning");
    expect(q("cell-exit", cell).textContent).toBe("exit 0");
    expect(q<HTMLImageElement>("cell-image", cell).src).toMatch(/^data:image\/svg\+xml;base64,/);
  });

  it("hostile model output stays inert: its fake approve button cannot decide", async () => {
    const { api } = await startApp("approval");
    // A real request is pending; dismiss its dialog so only the hostile button is clickable.
    key("Escape");
    await send("show me something hostile");
    const bodies = all("message-body");
    const hostile = bodies[bodies.length - 1]!;
    expect(hostile.querySelector("script, iframe, form, input, button, style")).toBeNull();
    expect(hostile.querySelector("[data-testid]")).toBeNull();
    expect((window as unknown as Record<string, unknown>)["__pwned"]).toBeUndefined();
    // The only approve-button in the document is not inside model output.
    for (const el of all("approve-button")) expect(el.closest('[data-testid="message-body"]')).toBeNull();
    for (const el of hostile.querySelectorAll<HTMLElement>("*")) el.click();
    await settle();
    expect(api.calls.filter((c) => c.name === "decide")).toHaveLength(0);
    // The safe link opens only through open_external; the javascript: one does nothing.
    const links = [...hostile.querySelectorAll("a")];
    expect(api.calls.filter((c) => c.name === "openExternal").map((c) => c.args[0])).toEqual(["https://example.com/docs"]);
    expect(links.length).toBeGreaterThanOrEqual(2);
  });

  it("destructive: approve is refused until confirmed, then decide carries confirmed=true", async () => {
    const { api } = await startApp();
    await send("clean up the build folder");
    const dialog = q("approval-dialog");
    expect(dialog.dataset["destructive"]).toBe("true");
    expect(q<HTMLButtonElement>("approve-button").disabled).toBe(true);
    q<HTMLInputElement>("destructive-confirm").click();
    q<HTMLButtonElement>("approve-button").click();
    await settle(40);
    const decide = api.calls.filter((c) => c.name === "decide");
    expect(decide).toHaveLength(1);
    expect(decide[0]?.args[4]).toBe(true);
    expect(all("approval-dialog")).toHaveLength(0);
  });

  it("deny flow records the reason and nothing runs", async () => {
    const { api } = await startApp();
    const before = all("execution-cell").length;
    await send("total the sales");
    q<HTMLInputElement>("deny-reason").value = "use pandas instead";
    q<HTMLButtonElement>("deny-button").click();
    await settle(40);
    const decide = api.calls.find((c) => c.name === "decide");
    expect(decide?.args[3]).toEqual({ type: "deny", reason: "use pandas instead" });
    expect(all("execution-cell").length).toBe(before);
  });

  it("Escape leaves a pending chip that reopens the dialog", async () => {
    await startApp("approval");
    expect(all("approval-dialog")).toHaveLength(1);
    key("Escape");
    await settle();
    expect(all("approval-dialog")).toHaveLength(0);
    const chip = q<HTMLButtonElement>("pending-approval-chip");
    expect(chip.hidden).toBe(false);
    chip.click();
    expect(all("approval-dialog")).toHaveLength(1);
  });

  it("focus-approval opens that conversation and its dialog", async () => {
    const { api, app } = await startApp();
    const other = api.convs.get("conv-disk")!;
    const { requestFor } = await import("../src/api/fake-script");
    const r = requestFor("plot");
    other.pending.push(r);
    api.emitFocusApproval({ conversationId: "conv-disk", approvalId: r.approvalId });
    await settle();
    expect(app.conversationId).toBe("conv-disk");
    expect(q("approval-dialog").dataset["approvalId"]).toBe(r.approvalId);
  });

  it("streams markdown: deltas accumulate and render once per frame", async () => {
    const { api } = await startApp();
    api.emit("conv-sales", { type: "textDelta", messageId: "live", text: "**Hel" });
    api.emit("conv-sales", { type: "textDelta", messageId: "live", text: "lo** wor" });
    const msg = root.querySelector<HTMLElement>('[data-message-id="live"] [data-testid="message-body"]')!;
    expect(msg.textContent).toBe(""); // nothing painted before the frame
    await settle(1);
    expect(msg.querySelector("strong")?.textContent).toBe("Hello");
    api.emit("conv-sales", { type: "textDelta", messageId: "live", text: "ld\n\n```python\nx = 1\n```" });
    await settle(1);
    expect(msg.textContent).toContain("world");
    expect(msg.querySelector("pre code")?.textContent).toContain("x = 1");
  });

  it("thinking is folded above the answer and a note is shown in IronClaw's voice", async () => {
    const { api } = await startApp();
    api.emit("conv-sales", { type: "reasoningDelta", messageId: "think", text: "Count the rows" });
    api.emit("conv-sales", { type: "reasoningDelta", messageId: "think", text: " first." });
    await settle(1);
    const msg = root.querySelector<HTMLElement>('[data-message-id="think"]')!;
    expect(msg.hidden).toBe(false); // thinking alone is enough to show the message
    const folded = msg.querySelector<HTMLDetailsElement>('[data-testid="reasoning"]')!;
    expect(folded.open).toBe(false);
    expect(folded.textContent).toContain("Count the rows first.");
    api.emit("conv-sales", { type: "textDelta", messageId: "think", text: "There are 3." });
    await settle(1);
    expect(msg.querySelector('[data-testid="message-body"]')?.textContent?.trim()).toBe("There are 3.");
    expect(msg.querySelectorAll('[data-testid="reasoning"]').length).toBe(1);
    api.emit("conv-sales", { type: "note", text: "The answer was cut off at the model's output limit." });
    const notes = [...root.querySelectorAll(".chat-notice")].map((n) => n.textContent);
    expect(notes).toContain("The answer was cut off at the model's output limit.");
  });

  it("shows how full the context is and marks where the conversation was summarised", async () => {
    const { api } = await startApp();
    const meter = q("context-meter");
    // The kept gauge of its last request, until a new one comes.
    expect(meter.textContent).toBe("Context 26%");
    api.emit("conv-sales", { type: "contextUsage", model: "qwen3:8b", usedTokens: 7000, windowTokens: 8192, windowSource: "known for this model" });
    expect(meter.hidden).toBe(false);
    expect(meter.textContent).toBe("Context 85%");
    expect(meter.classList.contains("full")).toBe(true);
    expect(meter.title).toContain("qwen3:8b");
    api.emit("conv-sales", { type: "compacted", summary: "We cleaned sales.csv.", tokensBefore: 9000, tokensAfter: 2000 });
    const marker = q("compacted") as HTMLDetailsElement;
    expect(marker.open).toBe(false);
    expect(marker.textContent).toContain("summarised to fit");
    expect(marker.textContent).toContain("We cleaned sales.csv.");
  });

  it("names the instruction files in force, where each comes from, and a file it refused", async () => {
    const { api } = await startApp();
    const pill = q("instructions-chip");
    // Shown as soon as the conversation opens: the files the next turn will read.
    expect(pill.hidden).toBe(false);
    expect(pill.textContent).toBe("Instructions: AGENTS.md");
    expect(pill.title).toContain("in this workspace; code that runs can change it");
    const user = { scope: "user", name: "AGENTS.md", path: "/home/ann/.config/ironclaw/AGENTS.md", bytes: 1200, cut: false, problem: null } as const;
    api.emit("conv-sales", { type: "instructions", files: [user] });
    expect(pill.hidden).toBe(false);
    expect(pill.textContent).toBe("Instructions: AGENTS.md");
    expect(pill.title).toContain("yours, for every conversation");
    expect(pill.classList.contains("full")).toBe(false);
    const planted = { scope: "workspace", name: "IRONCLAW.md", path: "/ws/IRONCLAW.md", bytes: 0, cut: false, problem: "it is a named pipe (FIFO), not a regular file" } as const;
    const long = { scope: "workspace", name: "AGENTS.md", path: "/ws/AGENTS.md", bytes: 90000, cut: true, problem: null } as const;
    api.emit("conv-sales", { type: "instructions", files: [user, long, planted] });
    expect(pill.textContent).toBe("Instructions: 2");
    expect(pill.classList.contains("full")).toBe(true);
    expect(pill.title).toContain("code that runs can change it");
    expect(pill.title).toContain("only the start is read");
    expect(pill.title).toContain("not read: it is a named pipe (FIFO)");
    api.emit("conv-sales", { type: "instructions", files: [] });
    expect(pill.hidden).toBe(true);
  });

  it("sidebar search asks list_conversations with the query", async () => {
    const { api } = await startApp();
    vi.useFakeTimers();
    const search = q<HTMLInputElement>("conversation-search");
    search.value = "nginx";
    search.dispatchEvent(new Event("input"));
    vi.advanceTimersByTime(200);
    vi.useRealTimers();
    await settle();
    const calls = api.calls.filter((c) => c.name === "listConversations");
    expect(calls[calls.length - 1]?.args[0]).toBe("nginx");
    const items = all("conversation-item");
    expect(items.map((i) => i.dataset["id"])).toEqual(["conv-logs"]);
    expect(items[0]?.textContent).toContain("nginx");
  });

  it("a search result opens its conversation where it matched, not at the end", async () => {
    await startApp();
    vi.useFakeTimers();
    const search = q<HTMLInputElement>("conversation-search");
    search.value = "5xx responses per hour";
    search.dispatchEvent(new Event("input"));
    vi.advanceTimersByTime(200);
    vi.useRealTimers();
    await settle();
    const [item] = all("conversation-item");
    expect(item?.dataset["id"]).toBe("conv-logs");
    item!.querySelector<HTMLButtonElement>(".conv-select")!.click();
    await settle(20);
    const hit = document.querySelector<HTMLElement>("[data-search-hit]");
    expect(hit?.dataset["role"]).toBe("user");
    expect(hit?.textContent).toContain("5xx responses per hour");
  });

  it("rename, export and a confirmed delete go to the backend", async () => {
    const { api } = await startApp();
    const row = all("conversation-item").find((r) => r.dataset["id"] === "conv-disk")!;
    q<HTMLButtonElement>("conversation-rename", row).click();
    const input = q<HTMLInputElement>("conversation-rename-input");
    input.value = "Disk space";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    await settle();
    expect(api.calls.find((c) => c.name === "renameConversation")?.args).toEqual(["conv-disk", "Disk space"]);

    const row2 = all("conversation-item").find((r) => r.dataset["id"] === "conv-disk")!;
    q<HTMLButtonElement>("conversation-export", row2).click();
    await settle();
    expect(api.calls.find((c) => c.name === "exportConversation")?.args).toEqual(["conv-disk", "markdown"]);

    const row3 = all("conversation-item").find((r) => r.dataset["id"] === "conv-disk")!;
    q<HTMLButtonElement>("conversation-delete", row3).click();
    expect(api.calls.find((c) => c.name === "deleteConversation")).toBeUndefined();
    q<HTMLButtonElement>("conversation-delete-confirm").click();
    await settle();
    expect(api.calls.find((c) => c.name === "deleteConversation")?.args).toEqual(["conv-disk"]);
    expect(all("conversation-item").map((r) => r.dataset["id"])).not.toContain("conv-disk");
  });

  it("images a run wrote come back when the conversation is reopened; a deleted one is a placeholder", async () => {
    const { api } = await startApp();
    const images = () => all("cell-image").map((i) => [i.dataset["path"], i.getAttribute("src")?.slice(0, 26)]);
    const missing = () => all("cell-image-missing").map((f) => [f.dataset["path"], f.textContent]);
    // Opened from history: no live files event involved.
    expect(images()).toEqual([["chart.svg", "data:image/svg+xml;base64,"]]);
    expect(missing()).toEqual([["old-plot.png", "No longer in the workspaceold-plot.png"]]);
    expect(api.calls.filter((c) => c.name === "readRunImage").map((c) => c.args)).toEqual([
      ["exec-seed-1", "chart.svg"],
      ["exec-seed-1", "old-plot.png"],
    ]);
    // Away and back.
    all("conversation-item").find((r) => r.dataset["id"] === "conv-logs")!.querySelector<HTMLButtonElement>(".conv-select")!.click();
    await settle();
    expect(images()).toEqual([]);
    all("conversation-item").find((r) => r.dataset["id"] === "conv-sales")!.querySelector<HTMLButtonElement>(".conv-select")!.click();
    await settle();
    expect(images()).toEqual([["chart.svg", "data:image/svg+xml;base64,"]]);
    expect(missing().map((m) => m[0])).toEqual(["old-plot.png"]);
  });

  it("a folder no file manager opens says why next to the button, with the path to copy", async () => {
    const { api } = await startApp("nofilemanager");
    q<HTMLButtonElement>("open-workspace-panel").click();
    await settle();
    expect(q("open-folder-problem").hidden).toBe(true);
    q<HTMLButtonElement>("open-folder").click();
    await settle();
    expect(api.calls.find((c) => c.name === "openWorkspaceFolder")?.args).toEqual(["conv-sales"]);
    const problem = q("open-folder-problem");
    expect(problem.hidden).toBe(false);
    // Next to the button: the box follows the actions row, before the file list.
    expect(problem.previousElementSibling?.contains(q("open-folder"))).toBe(true);
    const text = q("open-folder-problem-text").textContent ?? "";
    expect(text).toMatch(/No file manager/);
    expect(text).toMatch(/Copy the path/);
    expect(text).not.toMatch(/ExitStatus|unix_wait_status/);
    const path = q<HTMLInputElement>("open-folder-path");
    expect(path.value).toBe("/home/you/.local/share/ironclaw/workspaces/conv-sales");
    expect(path.readOnly).toBe(true);
    const writes: string[] = [];
    Object.defineProperty(navigator, "clipboard", { value: { writeText: async (t: string) => void writes.push(t) }, configurable: true });
    q<HTMLButtonElement>("copy-folder-path").click();
    await settle();
    expect(writes).toEqual([path.value]);
    expect(q("open-folder-copied").textContent).toBe("Copied.");
    // Without clipboard access the path is left selected for Ctrl+C.
    Object.defineProperty(navigator, "clipboard", { value: { writeText: async () => Promise.reject(new Error("denied")) }, configurable: true });
    q<HTMLButtonElement>("copy-folder-path").click();
    await settle();
    expect(q("open-folder-copied").textContent).toMatch(/Ctrl\+C/);
    expect([path.selectionStart, path.selectionEnd]).toEqual([0, path.value.length]);
    // The raw launcher message is only behind "Details"; the status line stays clean.
    expect(problem.querySelector("details code")?.textContent).toMatch(/xdg-open/);
    expect(q("workspace-panel").querySelector(".ws-status")?.textContent).toBe("");
  });

  it("workspace panel lists files with changed marks and opens the folder", async () => {
    const { api } = await startApp();
    q<HTMLButtonElement>("open-workspace-panel").click();
    await settle();
    const files = all("workspace-file");
    expect(files.map((f) => [f.dataset["path"], f.dataset["changed"]])).toContainEqual(["chart.svg", "true"]);
    expect(files.map((f) => [f.dataset["path"], f.dataset["changed"]])).toContainEqual(["sales.csv", "false"]);
    q<HTMLButtonElement>("open-folder").click();
    await settle();
    expect(api.calls.find((c) => c.name === "openWorkspaceFolder")?.args).toEqual(["conv-sales"]);
    files.find((f) => f.dataset["path"] === "chart.svg")?.querySelector("button")?.click();
    await settle();
    expect(api.calls.find((c) => c.name === "readWorkspaceImage")?.args).toEqual(["conv-sales", "chart.svg"]);
    expect(q<HTMLImageElement>("workspace-image").src).toMatch(/^data:image\/svg\+xml;base64,/);
  });

  it("settings save the provider, send the key to the keyring only, and clear it", async () => {
    const { api } = await startApp();
    q<HTMLButtonElement>("open-settings").click();
    await settle();
    expect(q("settings-screen")).toBeTruthy();
    const kind = q<HTMLSelectElement>("settings-provider-kind");
    kind.value = "anthropic";
    kind.dispatchEvent(new Event("change"));
    q<HTMLInputElement>("settings-model").value = "claude-sonnet";
    const keyField = q<HTMLInputElement>("settings-api-key");
    keyField.value = "sk-secret-123";
    q<HTMLButtonElement>("settings-save").click();
    await settle(10);
    expect(keyField.value).toBe("");
    expect(api.calls.find((c) => c.name === "setApiKey")?.args[0]).toBe("anthropic");
    const saved = api.calls.find((c) => c.name === "saveSettings")?.args[0];
    expect(JSON.stringify(saved)).not.toContain("sk-secret");
    expect(saved).toMatchObject({ provider: { kind: "anthropic", model: "claude-sonnet" } });
    q<HTMLButtonElement>("settings-close").click();
    expect(all("settings-screen")).toHaveLength(0);
  });

  it("first run shows the doctor with the Docker fix and a real image progress bar", async () => {
    const { api } = await startApp("doctor");
    expect(q("doctor-screen")).toBeTruthy();
    expect(q("docker-status").dataset["state"]).toBe("notRunning");
    expect(q("docker-fix").textContent).toContain("systemctl start docker");
    expect(q("image-progress").tagName).toBe("PROGRESS");
    expect(q("provider-form")).toBeTruthy();
    expect(api.calls.some((c) => c.name === "doctor")).toBe(true);
  });
});

describe("first run", () => {
  function slowDoctor(api: FakeBackend): () => void {
    const slow = api.doctor.bind(api);
    let release: () => void = () => {};
    let first = true;
    api.doctor = () => {
      if (!first) return slow();
      first = false;
      return new Promise((r) => (release = () => void slow().then(r)));
    };
    return () => release();
  }

  it("does not hold the first screen for slow checks; a late 'not ready' opens the doctor if untouched", async () => {
    const api = new FakeBackend({ scenario: "doctor" });
    const release = slowDoctor(api);
    const app = new App(api, root);
    await app.start(); // returns while the doctor is still checking
    await settle();
    expect(q("chat-view")).toBeTruthy();
    release();
    await settle(10);
    expect(q("doctor-screen")).toBeTruthy();
    expect(all("chat-view")).toHaveLength(0);
  });

  it("once the person uses the chat, a late 'not ready' is a banner instead", async () => {
    const api = new FakeBackend({ scenario: "doctor" });
    const release = slowDoctor(api);
    const app = new App(api, root);
    await app.start();
    await settle();
    q("message-input").dispatchEvent(new KeyboardEvent("keydown", { key: "h", bubbles: true }));
    release();
    await settle(10);
    expect(q("chat-banner").textContent).toContain("Docker is not ready");
    q<HTMLButtonElement>("chat-banner", root).querySelector("button")?.click();
    await settle(10);
    expect(q("doctor-screen")).toBeTruthy();
  });

  it("with no model saved and no local Ollama, the doctor opens even though code could run", async () => {
    const api = new FakeBackend({ scenario: "nomodel" });
    const app = new App(api, root);
    await app.start();
    await settle();
    expect(q("doctor-screen")).toBeTruthy();
    expect(q("docker-status").dataset["state"]).toBe("ok");
    expect(q("image-status").dataset["ready"]).toBe("true");
    // Before the person tried anything nothing is wrong: a hint, not a red error.
    expect(q("provider-status").classList.contains("error")).toBe(false);
    expect(q("ollama-note").hidden).toBe(false);
    q<HTMLSelectElement>("provider-kind").value = "openai";
    q<HTMLSelectElement>("provider-kind").dispatchEvent(new Event("change"));
    q<HTMLInputElement>("provider-base-url").value = "http://127.0.0.1:8080/v1";
    q<HTMLInputElement>("provider-model").value = "mock";
    q<HTMLButtonElement>("save-provider").click();
    await settle(10);
    expect(q("provider-status").textContent).toMatch(/connected/i);
    // A model is connected: "No Ollama is running…" is no longer said.
    expect(q("ollama-note").hidden).toBe(true);
    q<HTMLButtonElement>("doctor-continue").click();
    await settle();
    expect(q("chat-view")).toBeTruthy();
  });

  it("prepares the image with a real progress bar fed by the progress channel, then offers to start", async () => {
    const api = new FakeBackend({ scenario: "noimage" });
    const app = new App(api, root);
    await app.start();
    await settle();
    expect(q("docker-status").dataset["state"]).toBe("ok");
    expect(all("docker-fix")).toHaveLength(0);
    expect(q("image-status").dataset["state"]).toBe("missing");
    const bar = q<HTMLProgressElement>("image-progress");
    const seen: number[] = [];
    const orig = api.prepareImage.bind(api);
    api.prepareImage = (onProgress) =>
      orig((p) => {
        onProgress(p);
        seen.push(bar.hasAttribute("value") ? bar.value : -1);
      });
    q<HTMLButtonElement>("prepare-image").click();
    await vi.waitFor(() => expect(q("image-status").dataset["state"]).toBe("ready"), { timeout: 5000, interval: 20 });
    expect(seen[0]).toBe(-1); // indeterminate before the step can measure itself
    expect(seen.filter((v) => v > 0 && v < 1).length).toBeGreaterThan(5);
    expect(seen[seen.length - 1]).toBe(1);
    expect(q("doctor-continue").textContent).toBe("Start chatting");
    q<HTMLButtonElement>("doctor-continue").click();
    await settle();
    expect(q("chat-view")).toBeTruthy();
  });
});

function key(k: string): void {
  const target = document.activeElement ?? document.body;
  target.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true }));
}

describe("network prompts", () => {
  it("a refused host asks once, and the answer goes to decide_host with that host", async () => {
    const { api, app } = await startApp();
    const id = app.conversationId!;
    const blocked = { type: "networkBlocked", executionId: "exec-1", target: "pypi.example:443", reason: "not on the allowlist", alreadyDenied: false } as const;
    api.emit(id, blocked);
    api.emit(id, blocked);
    await settle();
    expect(all("network-prompt")).toHaveLength(1);
    expect(q("network-prompt").dataset["target"]).toBe("pypi.example:443");
    q<HTMLButtonElement>("network-allow_for_session").click();
    await settle(20);
    const calls = api.calls.filter((c) => c.name === "decideHost");
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args).toEqual([id, "pypi.example:443", "allow_for_session"]);
    expect(q("network-prompt").dataset["decided"]).toBe("allow_for_session");
    expect(all("network-deny")).toHaveLength(0);
  });

  it("a host the person already denied is not asked about again", async () => {
    const { api, app } = await startApp();
    api.emit(app.conversationId!, { type: "networkBlocked", executionId: "exec-1", target: "evil.example:80", reason: "denied", alreadyDenied: true });
    await settle();
    expect(all("network-prompt")).toHaveLength(0);
  });
});

describe("chat rendering details", () => {
  it("an approval approved with the person's edits is marked so on its card", async () => {
    await startApp();
    await send("total the sales please");
    const id = q("approval-dialog").dataset["approvalId"]!;
    q<HTMLButtonElement>("edit-button").click();
    const area = q<HTMLTextAreaElement>("edit-code");
    area.value = `${area.value}\nprint("mine")`;
    area.dispatchEvent(new Event("input", { bubbles: true }));
    q<HTMLButtonElement>("edit-approve-button").click();
    await settle(60);
    const card = document.querySelector<HTMLElement>(`.approval-card[data-approval-id="${id}"]`)!;
    expect(card.dataset["edited"]).toBe("true");
    expect(card.textContent).toContain("Approved with your edits");
  });

  it("a reply that is only a tool call leaves no empty bubble", async () => {
    const { api, app } = await startApp();
    const id = app.conversationId!;
    api.emit(id, { type: "assistantMessage", messageId: "m-empty", text: "" });
    api.emit(id, { type: "assistantMessage", messageId: "m-words", text: "Done." });
    await settle();
    const empty = document.querySelector<HTMLElement>('[data-message-id="m-empty"]')!;
    const words = document.querySelector<HTMLElement>('[data-message-id="m-words"]')!;
    expect(empty.hidden).toBe(true);
    expect(words.hidden).toBe(false);
  });
});

describe("network activity of a run", () => {
  it("is shown with its execution, host names as text", async () => {
    const { api, app } = await startApp();
    const id = app.conversationId!;
    api.emit(id, { type: "executionStarted", executionId: "exec-net", number: 1, approvalId: "a-net", language: "shell", code: "pip install x" });
    api.emit(id, { type: "executionNetwork", executionId: "exec-net", allowed: ["files.example:443"], denied: ["<img src=x onerror=alert(1)>:80"] });
    await settle();
    const cell = document.querySelector<HTMLElement>('[data-execution-id="exec-net"]')!;
    const line = q("cell-network", cell);
    expect(line.hidden).toBe(false);
    expect(line.textContent).toBe("Network: reached files.example:443 · blocked <img src=x onerror=alert(1)>:80");
    expect(line.querySelector("img")).toBeNull();
  });
});

describe("run numbers", () => {
  it("label each cell as warnings about an altered interpreter name it", async () => {
    const { api, app } = await startApp();
    const id = app.conversationId!;
    api.emit(id, { type: "executionStarted", executionId: "exec-7", number: 7, approvalId: "a-7", language: "python", code: "print(7)" });
    await settle();
    const cell = document.querySelector<HTMLElement>('[data-execution-id="exec-7"]')!;
    const label = q("cell-number", cell);
    expect(label.hidden).toBe(false);
    expect(label.textContent).toBe("Run #7");
  });
});

describe("undo a run", () => {
  it("a finished run lists what it changed; Undo takes it back, says the variables stay, and Redo restores", async () => {
    const { api } = await startApp();
    await send("total the sales please");
    q<HTMLButtonElement>("approve-button").click();
    await settle(80);
    const cells = all("execution-cell");
    const cell = cells[cells.length - 1]!;
    const strip = q("cell-changes", cell);
    expect(q("cell-changes-summary", strip).textContent).toBe("2 files changed");
    expect(q("cell-change-list", strip).textContent).toContain("sales.csv");

    // Each file opens its diff, fetched once from the run's checkpoint, and closes again.
    const csv = (all("cell-change", strip) as HTMLButtonElement[]).find((b) => b.textContent?.includes("sales.csv"))!;
    csv.click();
    await settle(40);
    const detail = q("change-detail", strip);
    expect(detail.querySelector(".diff-removed")?.textContent).toBe("- south,7");
    expect([...detail.querySelectorAll(".diff-added")].map((l) => l.textContent)).toEqual(["+ south,9", "+ east,4"]);
    expect(csv.getAttribute("aria-expanded")).toBe("true");
    csv.click();
    expect(detail.hidden).toBe(true);
    csv.click();
    expect(detail.hidden).toBe(false);
    expect(api.calls.filter((c) => c.name === "runChange")).toHaveLength(1);

    q<HTMLButtonElement>("cell-undo", strip).click();
    await settle(40);
    const undo = api.calls.filter((c) => c.name === "undoRun");
    expect(undo).toHaveLength(1);
    expect(undo[0]?.args[1]).toBe(cell.dataset["executionId"]);
    expect(undo[0]?.args[2]).toBe(false);
    expect(strip.dataset["state"]).toBe("undone");
    expect(q("cell-undo-status", strip).textContent).toContain("variables in the interpreter are unchanged");

    q<HTMLButtonElement>("cell-redo", strip).click();
    await settle(40);
    expect(api.calls.some((c) => c.name === "redoRun")).toBe(true);
    expect(q("cell-undo-status", strip).textContent).toContain("Redone");
    expect(q<HTMLButtonElement>("cell-undo", strip).hidden).toBe(false);
  });

  it("undoing an earlier run that a later run built on changes nothing until asked to take both back", async () => {
    const { api } = await startApp();
    for (const text of ["total the sales please", "and again"]) {
      await send(text);
      q<HTMLButtonElement>("approve-button").click();
      await settle(80);
    }
    const cells = all("execution-cell");
    const [first, second] = [cells[cells.length - 2]!, cells[cells.length - 1]!];
    q<HTMLButtonElement>("cell-undo", first).click();
    await settle(40);
    const status = q("cell-undo-status", first).textContent ?? "";
    expect(status).toContain("Not undone");
    expect(status).toContain("Run #");
    expect(status).toContain("sales.csv");
    expect(q("cell-changes", first).dataset["state"]).not.toBe("undone");

    q<HTMLButtonElement>("cell-undo-force", first).click();
    await settle(40);
    expect(api.calls.filter((c) => c.name === "undoRun").map((c) => c.args[2])).toEqual([false, true]);
    expect(q("cell-changes", first).dataset["state"]).toBe("undone");
    expect(q("cell-changes", second).dataset["state"]).toBe("undone");
  });

  it("rewinding to a run undoes every later run, each cell says so and offers Redo, and the button follows what stands", async () => {
    const { api } = await startApp();
    for (const text of ["total the sales please", "and again", "once more"]) {
      await send(text);
      q<HTMLButtonElement>("approve-button").click();
      await settle(80);
    }
    const cells = all("execution-cell");
    const [first, second, third] = cells.slice(-3) as [HTMLElement, HTMLElement, HTMLElement];
    // Offered where a later run's changes stand; never on the newest run.
    expect(q<HTMLButtonElement>("cell-rewind", first).hidden).toBe(false);
    expect(q<HTMLButtonElement>("cell-rewind", second).hidden).toBe(false);
    expect(q<HTMLButtonElement>("cell-rewind", third).hidden).toBe(true);

    // Two runs would be undone by one click: it asks once more, saying how many.
    q<HTMLButtonElement>("cell-rewind", first).click();
    await settle(20);
    expect(api.calls.filter((c) => c.name === "rewindTo")).toHaveLength(0);
    expect(q("cell-undo-status", first).textContent).toContain("undoes the 2 runs after this one");
    const confirm = q<HTMLButtonElement>("cell-rewind-confirm", first);
    expect(confirm.hidden).toBe(false);
    expect(confirm.textContent).toBe("Undo 2 later runs");
    confirm.click();
    await settle(60);
    const call = api.calls.filter((c) => c.name === "rewindTo");
    expect(call.map((c) => c.args[1])).toEqual([first.dataset["executionId"]]);
    expect(q("cell-changes", second).dataset["state"]).toBe("undone");
    expect(q("cell-changes", third).dataset["state"]).toBe("undone");
    expect(q("cell-changes", first).dataset["state"]).not.toBe("undone");
    expect(q("cell-undo-status", first).textContent).toContain("Rewound: 2 later runs undone");
    // The Undo beside it says what it would take back.
    expect(q("cell-undo", first).textContent).toBe("Undo this run too");
    expect(q<HTMLButtonElement>("cell-redo", third).hidden).toBe(false);
    // Nothing later stands now: no rewind offered anywhere.
    for (const c of [first, second, third]) expect(q<HTMLButtonElement>("cell-rewind", c).hidden).toBe(true);

    q<HTMLButtonElement>("cell-redo", second).click();
    await settle(40);
    expect(q<HTMLButtonElement>("cell-rewind", first).hidden).toBe(false);
  });

  it("a reopened conversation keeps each run's changes and whether it is undone", async () => {
    await startApp();
    const seeded = all("execution-cell")[0]!;
    expect(q("cell-changes-summary", seeded).textContent).toBe("1 file changed");
    expect(q<HTMLButtonElement>("cell-undo", seeded).hidden).toBe(false);
  });

  it("a reopened conversation shows how full its context is before its next turn", async () => {
    await startApp();
    const meter = q("context-meter");
    expect(meter.hidden).toBe(false);
    expect(meter.textContent).toBe("Context 26%");
    expect(meter.title).toContain("known for this model");
  });
});
