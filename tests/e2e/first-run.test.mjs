// First run and set-up: the model is set up on the doctor screen (first run) or in Settings, and
// the chat then talks to it; without Docker the doctor screen says how to fix that.

import { test } from "node:test";
import assert from "node:assert/strict";

import { prepare } from "./lib/harness.mjs";
import { testid } from "./lib/webdriver.mjs";
import { onScreen, screenshot, sendMessage, waitForAssistant } from "./lib/ui.mjs";

/** No provider.yaml, no key in the environment, and no Ollama where the app would look for one. */
const NO_MODEL = {
  provider: false,
  env: { IRONCLAW_OLLAMA_BASE_URL: "http://127.0.0.1:9", OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", IRONCLAW_OPENAI_BASE_URL: "" },
};

test("first run with no model configured opens the model set-up, then the chat", { timeout: 240_000 }, async (t) => {
  const app = await prepare(t, { ...NO_MODEL, replies: [{ type: "text", chunks: ["Set up ", "and answering."] }] });
  let s = await app.start();

  await s.waitForTestId("doctor-screen");
  const docker = await s.waitForTestId("docker-status");
  assert.equal(await docker.attribute("data-state"), "ok");
  const image = await s.byTestId("image-status");
  assert.equal(await image.attribute("data-ready"), "true");
  await s.waitForTestId("provider-form");
  // In the default 1200×800 window the way on is in view from the start, without scrolling.
  const onwards = await s.byTestId("doctor-continue");
  assert.ok((await onScreen(s, onwards)).visible, `doctor-continue is off screen: ${JSON.stringify(await onScreen(s, onwards))}`);
  const mark = await s.byTestId("model-mark");
  assert.equal(await mark.attribute("data-state"), "untested");
  assert.equal(await mark.text(), "◎");
  await screenshot(s, "first-run");

  await (await s.byTestId("provider-kind")).click();
  await (await s.find(`${testid("provider-kind")} option[value="openai"]`)).click();
  const url = await s.byTestId("provider-base-url");
  await url.clear();
  await url.sendKeys(`${app.llm.baseUrl}/v1`);
  const model = await s.byTestId("provider-model");
  await model.clear();
  await model.sendKeys("mock");
  await (await s.byTestId("save-provider")).click();
  const status = await s.byTestId("provider-status");
  await s.waitUntil("the provider check to pass", async () => /connected/i.test(await status.text()));
  // Said as a person would: where the server is, what it offers, which model will be used.
  assert.equal(
    await status.text(),
    `Connected: the server at ${app.llm.baseUrl}/v1 answers and offers 1 model. IronClaw will use “mock”.`,
  );
  assert.equal(await mark.attribute("data-state"), "passed");
  assert.equal(await mark.text(), "✓");
  // The next step comes to the person: "Start chatting" is in view and has focus.
  assert.equal(await onwards.text(), "Start chatting");
  assert.ok((await onScreen(s, onwards)).visible, "Start chatting is in view after the test passed");
  assert.equal(await s.execute(`return document.activeElement?.dataset.testid ?? null`), "doctor-continue");
  // No first-run text reads like a log line.
  const screenText = await (await s.byTestId("doctor-screen")).text();
  assert.doesNotMatch(screenText, /Connected to|model listed|\(API [\d.]+\) at|^the /m);

  await (await s.byTestId("doctor-continue")).click();
  await s.waitForTestId("chat-view");
  await sendMessage(s, "Are you there?");
  await waitForAssistant(s, "Set up and answering.");

  s = await app.restart();
  await s.waitForTestId("chat-view");
  assert.equal((await s.allByTestId("doctor-screen")).length, 0, "set up once, the app starts on the chat");
});

test("Settings sets up the model, and the chat then talks to it", { timeout: 240_000 }, async (t) => {
  const app = await prepare(t, { ...NO_MODEL, replies: [{ type: "text", chunks: ["Hello from ", "the scripted model."] }] });
  let s = await app.start();
  // Past the first-run screen without setting anything up there.
  await s.waitForTestId("doctor-screen");
  await (await s.byTestId("doctor-continue")).click();
  await s.waitForTestId("chat-view");

  await (await s.byTestId("open-settings")).click();
  await s.waitForTestId("settings-screen");
  await (await s.byTestId("settings-provider-kind")).click();
  await (await s.find(`${testid("settings-provider-kind")} option[value="openai"]`)).click();
  const url = await s.byTestId("settings-base-url");
  await url.clear();
  await url.sendKeys(`${app.llm.baseUrl}/v1`);
  const model = await s.byTestId("settings-model");
  await model.clear();
  await model.sendKeys("mock");
  await (await s.byTestId("settings-save")).click();
  const status = await s.find(`${testid("settings-screen")} [role="status"]`);
  await s.waitUntil("the settings to be saved and the model to answer", async () => /^Saved\./.test(await status.text()));
  assert.doesNotMatch(await status.text(), /did not answer/);
  // The shot shows the top of the screen (saving scrolled the status into view).
  await s.execute(`for (let e = document.querySelector('[data-testid="settings-provider-kind"]'); e; e = e.parentElement) e.scrollTop = 0;`);
  await screenshot(s, "settings");
  await (await s.byTestId("settings-close")).click();
  await s.waitGone(testid("settings-screen"));

  await sendMessage(s, "Say hello");
  await waitForAssistant(s, "Hello from the scripted model.");

  // Saved for good: after a restart Settings shows the same model.
  s = await app.restart();
  await (await s.waitForTestId("open-settings")).click();
  await s.waitForTestId("settings-screen");
  assert.equal(await (await s.byTestId("settings-model")).property("value"), "mock");
  assert.equal(await (await s.byTestId("settings-base-url")).property("value"), `${app.llm.baseUrl}/v1`);
});

test("the doctor screen names the fix when Docker does not answer", { timeout: 120_000 }, async (t) => {
  const app = await prepare(t);
  // Points the app at a socket nobody listens on; the real engine stays untouched.
  await app.restartDriver({ DOCKER_HOST: `unix://${app.root}/no-docker.sock` });
  const s = await app.start();

  await s.waitForTestId("doctor-screen");
  const docker = await s.waitForTestId("docker-status");
  const state = await docker.attribute("data-state");
  assert.ok(["notRunning", "notInstalled"].includes(state), `docker-status data-state=${state}`);
  const fix = await (await s.byTestId("docker-fix")).text();
  assert.match(fix, state === "notRunning" ? /start docker/i : /install docker/i);
  // What failed is said once and the fix once (the error's own "start it: …" is not repeated).
  const card = await s.execute(`return document.querySelector('[data-testid="docker-status"]').closest(".check").textContent`);
  const fixCommand = state === "notRunning" ? /sudo systemctl start docker/g : /sudo apt(-get)? install docker\.io/g;
  assert.equal(card.match(fixCommand)?.length, 1, `the fix appears once: ${card}`);
  assert.doesNotMatch(card, /`/, "no raw Markdown backticks");
  assert.equal((await s.allByTestId("chat-view")).length, 0, "no chat until Docker answers");
  await screenshot(s, "doctor-docker-not-running");
});
