import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { all, q, settle, startFakeApp } from "./helpers";

let root: HTMLElement;

beforeEach(() => {
  root = document.createElement("div");
  document.body.append(root);
});
afterEach(() => document.body.replaceChildren());

describe("editing a sent message", () => {
  it("branches the conversation there and sends the edited text to the branch", async () => {
    const { api } = await startFakeApp(root);
    const first = all("message").find((m) => m.dataset.role === "user")!;
    const id = first.dataset.messageId;
    expect(id).toBeTruthy();
    const edit = q<HTMLButtonElement>("edit-message", first);
    expect(edit.hidden).toBe(false);
    expect(edit.title).not.toBe("");
    // The Files button is named by its label, with no tooltip to cover the panel's header.
    expect(q("open-workspace-panel").hasAttribute("title")).toBe(false);
    edit.click();
    // No tooltip over the box being typed in.
    expect(edit.hasAttribute("title")).toBe(false);
    const input = q<HTMLTextAreaElement>("edit-input", first);
    expect(input.value).toBe("Which region sold the most last quarter? The data is in sales.csv.");
    input.value = "Which region sold the least?";
    q<HTMLButtonElement>("edit-send", first).click();
    await settle();
    await settle();
    expect(api.calls.find((c) => c.name === "branchConversation")?.args).toEqual(["conv-sales", id]);
    const sent = api.calls.find((c) => c.name === "sendMessage");
    expect(sent?.args.slice(1, 2)).toEqual(["Which region sold the least?"]);
    expect(sent?.args[0]).not.toBe("conv-sales");
    expect(root.textContent).toContain("branched from");
    expect(q("chat-view").textContent).not.toContain("Which region sold the most");
    // In the sidebar the branch is told from its original by a mark ahead of its title,
    // which the row's width would otherwise cut before "(branch)".
    const rows = all("conversation-item");
    const branchRow = rows.find((r) => r.dataset["id"] === sent?.args[0]);
    const original = rows.find((r) => r.dataset["id"] === "conv-sales");
    expect(branchRow?.querySelector('[data-testid="conversation-branch"]')?.textContent).toBe("branch");
    expect(branchRow?.querySelector(".conv-title")?.textContent).not.toContain("(branch)");
    expect(original?.querySelector('[data-testid="conversation-branch"]')).toBeNull();
  });

  it("the note about attached files goes with the edited text, unseen in the editor", async () => {
    const { api, app } = await startFakeApp(root);
    q<HTMLButtonElement>("attach-button").click();
    q<HTMLButtonElement>("attach-files").click();
    for (let i = 0; i < 50 && all("attached-chip").length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const input = q<HTMLTextAreaElement>("message-input");
    input.value = "look at it";
    q<HTMLButtonElement>("send-button").click();
    await settle();
    // Reopened: the message as stored, with the note the model was given.
    await app.open("conv-logs");
    await app.open("conv-sales");
    await settle();
    const mine = all("message").filter((m) => m.dataset.role === "user").at(-1)!;
    q<HTMLButtonElement>("edit-message", mine).click();
    const editor = q<HTMLTextAreaElement>("edit-input", mine);
    expect(editor.value).toBe("look at it");
    editor.value = "look at it again";
    q<HTMLButtonElement>("edit-send", mine).click();
    await settle();
    await settle();
    const sent = api.calls.filter((c) => c.name === "sendMessage").at(-1);
    expect(sent?.args[1]).toBe("[The person attached files; they are in your workspace now: /workspace/notes.txt.]\n\nlook at it again");
  });

  it("a message sent now can be edited once it is saved; Cancel leaves it as it was", async () => {
    const { api } = await startFakeApp(root);
    const input = q<HTMLTextAreaElement>("message-input");
    input.value = "hello there";
    q<HTMLButtonElement>("send-button").click();
    await settle();
    const mine = all("message").filter((m) => m.dataset.role === "user").at(-1)!;
    expect(mine.dataset.messageId).toBeTruthy();
    q<HTMLButtonElement>("edit-message", mine).click();
    expect(q<HTMLTextAreaElement>("edit-input", mine).value).toBe("hello there");
    q<HTMLButtonElement>("edit-cancel", mine).click();
    expect(mine.querySelector('[data-testid="edit-input"]')).toBeNull();
    expect(api.calls.some((c) => c.name === "branchConversation")).toBe(false);
  });
});
