// The shipped default on a machine without a GPU: the webview draws without compositing
// (src-tauri/src/rendering.rs; compositing through software OpenGL stalled frames for 100–800 ms).
// The suite runs twice (scripts/test.sh): compositing, and then as people without a GPU get the
// app (IRONCLAW_GPU=off, screenshots taken from the X server). This flow runs without
// compositing in both.

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
  assert.ok(glDrivers(web.pid).some((f) => /\/dri\//.test(f)), "the web process maps Mesa's driver");
  assert.deepEqual(glDrivers(shell.pid), [], "the app's own process maps no OpenGL driver");
  // That driver runs as softpipe on the app's LLVM stand-in (build/stand_ins.rs: 26 MiB less),
  // and the whole turn above ran with it.
  const llvm = glDrivers(web.pid).filter((f) => /libLLVM/.test(f));
  assert.ok(llvm.length > 0, "the web process maps an LLVM");
  assert.deepEqual(llvm.filter((f) => !f.includes("/stand-ins/gl/")), [], "only the stand-in");
  const webEnv = fs.readFileSync(`/proc/${web.pid}/environ`, "utf8").split("\0");
  assert.ok(webEnv.includes("GALLIUM_DRIVER=softpipe"), "the web process draws with softpipe");
});

/** The files a process has mapped whose names match `pattern`. */
function mapped(pid, pattern) {
  const maps = fs.readFileSync(`/proc/${pid}/maps`, "utf8");
  return [...new Set(maps.split("\n").map((l) => l.split(/\s+/)[5] ?? "").filter((f) => pattern.test(f)))];
}

test("every WebKit process loads the silent speech stand-in, and a page that speaks gets silence", { timeout: 120_000 }, async (t) => {
  const app = await prepare(t, { replies: [], screenshots: false });
  const s = await app.start();
  const all = processes();
  const shell = all.find((p) => p.comm === "ironclaw-app" && p.pgid === app.driver.pid);
  assert.ok(shell, "the app's process");
  const webkit = all.filter((p) => p.ppid === shell.pid && /^WebKit(Web|Network)P/.test(p.comm));
  assert.deepEqual(webkit.map((p) => p.comm.slice(0, 9)).sort(), ["WebKitNet", "WebKitWeb"], "the web and network processes");
  // Each maps a Flite, and only the stand-in (build/stand_ins.rs): WebKit links Flite in all
  // three, and the system's costs about 5.5 MiB in each.
  for (const p of [shell, ...webkit]) {
    const flite = mapped(p.pid, /libflite/);
    assert.ok(flite.length > 0, `${p.comm} maps a Flite`);
    assert.deepEqual(flite.filter((f) => !f.includes("/stand-ins/speech/")), [], `${p.comm} maps only the stand-in`);
  }
  // The LLVM stand-in is for drawing without compositing (the suite's second pass,
  // IRONCLAW_GPU=off); a compositing web process keeps the system's LLVM for llvmpipe.
  const web = webkit.find((p) => p.comm.startsWith("WebKitWeb"));
  const llvm = mapped(web.pid, /libLLVM/);
  assert.ok(llvm.length > 0, "the web process maps an LLVM");
  const software = process.env.IRONCLAW_GPU === "off";
  assert.equal(llvm.every((f) => f.includes("/stand-ins/gl/")), software, `the web process maps ${llvm.join(", ")}`);

  // A page that does speak reaches the stand-in (its four silent voices are what WebKit lists)
  // and gets silence: the web process lives on and the page still answers.
  const voices = await s.execute(`
    speechSynthesis.speak(new SpeechSynthesisUtterance("hello"));
    return new Promise((resolve) => setTimeout(() => resolve(speechSynthesis.getVoices().map((v) => v.name)), 1000));`);
  assert.ok(["awb", "kal", "rms", "slt"].every((v) => voices.some((name) => name.includes(v))), `the stand-in's voices, got ${JSON.stringify(voices)}`);
  assert.equal(await s.execute("return 6 * 7;"), 42);
  assert.ok(processes().some((p) => p.pid === web.pid && p.state !== "Z"), "the web process still runs");
});
