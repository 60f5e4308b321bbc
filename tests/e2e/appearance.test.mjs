// What people expect of a desktop app: the system's light/dark theme (and a choice in Settings),
// text that follows the system's font size with a remembered zoom, and the window where they left it.
// All of it remembered across restarts of the real app.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";

import { prepare, runCodeReplies } from "./lib/harness.mjs";
import { Keys, testid } from "./lib/webdriver.mjs";
import { approvalDialog, finishedCell, screenshot, sendMessage, waitForAssistant } from "./lib/ui.mjs";
import { choose, look } from "./lib/look.mjs";

/** System settings as GTK reads them (theme, font), in this test's own XDG config folder. */
function systemSettings(app, ...lines) {
  const dir = path.join(app.xdgConfig, "gtk-3.0");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "settings.ini"), `[Settings]\n${lines.join("\n")}\n`);
}

/** The system prefers dark, as GTK (and so WebKitGTK's prefers-color-scheme) reads it. */
function systemPrefersDark(app) {
  systemSettings(app, "gtk-application-prefer-dark-theme=1");
}

function near(actual, expected, what) {
  assert.ok(Math.abs(actual - expected) < 0.05, `${what}: ${actual}px, expected ${expected}px`);
}

const PLOT = `rows = [("north", 120), ("south", 80), ("east", 95)]
for name, total in rows:
    print(f"{name:>6} {'#' * (total // 10)} {total}")
`;

test("the theme follows the system's dark setting; Settings can force light or dark, remembered", { timeout: 240_000 }, async (t) => {
  const app = await prepare(t, { replies: runCodeReplies("python", PLOT, { before: ["Here are the totals as bars."], after: "North sells the most: **120**." }) });
  systemPrefersDark(app);
  let s = await app.start();
  await s.waitForTestId("chat-view");
  let now = await look(s);
  assert.equal(now.systemDark, true, "GTK prefers dark, so the webview reports prefers-color-scheme: dark");
  assert.equal(now.theme, "system");
  assert.equal(now.dark, true, `following the system, the window is dark (luminance ${now.luminance})`);

  // The user guide's dark-mode shot: a chat with a finished cell.
  await sendMessage(s, "Show the sales totals per region as bars");
  await (await (await approvalDialog(s)).find(testid("approve-button"))).click();
  const cell = await finishedCell(s);
  assert.equal(cell.state, "ok");
  await waitForAssistant(s, "North sells the most");
  await screenshot(s, "dark-mode");

  await (await s.byTestId("open-settings")).click();
  await s.waitForTestId("settings-screen");
  assert.equal(await (await s.byTestId("settings-theme")).property("value"), "system");
  await choose(s, "settings-theme", "light");
  now = await look(s);
  assert.equal(now.dark, false, "Light applies at once, whatever the system says");
  await s.pressKeys(Keys.ESCAPE);
  await s.waitGone(testid("settings-screen"));

  s = await app.restart();
  await s.waitForTestId("chat-view");
  now = await look(s);
  assert.equal(now.systemDark, true);
  assert.equal(now.dark, false, "the Light choice is remembered across a restart");
  await (await s.byTestId("open-settings")).click();
  assert.equal(await (await s.waitForTestId("settings-theme")).property("value"), "light");
  await choose(s, "settings-theme", "dark");
  assert.equal((await look(s)).dark, true);
  await choose(s, "settings-theme", "system");
  now = await look(s);
  assert.equal(now.theme, "system");
  assert.equal(now.dark, true, "back to following the system");
});

test("a light system theme gives a light window, and Dark in Settings overrides it", { timeout: 120_000 }, async (t) => {
  const app = await prepare(t);
  const s = await app.start();
  await s.waitForTestId("chat-view");
  let now = await look(s);
  assert.equal(now.systemDark, false);
  assert.equal(now.dark, false);
  await (await s.byTestId("open-settings")).click();
  await s.waitForTestId("settings-theme");
  await choose(s, "settings-theme", "dark");
  now = await look(s);
  assert.equal(now.dark, true);
  // Native controls follow too: the page asks the engine for dark form controls and scrollbars.
  assert.equal(await s.execute("return getComputedStyle(document.documentElement).colorScheme"), "dark");
});

