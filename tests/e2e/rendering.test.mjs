// The shipped default on a machine without a GPU: the webview draws without compositing
// (src-tauri/src/rendering.rs; compositing through software OpenGL stalled frames for 100–800 ms).
// The rest of the suite composites, because WebKitWebDriver's screenshot command hangs without
// it once a modal dialog was shown; this flow runs the way people without a GPU get the app, and
// takes no screenshot.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";

import { prepare, processes, runCodeReplies } from "./lib/harness.mjs";
import { testid } from "./lib/webdriver.mjs";
import { approvalDialog, finishedCell, sendMessage, waitForAssistant } from "./lib/ui.mjs";

/** The OpenGL driver files a process has mapped: Mesa's DRI drivers, its gallium core, LLVM. */
function glDrivers(pid) {
  const maps = fs.readFileSync(`/proc/${pid}/maps`, "utf8");
  return [...new Set(maps.split("\n").map((l) => l.split(/\s+/)[5] ?? "").filter((f) => /\/dri\/|libgallium|libLLVM/.test(f)))];
}

test("without compositing a turn runs end to end: dialog, approval, output", { timeout: 180_000 }, async (t) => {
  const app = await prepare(t, {
    replies: runCodeReplies("python", "print(6 * 7)", { after: "It is 42." }),
    env: { IRONCLAW_GPU: "off" },
    screenshots: false,
  });
  const s = await app.start();
  await sendMessage(s, "what is six times seven?");
  const dialog = await approvalDialog(s);
  assert.equal(await dialog.isDisplayed(), true);
  await (await dialog.find(testid("approve-button"))).click();
  const cell = await finishedCell(s);
  assert.equal(cell.stdout, "42\n");
  await waitForAssistant(s, "It is 42.");
  // The app really took the path this test is about (its log, written by the driver's process).
  const log = fs.readFileSync(app.logFile, "utf8");
  assert.match(log, /webview compositing[^\n]*choice[^\n]*Software/);

  // Without compositing the app's own process draws nothing with OpenGL, so no driver loads
  // there (`rendering::gl`, about 17 MiB). The web process needs an EGL display and maps Mesa:
  // proof that this check sees a loaded driver.
  const all = processes();
  const shell = all.find((p) => p.comm === "ironclaw-app" && p.pgid === app.driver.pid);
  assert.ok(shell, "the app's process");
  const web = all.find((p) => p.ppid === shell.pid && p.comm.startsWith("WebKitWebProces"));
  assert.ok(web, "the app's web process");
  assert.ok(glDrivers(web.pid).length > 0, "the web process maps an OpenGL driver");
  assert.deepEqual(glDrivers(shell.pid), [], "the app's own process maps no OpenGL driver");
});
