// The tray icon, on a real StatusNotifier host (gtk-sni-tray-standalone with its watcher, on
// the test's session bus and virtual display): the app's item is registered; its label and
// first menu entry count the approvals waiting, across conversations, and clear when they are
// decided; clicking that entry (what the host does on a click: the item is a menu) brings the
// window to the OLDEST approval, not to the conversation on screen.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";

import { LOG_DIR, prepare } from "./lib/harness.mjs";
import { approvalDialog, sendMessage, SCREENSHOT_DIR, textContent } from "./lib/ui.mjs";
import { clickMenuEntry, itemProperties, menuEntries, startTrayHost, theOnlyItem } from "./lib/tray.mjs";
import { Keys, sleep, testid } from "./lib/webdriver.mjs";

const run = promisify(execFile);

const CODE_A = "print('first, so the oldest')";
const CODE_B = "print('second')";

function asks(id, code) {
  return { type: "toolCalls", text: [], calls: [{ id, name: "run_code", argumentChunks: [JSON.stringify({ language: "python", code })] }] };
}

/** Polls the item until `probe(props, entries)` holds; fails with what it last saw. */
async function trayShows(item, what, probe, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    const props = await itemProperties(item);
    const entries = await menuEntries(item);
    last = { label: props.XAyatanaLabel, entries: entries.map((e) => e.label) };
    if (probe(props, entries)) return entries;
    await sleep(150);
  }
  throw new Error(`the tray never showed ${what}; last: ${JSON.stringify(last)}`);
}

async function dialogCode(s) {
  const dialog = await approvalDialog(s);
  return textContent(s, await dialog.find(testid("approval-code")));
}

/** The whole virtual screen: the app, and the host's bar at the top right. */
async function trayScreenshot(name) {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await run("import", ["-window", "root", file]);
  return file;
}

test("the tray icon counts pending approvals and a click opens the oldest", { timeout: 240_000 }, async (t) => {
  await startTrayHost(t, path.join(LOG_DIR, "tray-host.log"));
  const app = await prepare(t, {
    replies: [asks("call_a", CODE_A), asks("call_b", CODE_B), { type: "text", chunks: ["Not run."] }, { type: "text", chunks: ["Not run."] }],
  });
  const s = await app.start();

  const item = await theOnlyItem();
  const props = await itemProperties(item);
  assert.equal(props.Status, "Active");
  assert.ok(props.IconName || props.IconThemePath, `the item names an icon: ${JSON.stringify(props)}`);
  const idle = await menuEntries(item);
  assert.deepEqual(idle.map((e) => e.label), ["No approvals pending", "Show IronClaw", "Quit"]);
  assert.equal(props.XAyatanaLabel, "", "no count next to the icon while nothing waits");
  const idleIcon = fs.readFileSync(props.IconName);

  // One approval waits in the first conversation.
  await sendMessage(s, "first question");
  assert.equal(await dialogCode(s), CODE_A);
  await trayShows(item, "one pending", (p, e) => p.XAyatanaLabel === "1" && e[0]?.label === "1 approval pending — review it");

  // A second conversation (the dialog closed with Escape, undecided), and a second approval,
  // which is the one on screen now.
  await s.pressKeys(Keys.ESCAPE);
  await s.waitGone(testid("approval-dialog"));
  await (await s.byTestId("new-conversation")).click();
  await sendMessage(s, "second question");
  await s.waitUntil("the second conversation's dialog", async () => (await dialogCode(s)) === CODE_B);
  const entries = await trayShows(item, "two pending", (p, e) => p.XAyatanaLabel === "2" && e[0]?.label === "2 approvals pending — review the oldest");

  // The count is drawn on the icon itself: hosts that show no label still show it.
  const badged = await itemProperties(item);
  assert.notDeepEqual(fs.readFileSync(badged.IconName), idleIcon, "the icon changed with the count");

  // As a person does it: a click on the drawn icon opens its menu (the item is a menu: the
  // host shows it); a click on the count goes to the oldest approval, in the other conversation.
  // A WebDriver screenshot has the webview paint its current frame, which an X capture of the
  // screen otherwise may show stale.
  await s.screenshot();
  await run("xdotool", ["mousemove", "1260", "20", "click", "3"]);
  await sleep(800);
  await trayScreenshot("tray");
  await run("xdotool", ["mousemove", "1200", "56", "click", "1"]);
  await s.waitUntil("the oldest approval's dialog", async () => (await dialogCode(s)) === CODE_A, { timeoutMs: 15_000 });
  const active = await s.execute("return document.querySelector('[data-testid=\"conversation-item\"][aria-current=\"page\"]')?.textContent ?? ''");
  assert.match(active, /first question/, "the oldest approval's conversation is the one open");

  // Deciding both clears the count.
  let dialog = await approvalDialog(s);
  await (await dialog.find(testid("deny-reason"))).sendKeys("not now");
  await (await dialog.find(testid("deny-button"))).click();
  await trayShows(item, "one pending after a decision", (p, e) => p.XAyatanaLabel === "1" && e[0]?.label.startsWith("1 approval pending"));
  // The same entry through D-Bus, as any host sends it.
  await clickMenuEntry(item, entries[0].id);
  await s.waitUntil("the remaining approval's dialog", async () => (await dialogCode(s)) === CODE_B, { timeoutMs: 15_000 });
  dialog = await approvalDialog(s);
  await (await dialog.find(testid("deny-reason"))).sendKeys("not now either");
  await (await dialog.find(testid("deny-button"))).click();
  await trayShows(item, "nothing pending", (p, e) => p.XAyatanaLabel === "" && e[0]?.label === "No approvals pending");
});
