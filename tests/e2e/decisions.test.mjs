// The other answers to an approval: deny (nothing runs, the model is told), edit then approve
// (the edited code is what runs, and the model is told it was edited), and destructive code,
// which cannot be approved until its second confirmation is ticked and is never offered
// "Always allow" (each destructive run is decided on its own).

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";

import { prepare, runCodeReplies } from "./lib/harness.mjs";
import { testid } from "./lib/webdriver.mjs";
import {
  alertOpen, approvalDialog, cells, finishedCell, screenshot, sendMessage, textContent, waitForAssistant,
  waitForCellOutput,
} from "./lib/ui.mjs";

/** The text of every message the app sent the model in its last chat request. */
function lastPrompt(app) {
  const requests = app.llm.chatRequests();
  return JSON.stringify(requests.at(-1)?.body?.messages ?? []);
}

/** Files under every workspace of this app's data folder. */
function workspaceFiles(app) {
  return app.workspaces().flatMap((ws) => (fs.existsSync(ws) ? fs.readdirSync(ws) : []));
}

test("a denied request never runs and the model is told why", { timeout: 240_000 }, async (t) => {
  const code = 'open("denied-marker.txt", "w").write("ran")\nprint("this must not run")\n';
  const app = await prepare(t, {
    replies: runCodeReplies("python", code, { after: "Understood, I will not write the marker." }),
  });
  const s = await app.start();
  await sendMessage(s, "Write a marker file");

  const dialog = await approvalDialog(s);
  assert.equal(await textContent(s, await dialog.find(testid("approval-code"))), code);
  await (await dialog.find(testid("deny-reason"))).sendKeys("not on a Monday");
  await (await dialog.find(testid("deny-button"))).click();
  await s.waitGone(testid("approval-dialog"));
  await waitForAssistant(s, "I will not write the marker");

  assert.equal((await cells(s)).length, 0, "no execution cell for a denied request");
  assert.deepEqual(workspaceFiles(app).filter((f) => f === "denied-marker.txt"), []);
  const prompt = lastPrompt(app);
  assert.match(prompt, /The user DENIED this run; it did not execute/);
  assert.match(prompt, /not on a Monday/);
  assert.equal(app.llm.chatRequests().length, 2);
  assert.equal(await alertOpen(s), false);
});

test("edited code is what runs, and the model learns it was edited", { timeout: 240_000 }, async (t) => {
  const original = 'print("the model\'s version")';
  const edited = 'print("the person\'s version")';
  const app = await prepare(t, {
    replies: runCodeReplies("python", original, { after: "Thanks for fixing it." }),
  });
  const s = await app.start();
  await sendMessage(s, "Print something");

  const dialog = await approvalDialog(s);
  await (await dialog.find(testid("edit-button"))).click();
  const editor = await s.waitFor(testid("edit-code"));
  assert.equal(await editor.property("value"), original, "the editor starts from the model's code");
  await editor.clear();
  await editor.sendKeys(edited);
  await (await dialog.find(testid("edit-approve-button"))).click();
  await s.waitGone(testid("approval-dialog"));

  const cell = await finishedCell(s);
  assert.equal(cell.state, "ok");
  assert.equal(cell.code.trim(), edited);
  await waitForCellOutput(s, cell.el, "the person's version\n");
  await waitForAssistant(s, "Thanks for fixing it");
  const prompt = lastPrompt(app);
  assert.match(prompt, /The user edited your code and approved the edited version/);
  assert.match(prompt, /the person's version/);
});

test("destructive code needs the second confirmation before it can be approved", { timeout: 240_000 }, async (t) => {
  const code = "mkdir -p scratch && touch scratch/a scratch/b && rm -rf scratch && echo removed";
  const app = await prepare(t, {
    replies: runCodeReplies("shell", code, { after: "Cleaned up the scratch folder." }),
  });
  const s = await app.start();
  await sendMessage(s, "Clean up the scratch folder");

  const dialog = await approvalDialog(s);
  assert.equal(await dialog.attribute("data-destructive"), "true");
  assert.equal(await dialog.attribute("data-risk"), "destructive");
  assert.ok(await (await dialog.find(testid("destructive-warning"))).isDisplayed());
  const approve = await dialog.find(testid("approve-button"));
  assert.equal(await approve.isEnabled(), false, "Approve starts disabled");
  assert.deepEqual(await dialog.findAll(testid("always-allow-button")), [], "no Always allow for destructive code");
  await screenshot(s, "destructive-dialog");

  // Enter on the dialog (focus starts on the code) and a click on the disabled button decide
  // nothing: the same dialog stays open, no cell appears.
  const id = await dialog.attribute("data-approval-id");
  await s.pressKeys("\uE007");
  await approve.click().catch(() => {});
  const still = await approvalDialog(s);
  assert.equal(await still.attribute("data-approval-id"), id);
  assert.equal((await cells(s)).length, 0);

  await (await dialog.find(testid("destructive-confirm"))).click();
  await s.waitUntil("Approve to be enabled after confirming", () => approve.isEnabled());
  assert.deepEqual(await dialog.findAll(testid("always-allow-button")), [], "nor once the confirmation is ticked");
  assert.doesNotMatch(await textContent(s, dialog), /always allow/i);
  await approve.click();
  await s.waitGone(testid("approval-dialog"));

  const cell = await finishedCell(s);
  assert.equal(cell.state, "ok");
  await waitForCellOutput(s, cell.el, "removed\n");
  await waitForAssistant(s, "Cleaned up");
  assert.deepEqual(workspaceFiles(app).filter((f) => f === "scratch"), []);
});
