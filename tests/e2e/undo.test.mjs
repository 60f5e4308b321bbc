// Undo as a person meets it in the app: after two runs, "Rewind files to here" on the first takes
// the second back on disk (Redo offered on its cell), and Settings → Undo history says what is
// kept and keeps a cap that was saved.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";

import { prepare, runCodeReplies } from "./lib/harness.mjs";
import { testid } from "./lib/webdriver.mjs";
import { approvalDialog, cells, finishedCell, screenshot, sendMessage, waitForAssistant } from "./lib/ui.mjs";

async function approveAndFinish(s, said) {
  const dialog = await approvalDialog(s);
  await (await dialog.find(testid("approve-button"))).click();
  await s.waitGone(testid("approval-dialog"));
  assert.equal((await finishedCell(s)).state, "ok");
  await waitForAssistant(s, said);
}

test("rewinding to a run takes the later run back on disk, and Settings keeps an undo cap", { timeout: 300_000 }, async (t) => {
  const app = await prepare(t, {
    replies: [
      ...runCodeReplies("python", "open('first.txt', 'w').write('one\\n')", { id: "call_1", after: "Wrote first.txt." }),
      ...runCodeReplies("python", "open('second.txt', 'w').write('two\\n')", { id: "call_2", after: "Wrote second.txt." }),
    ],
  });
  const s = await app.start();
  await sendMessage(s, "write the first file");
  await approveAndFinish(s, "Wrote first.txt.");
  await sendMessage(s, "now the second one");
  await approveAndFinish(s, "Wrote second.txt.");

  const [ws] = app.workspaces();
  assert.ok(fs.existsSync(path.join(ws, "second.txt")), "the second run wrote its file");
  const [first, second] = await cells(s);
  // Offered on the earlier run only: the newest has nothing after it to take back.
  assert.equal(await (await second.el.find(testid("cell-rewind"))).property("hidden"), true);
  await (await first.el.find(testid("cell-rewind"))).click();
  await s.waitUntil("the second run to be undone", async () =>
    (await (await second.el.find(testid("cell-changes"))).attribute("data-state")) === "undone" ? true : null,
  );
  const status = await first.el.find(testid("cell-undo-status"));
  await s.waitUntil("the rewind to be reported", async () => (/Rewound: 1 later run undone/.test(await status.text()) ? true : null));
  assert.equal(fs.existsSync(path.join(ws, "second.txt")), false, "the later run's file is gone from disk");
  assert.equal(fs.readFileSync(path.join(ws, "first.txt"), "utf8"), "one\n", "the run rewound to keeps its file");
  assert.equal(await (await second.el.find(testid("cell-redo"))).property("hidden"), false, "the undone run offers Redo");
  await screenshot(s, "rewind");

  await (await s.waitForTestId("open-settings")).click();
  await s.waitForTestId("settings-screen");
  const usage = await s.byTestId("settings-undo-usage");
  await s.waitUntil("what undo keeps to be shown", async () => (/^Undo keeps .* of file copies now/.test(await usage.text()) ? true : null));
  const keep = await s.byTestId("settings-undo-keep");
  await keep.clear();
  await keep.sendKeys("1.5");
  await (await s.byTestId("settings-save")).click();
  const saved = await s.find(`${testid("settings-screen")} [role="status"]`);
  await s.waitUntil("the settings to be saved", async () => (/^Saved\./.test(await saved.text()) ? true : null));
  await s.waitUntil("the new cap to be shown", async () => (/at most 1\.5 GB per conversation/.test(await usage.text()) ? true : null));
  await screenshot(s, "settings-undo");
  await s.pressKeys("\uE00C");
  await s.waitGone(testid("settings-screen"), { timeoutMs: 5_000 });
  await (await s.waitForTestId("open-settings")).click();
  assert.equal(await (await s.waitForTestId("settings-undo-keep")).property("value"), "1.5");
});
