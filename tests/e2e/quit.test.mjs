// Quitting the real app — from the tray's "Quit" (as the StatusNotifier host sends it) or by
// closing its window — leaves no sandbox container of its conversations running, where before
// each one kept running until its idle stop with nothing saying so. Settings said beforehand
// how many run and that quitting stops them.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";

import { APP_BIN, LOG_DIR, prepare, processes, runCodeReplies } from "./lib/harness.mjs";
import { approvalDialog, finishedCell, sendMessage } from "./lib/ui.mjs";
import { clickMenuEntry, menuEntries, startTrayHost, theOnlyItem } from "./lib/tray.mjs";
import { sleep, testid } from "./lib/webdriver.mjs";

const run = promisify(execFile);

/** The containers of this data folder, as `{ id, session, spare }` (the relay has no session;
 *  `spare` is set on warm spares, adopted or not). Running ones unless `all`. */
async function containers(instance, { all = false } = {}) {
  const { stdout } = await run("docker", [
    "ps", ...(all ? ["-a"] : ["--filter", "status=running"]),
    "--filter", `label=ironclaw.instance=${instance}`,
    "--format", '{{.ID}} {{.Label "ironclaw.session"}} {{.Label "ironclaw.spare"}}',
  ]);
  return stdout.split("\n").filter(Boolean).map((line) => {
    const [id, session = "", spare = ""] = line.split(" ");
    return { id, session, spare };
  });
}

const running = (instance) => containers(instance);

/** The container label of the one conversation's session: its name, or the label of the warm
 *  spare it adopted (labels cannot change, so the session's record names it). */
function sessionLabel(app) {
  const dir = path.join(app.dataDir, "sessions");
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(".json"));
  assert.equal(files.length, 1, `one session record: ${files}`);
  const record = JSON.parse(fs.readFileSync(path.join(dir, files[0]), "utf8"));
  return record.container ?? record.name;
}

/** The pids of the app's processes in the driver's process group. */
function appPids(pgid) {
  const name = path.basename(APP_BIN).slice(0, 15);
  return processes()
    .filter((p) => p.comm === name && p.pgid === pgid && p.state !== "Z")
    .map((p) => String(p.pid));
}

async function waitForAppExit(app, what) {
  const deadline = Date.now() + 45_000;
  while (Date.now() < deadline) {
    if (appPids(app.driver.pid).length === 0) return;
    await sleep(100);
  }
  throw new Error(`the app was still running 45 s after ${what}`);
}

/** Runs one approved cell, so the conversation's sandbox runs; checks Settings says so. */
async function runSomething(app) {
  const s = await app.start();
  await sendMessage(s, "say hi from the sandbox");
  const dialog = await approvalDialog(s);
  await (await dialog.find(testid("approve-button"))).click();
  const cell = await finishedCell(s);
  assert.equal(cell.state, "ok");
  const label = sessionLabel(app);
  const before = await running(app.instance);
  const sandboxes = before.filter((c) => c.session === label);
  assert.equal(sandboxes.length, 1, `one sandbox runs for the conversation: ${JSON.stringify(before)}`);
  console.log(`# the first run ${label.startsWith("spare-") ? "adopted the warm spare" : "made its own container (no spare was ready yet)"}`);
  // The app keeps a warm spare for the next conversation (made at start, or after adoption).
  const deadline = Date.now() + 30_000;
  let spares = [];
  while (Date.now() < deadline) {
    spares = (await running(app.instance)).filter((c) => c.spare && c.session !== label);
    if (spares.length) break;
    await sleep(200);
  }
  assert.equal(spares.length, 1, `one warm spare runs beside the conversation's sandbox: ${JSON.stringify(await running(app.instance))}`);

  await (await s.byTestId("open-settings")).click();
  const line = await s.waitForTestId("settings-sandboxes-running");
  const text = await s.waitUntil("the running-sandboxes line", async () => (await line.text()).trim() || null);
  assert.equal(text, "Sandboxes running now: 1 (stopped when you quit)");
  await (await s.byTestId("settings-close")).click();
  return { s, sandbox: sandboxes[0] };
}

