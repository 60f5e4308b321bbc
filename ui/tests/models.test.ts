import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { all, key, q, settle, startFakeApp } from "./helpers";

let root: HTMLElement;

beforeEach(() => {
  root = document.createElement("div");
  document.body.append(root);
});
afterEach(() => document.body.replaceChildren());

const startApp = () => startFakeApp(root);

describe("model menu", () => {
  it("lists the configured models with the current one selected, and switching says so", async () => {
    const { api } = await startApp();
    const button = q<HTMLButtonElement>("model-button");
    expect(button.textContent).toBe("gpt-4o");
    expect(button.title).toContain("gpt-4o");
    button.click();
    await settle(10);
    // No tooltip over the open menu's first item.
    expect(button.hasAttribute("title")).toBe(false);
    const options = all("model-option");
    expect(options.map((o) => o.dataset["model"])).toEqual(["openai:gpt-4o", "openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5"]);
    expect(options.map((o) => o.getAttribute("aria-selected"))).toEqual(["true", "false", "false"]);
    options[2]!.click();
    await settle(10);
    expect(api.calls.find((c) => c.name === "useModel")?.args.slice(1)).toEqual(["anthropic", "claude-sonnet-4-5"]);
    expect(button.textContent).toBe("claude-sonnet-4-5");
    expect(q("chat-view").textContent).toContain("Switched to anthropic:claude-sonnet-4-5");
    expect(q("model-list").hidden).toBe(true);
    expect(button.title).toContain("claude-sonnet-4-5");

    // The next answer says who wrote it.
    q<HTMLTextAreaElement>("message-input").value = "hello";
    q<HTMLButtonElement>("send-button").click();
    await settle(60);
    const labels = all("message-model").map((l) => l.textContent);
    expect(labels).toEqual(["anthropic:claude-sonnet-4-5"]);
  });

  it("Escape closes the list; choosing the current model sends nothing", async () => {
    const { api } = await startApp();
    q<HTMLButtonElement>("model-button").click();
    await settle(10);
    key(all("model-option")[0]!, "Escape");
    expect(q("model-list").hidden).toBe(true);
    q<HTMLButtonElement>("model-button").click();
    await settle(10);
    all("model-option")[0]!.click();
    await settle(10);
    expect(api.calls.some((c) => c.name === "useModel")).toBe(false);
  });
});

describe("more models in Settings", () => {
  it("shows the list one per line and saves what was typed, blank lines dropped", async () => {
    const { api } = await startFakeApp(root);
    q<HTMLButtonElement>("open-settings").click();
    await settle();
    const list = q<HTMLTextAreaElement>("settings-more-models");
    expect(list.value).toBe("llama3.1:8b");
    list.value = "llama3.1:8b\n\n anthropic:claude-sonnet-4-5 \n";
    q<HTMLButtonElement>("settings-save").click();
    await settle(10);
    const saved = api.calls.find((c) => c.name === "saveSettings")?.args[0];
    expect(saved).toMatchObject({ provider: { moreModels: ["llama3.1:8b", "anthropic:claude-sonnet-4-5"] } });
  });
});