test("text follows the system's font size, and Ctrl+= / Ctrl+- / Ctrl+0 zoom it, remembered", { timeout: 120_000 }, async (t) => {
  const app = await prepare(t);
  // A larger system font than any default: 15 pt at 96 dpi is 20 px.
  systemSettings(app, "gtk-font-name=DejaVu Sans 15");
  let s = await app.start();
  await s.waitForTestId("chat-view");
  let now = await look(s);
  assert.equal(now.mediumPx, 20, "the webview's default size is the system font's");
  assert.equal(now.rootPx, now.mediumPx, `the root keeps the webview's default size (${now.mediumPx}px), not a fixed one (${now.rootPx}px)`);
  assert.equal(await s.execute("return parseFloat(getComputedStyle(document.body).fontSize)"), 20, "body text reads at the system's size");
  const hint = () => s.execute("return parseFloat(getComputedStyle(document.querySelector('.composer-hint')).fontSize)");
  const before = await hint();

  await s.pressChord(Keys.CONTROL, "=");
  await s.pressChord(Keys.CONTROL, "=");
  now = await look(s);
  near(now.rootPx, now.mediumPx * 1.25, "two steps up is 125%");
  assert.ok(Math.abs((await hint()) - before * 1.25) < 0.5, "text sized in rem grows with the zoom");

  s = await app.restart();
  await s.waitForTestId("chat-view");
  now = await look(s);
  near(now.rootPx, now.mediumPx * 1.25, "the zoom is remembered across a restart");
  await (await s.byTestId("open-settings")).click();
  assert.equal(await (await s.waitForTestId("settings-zoom")).property("value"), "1.25");
  await s.pressKeys(Keys.ESCAPE);

  await s.pressChord(Keys.CONTROL, "0");
  now = await look(s);
  assert.equal(now.rootPx, now.mediumPx);
  await s.pressChord(Keys.CONTROL, "-");
  now = await look(s);
  near(now.rootPx, now.mediumPx * 0.85, "one step down from 100% is 85%");
});

test("window size and position are remembered; a place off the screen now is fitted back onto it", { timeout: 120_000 }, async (t) => {
  const app = await prepare(t);
  let s = await app.start();
  await s.waitForTestId("chat-view");
  const wanted = { x: 60, y: 50, width: 1000, height: 680 };
  await s.setWindowRect(wanted);
  const stateFile = path.join(app.configDir, "window-state.json");
  // The window-state plugin rewrites the file in place: a read can land between its truncation
  // and its write, which is "not saved yet", not a failure.
  const saved = () => {
    try {
      return JSON.parse(fs.readFileSync(stateFile, "utf8")).main ?? null;
    } catch {
      return null;
    }
  };
  // Saved once the move settles, not only at a clean exit (a session closed by a signal never gets there).
  await s.waitUntil("the new size and position to be saved", () => {
    const m = saved();
    return m && m.x === wanted.x && m.y === wanted.y && m.width === wanted.width;
  });

  s = await app.restart();
  await s.waitForTestId("chat-view");
  const back = await s.windowRect();
  assert.deepEqual({ x: back.x, y: back.y, width: back.width, height: back.height }, wanted);

  // The screen it was on is gone: a position far right of the 1280×800 display, then one
  // where only the window's top-left corner is still on it, then a size larger than the screen.
  for (const [what, saved, keepsSize] of [
    ["a position no screen shows", { x: 4000, y: 3000 }, true],
    ["a position with only a corner on the screen", { x: 1200, y: 740 }, true],
    ["a size larger than the screen", { x: 200, y: 100, width: 2400, height: 1500 }, false],
  ]) {
    await app.quit();
    const state = JSON.parse(fs.readFileSync(stateFile, "utf8"));
    Object.assign(state.main, wanted, saved, { prev_x: saved.x, prev_y: saved.y });
    fs.writeFileSync(stateFile, JSON.stringify(state));
    s = await app.start();
    await s.waitForTestId("chat-view");
    const placed = await s.windowRect();
    const screen = await s.execute("return { w: screen.width, h: screen.height }");
    assert.ok(
      placed.x >= 0 && placed.y >= 0 && placed.x + placed.width <= screen.w && placed.y + placed.height <= screen.h,
      `${what}: the window is wholly on the screen: ${JSON.stringify(placed)} on ${JSON.stringify(screen)}`,
    );
    if (keepsSize) assert.equal(placed.width, wanted.width, `${what}: the size is still the remembered one`);
  }
});
