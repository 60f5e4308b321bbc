// Editing a sent message in the app: the pencil on the person's message opens an editor, and
// sending it opens a new conversation that branches there, with the files as they were at that
// point and a fresh interpreter; the original conversation is left as it was.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";

import { prepare } from "./lib/harness.mjs";
import { testid, RetryableError } from "./lib/webdriver.mjs";
import { approvalDialog, screenshot, sendMessage, textContent, waitForAssistant } from "./lib/ui.mjs";

const run = (id, code) => ({ type: "toolCalls", text: [], calls: [{ id, name: "run_code", argumentChunks: [JSON.stringify({ language: "python", code })] }] });

async function approve(s) {
  const dialog = await approvalDialog(s);
  await (await dialog.find(testid("approve-button"))).click();
  await s.waitGone(testid("approval-dialog"));
}

test("editing a sent message branches the conversation with the files as they were", { timeout: 300_000 }, async (t) => {
  const replies = [
    run("c1", "kept = 41\nopen('a.txt', 'w').write('one')"),
    { type: "text", chunks: ["Wrote a.txt."] },
    run("c2", "open('a.txt', 'w').write('two')"),
    { type: "text", chunks: ["Changed it."] },
    run("c3", "print(open('a.txt').read(), 'kept' in globals())"),
    { type: "text", chunks: ["It still says one."] },
  ];
  const app = await prepare(t, { replies });
  const s = await app.start();

  await sendMessage(s, "write one");
  await approve(s);
  await waitForAssistant(s, "Wrote a.txt.");
  await sendMessage(s, "now change it to two");
  await approve(s);
  await waitForAssistant(s, "Changed it.");
  const original = await (await s.find(`${testid("conversation-item")}.active`)).attribute("data-id");

  // The pencil shows on the message once it is saved; the editor holds what was typed.
  const second = (await s.findAll(testid("message", '[data-role="user"]')))[1];
  await second.hover();
  const edit = await second.find(testid("edit-message"));
  await s.waitUntil("the message to be editable", async () => (await edit.attribute("hidden")) === null);
  await edit.click();
  const input = await second.find(testid("edit-input"));
  assert.equal(await s.execute("return arguments[0].value", [input]), "now change it to two");
  await input.clear();
  await input.sendKeys("leave it, just read it");
  await screenshot(s, "branch-edit");
  await (await second.find(testid("edit-send"))).click();

  // A new conversation, opened, with the first exchange and a note about the branch.
  await s.waitUntil("the branch to open", async () => {
    const active = await (await s.find(`${testid("conversation-item")}.active`)).attribute("data-id");
    if (active === original) throw new RetryableError("still the original");
    return active;
  });
  const note = await s.waitUntil("the branch's note", async () => {
    const text = await textContent(s, await s.byTestId("chat-view"));
    if (!text.includes("branched from")) throw new RetryableError("no note yet");
    return text;
  });
  assert.match(note, /1 later run taken back/);
  assert.equal(note.split("branched from").length - 1, 1, "said once");
  assert.doesNotMatch(note, /now change it to two/);
  await approve(s);
  await waitForAssistant(s, "It still says one.");
  await screenshot(s, "branch");
  const last = app.llm.chatRequests().at(-1).body.messages;
  const results = last.filter((m) => m.role === "tool").map((m) => m.content);
  assert.match(results.at(-1), /one False/, "the branch's files as they were, and a fresh interpreter");
  const texts = JSON.stringify(last);
  assert.match(texts, /leave it, just read it/);
  assert.doesNotMatch(texts, /now change it to two/);

  // The original is as it was: its file still says two.
  const workspace = path.join(app.dataDir, "workspaces", original);
  assert.equal(fs.readFileSync(path.join(workspace, "a.txt"), "utf8"), "two");
});
