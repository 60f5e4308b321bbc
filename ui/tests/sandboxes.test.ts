import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeBackend } from "../src/api/fake";
import { App } from "../src/app";
import { q, settle } from "./helpers";

let root: HTMLElement;
beforeEach(() => {
  root = document.createElement("div");
  document.body.append(root);
});
afterEach(() => document.body.replaceChildren());

async function settingsWith(running: number | Error) {
  const api = new FakeBackend();
  if (running instanceof Error) api.runningSandboxes = () => Promise.reject(running);
  else api.sandboxesRunning = running;
  const app = new App(api, root);
  await app.start();
  await settle();
  q<HTMLButtonElement>("open-settings").click();
  await settle();
  return q("settings-sandboxes-running").textContent;
}

describe("Settings says what runs after quitting", () => {
  it("counts the app's running sandboxes and says quitting stops them", async () => {
    expect(await settingsWith(2)).toBe("Sandboxes running now: 2 (stopped when you quit)");
    document.body.replaceChildren();
    root = document.createElement("div");
    document.body.append(root);
    expect(await settingsWith(0)).toBe("Sandboxes running now: 0 (stopped when you quit)");
  });

  it("still opens, and says so, when Docker does not answer", async () => {
    expect(await settingsWith(new Error("engine down"))).toMatch(/unknown .*stopped when you quit/);
  });
});