test("quitting from the tray stops the conversation's sandbox", { timeout: 240_000 }, async (t) => {
  await startTrayHost(t, path.join(LOG_DIR, "quit-tray-host.log"));
  const app = await prepare(t, { replies: runCodeReplies("python", "print('hi')", { after: "It said hi." }) });
  const { sandbox } = await runSomething(app);

  const item = await theOnlyItem();
  const quit = (await menuEntries(item)).find((e) => e.label === "Quit");
  assert.ok(quit, "the tray menu has Quit");
  const clicked = Date.now();
  await clickMenuEntry(item, quit.id);
  await waitForAppExit(app, "Quit");
  console.log(`# tray Quit → app process gone: ${Date.now() - clicked} ms`);
  app.session = null; // the app is gone; nothing to end.

  const left = await running(app.instance);
  assert.deepEqual(left, [], `nothing of this data folder runs after quitting (sandbox was ${sandbox.session})`);
  const spares = (await containers(app.instance, { all: true })).filter((c) => c.spare && c.id !== sandbox.id);
  assert.deepEqual(spares, [], "the warm spare was removed, not just stopped");
  const { stdout } = await run("docker", ["inspect", "-f", "{{.State.Status}}", sandbox.id]);
  assert.equal(stdout.trim(), "exited", "the sandbox is stopped, not removed: its workspace and container come back");
});

/** A small window manager for this test, so a close request goes the way a desktop sends it
 *  (_NET_CLOSE_WINDOW → WM_DELETE_WINDOW to the app). Stopped in `t.after`. */
async function startWindowManager(t) {
  // An empty configuration: no panel, no clock, nothing started.
  const rc = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ironclaw-jwm-")), "jwmrc");
  fs.writeFileSync(rc, '<?xml version="1.0"?>\n<JWM></JWM>\n');
  const wm = spawn("jwm", ["-f", rc], { stdio: "ignore", detached: true });
  t.after(async () => {
    if (wm.pid && wm.exitCode === null && wm.signalCode === null) {
      process.kill(-wm.pid, "SIGTERM");
      await Promise.race([once(wm, "exit"), sleep(3000)]);
    }
  });
  for (let i = 0; i < 100; i++) {
    if (await run("wmctrl", ["-m"]).then(() => true, () => false)) return;
    await sleep(100);
  }
  throw new Error("jwm did not come up (scripts/setup.sh installs it)");
}

test("closing the window quits the same way", { timeout: 240_000 }, async (t) => {
  await startWindowManager(t);
  const app = await prepare(t, { replies: runCodeReplies("python", "print('hi')", { after: "It said hi." }) });
  const { sandbox } = await runSomething(app);

  // The window as the window manager lists it (wmctrl -l: id, desktop, host, title).
  const { stdout } = await run("wmctrl", ["-l"]);
  const windows = stdout.split("\n").filter((line) => / IronClaw/.test(line)).map((line) => line.split(/\s+/)[0]);
  assert.equal(windows.length, 1, `one IronClaw window: ${stdout}`);
  const closed = Date.now();
  await run("wmctrl", ["-i", "-c", windows[0]]);
  await waitForAppExit(app, "closing the window");
  console.log(`# window closed → app process gone: ${Date.now() - closed} ms`);
  app.session = null;

  assert.deepEqual(await running(app.instance), [], `nothing runs after the window closed (sandbox was ${sandbox.session})`);
});

test("a SIGTERM (logout, shutdown, kill) quits the same way", { timeout: 240_000 }, async (t) => {
  const app = await prepare(t, { replies: runCodeReplies("python", "print('hi')", { after: "It said hi." }) });
  const { sandbox } = await runSomething(app);

  const pids = appPids(app.driver.pid);
  assert.equal(pids.length, 1, `one app process: ${pids}`);
  const signalled = Date.now();
  process.kill(Number(pids[0]), "SIGTERM");
  await waitForAppExit(app, "SIGTERM");
  console.log(`# SIGTERM → app process gone: ${Date.now() - signalled} ms`);
  app.session = null;

  assert.deepEqual(await running(app.instance), [], `nothing runs after SIGTERM (sandbox was ${sandbox.session})`);
  const { stdout } = await run("docker", ["inspect", "-f", "{{.State.Status}}", sandbox.id]);
  assert.equal(stdout.trim(), "exited", "stopped by the app, not killed with it");
});
