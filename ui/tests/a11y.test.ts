// Every control has a name a screen reader can say, on each screen the fake backend can show.
// (The real-webview audit with axe-core is tests/e2e/accessibility.test.mjs; this catches a
// nameless control in milliseconds.)

import { afterEach, describe, expect, it } from "vitest";
import { FakeBackend } from "../src/api/fake";
import { App } from "../src/app";
import { showHelp } from "../src/views/help";
import { q, settle } from "./helpers";

function accessibleName(el: HTMLElement): string {
  const labelledBy = el.getAttribute("aria-labelledby");
  if (labelledBy) return labelledBy.split(/\s+/).map((id) => document.getElementById(id)?.textContent ?? "").join(" ").trim();
  const aria = el.getAttribute("aria-label");
  if (aria) return aria.trim();
  const input = el as HTMLInputElement;
  if (input.labels && input.labels.length > 0) return [...input.labels].map((l) => l.textContent ?? "").join(" ").trim();
  if (el.tagName === "BUTTON") return (el.textContent ?? "").trim() || (el.getAttribute("title") ?? "");
  return (el.getAttribute("title") ?? el.getAttribute("placeholder") ?? "").trim();
}

function nameless(root: ParentNode = document): string[] {
  const controls = root.querySelectorAll<HTMLElement>("button, input:not([type=hidden]), select, textarea, dialog, [role=dialog], [role=region], [tabindex]:not([tabindex='-1'])");
  return [...controls]
    .filter((el) => {
      if (el.hidden) return false;
      // A dialog or region is named by a label, not by everything inside it.
      const fromContent = el.matches("dialog, [role=dialog], [role=region]") ? "" : (el.textContent ?? "").trim();
      return !accessibleName(el) && !fromContent;
    })
    .map((el) => el.outerHTML.slice(0, 120));
}

let root: HTMLElement;
afterEach(() => document.body.replaceChildren());

async function start(scenario: string) {
  root = document.createElement("div");
  document.body.append(root);
  const api = new FakeBackend({ scenario });
  const app = new App(api, root);
  await app.start();
  await settle(20);
  return app;
}

describe("every control has a name", () => {
  for (const scenario of ["", "approval", "destructive", "doctor", "workspace"]) {
    it(`scenario "${scenario || "default"}"`, async () => {
      await start(scenario);
      if (scenario === "workspace") {
        q("open-workspace-panel").click();
        await settle(10);
      }
      expect(nameless()).toEqual([]);
    });
  }

  it("Settings and the shortcuts overlay", async () => {
    const app = await start("");
    app.shortcut("settings");
    await settle(10);
    expect(q("settings-theme")).toBeTruthy();
    expect(nameless()).toEqual([]);
    q("show-shortcuts").click();
    expect(q("help-overlay").textContent).toContain("Ctrl");
    q("help-close").click();
    q("settings-close").click();
    showHelp();
    expect(nameless()).toEqual([]);
    expect(q("help-overlay").getAttribute("aria-labelledby")).toBe("help-title");
  });

  it("a cell's output and code can be reached by keyboard, and its status is announced", async () => {
    await start("");
    const cell = q("execution-cell");
    const output = cell.querySelector<HTMLElement>(".cell-output");
    expect(output?.tabIndex).toBe(0);
    expect(output?.getAttribute("aria-label")).toMatch(/Output/);
    expect(q("cell-code", cell).tabIndex).toBe(0);
    expect(cell.querySelector(".cell-status")?.getAttribute("role")).toBe("status");
  });
});
