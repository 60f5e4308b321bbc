// A damaged history (issue 12, item 4): the real app used to fail in setup ("Failed to setup
// app") and never opened a window. Now it opens on the recovery screen, which names the file,
// what was wrong and the one copy kept; "Start fresh" then brings up the normal app on an empty
// history, without a restart, and the copy stays byte for byte what was found.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";

import { prepare } from "./lib/harness.mjs";
import { screenshot } from "./lib/ui.mjs";

test("the app opens on a damaged history, shows the recovery screen, and Start fresh continues", { timeout: 180_000 }, async (t) => {
  const app = await prepare(t);
  const history = path.join(app.dataDir, "history.sqlite3");
  const damaged = Buffer.from("this was a history once, now it is text\n".repeat(400));
  fs.writeFileSync(history, damaged);

  const s = await app.start();
  await s.waitForTestId("recovery-screen");
  assert.equal(await (await s.byTestId("recovery-path")).text(), history);
  assert.match(await (await s.byTestId("recovery-problem")).text(), /SQLite/);
  const backup = await s.execute("return arguments[0].value;", [await s.byTestId("recovery-backup-path")]);
  assert.match(path.basename(backup), /^history\.sqlite3\.corrupt-\d+$/);
  assert.ok(fs.readFileSync(backup).equals(damaged), "the copy shown is the damaged file");
  await screenshot(s, "recovery-screen");

  await (await s.byTestId("recovery-start-fresh")).click();
  // The normal app, in the same window and process: a conversation to type into.
  await s.waitForTestId("message-input", { timeoutMs: 60_000 });
  const banner = await s.waitForTestId("chat-banner");
  assert.match(await banner.text(), /Started a fresh, empty history/);
  assert.equal(fs.readFileSync(history).subarray(0, 16).toString("latin1"), "SQLite format 3\0");
  assert.ok(fs.readFileSync(backup).equals(damaged), "the copy is kept unchanged");
  const copies = fs.readdirSync(app.dataDir).filter((n) => n.includes(".corrupt-") && !n.endsWith("-wal"));
  assert.deepEqual(copies, [path.basename(backup)], "one copy per damage");

  // And it stays working: the next start opens the new history directly.
  const again = await app.restart();
  await again.waitForTestId("message-input", { timeoutMs: 60_000 });
  assert.equal(await again.execute("return !!document.querySelector('[data-testid=recovery-screen]');"), false);
});
