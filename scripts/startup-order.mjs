// Records which of the app's functions run from launch to an idle window, and then in a turn,
// and writes them to src-tauri/startup-order.txt, which the release link uses to lay them out
// together (src-tauri/build.rs). Each launch runs the release app under valgrind's callgrind,
// which lists every function that executed at least one instruction:
//   1. the chat, through the e2e harness (a scripted model): launch and idle, dumped; two turns
//      (Send, Approve, output), dumped again; quit, and launch again on the same folders (the
//      conversation in the history, the last launch's warm spare to replace) and idle, dumped;
//   2. plain launches on a home of their own, ended by SIGTERM: with a model set up, twice (the
//      second finds the first's data and warm spare), then the first-run screen (no model set
//      up); each idle, dumped.
// Order: what launches and idle windows run first (what an idle app keeps mapped), then what a
// turn adds, then what quitting does. A function missing from the list costs up to 64 KiB when
// it runs (the kernel maps that much around each first touch), so every kind of launch a person
// meets is recorded. Run by scripts/startup-order.sh, under a virtual display and session bus.
// Usage: node scripts/startup-order.mjs APP OUT

import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

import { benchHome, definedSymbols, launch, removeBenchHome, sleep, stop } from "./bench-app-launch.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// Under callgrind the app starts in about 10 s instead of 0.3; what it does once idle (the
// highlighter, the rehearsed dialog, the warm spare) is done well within this.
const IDLE_MS = 20_000;

const [app, out] = process.argv.slice(2);
if (!app || !out || !fs.existsSync(app)) {
  console.error("usage: node scripts/startup-order.mjs APP OUT");
  process.exit(2);
}
const work = fs.mkdtempSync(path.join(os.tmpdir(), "ironclaw-startup-order-"));

/** `s` as one word for sh. */
const quote = (s) => `'${s.replaceAll("'", "'\\''")}'`;

/** A launcher that runs `app` under callgrind, writing its profiles as `<prefix>.<pid>.out*`. */
function launcher(prefix) {
  const file = path.join(work, `${prefix}.sh`);
  const profile = quote(path.join(work, `${prefix}.%p.out`));
  fs.writeFileSync(
    file,
    `#!/bin/sh\nexec valgrind --tool=callgrind --demangle=no --callgrind-out-file=${profile} ${quote(path.resolve(app))} "$@" 2>>${quote(path.join(work, "valgrind.log"))}\n`,
    { mode: 0o755 },
  );
  return file;
}

/** Asks every running callgrind to write what it has counted since its last dump. */
async function dump() {
  execFileSync("callgrind_control", ["--dump"], { stdio: "ignore" });
  await sleep(2000);
}

/** Waits until no app under callgrind runs (it writes its last profile as it exits). */
async function callgrindDone() {
  const running = () =>
    fs.readdirSync("/proc").some((pid) => {
      try {
        return /^\d+$/.test(pid) && fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--tool=callgrind");
      } catch {
        return false;
      }
    });
  for (let i = 0; i < 300 && running(); i++) await sleep(100);
}

async function chat() {
  process.env.TAURI_WEBVIEW_AUTOMATION = "true";
  const { prepare, runCodeReplies } = await import(path.join(ROOT, "tests/e2e/lib/harness.mjs"));
  const { approvalDialog, sendMessage, waitForAssistant } = await import(path.join(ROOT, "tests/e2e/lib/ui.mjs"));
  const { testid } = await import(path.join(ROOT, "tests/e2e/lib/webdriver.mjs"));
  const replies = [0, 1].flatMap((i) => runCodeReplies("python", `print(${i})`, { id: `call_${i}`, after: `Done ${i}.` }));
  const cleanups = [];
  const t = { name: "startup-order", after: (fn) => cleanups.push(fn) };
  try {
    const harnessApp = await prepare(t, { replies, screenshots: false, appBin: launcher("chat") });
    const s = await harnessApp.start();
    await sleep(IDLE_MS);
    await dump();
    for (const i of [0, 1]) {
      await sendMessage(s, `round ${i}`);
      const d = await approvalDialog(s, { timeoutMs: 120_000 });
      await (await d.find(testid("approve-button"))).click();
      await waitForAssistant(s, `Done ${i}.`, { timeoutMs: 120_000 });
    }
    await dump();
    await harnessApp.quit();
    await callgrindDone();
    await harnessApp.start();
    await sleep(IDLE_MS);
    await dump();
  } finally {
    for (const fn of cleanups.reverse()) await fn();
    // The plain launches below are launched as a person launches the app.
    delete process.env.TAURI_WEBVIEW_AUTOMATION;
  }
}

/** Launches on a home of their own, each idle and dumped, then ended by SIGTERM (as a session's
 *  logout ends it): with a model set up, twice (the second finds the first's data and warm
 *  spare), then without (the first-run screen). What `scripts/bench-app.sh` launches. */
async function plainLaunches() {
  const home = benchHome();
  try {
    for (const name of ["launch", "relaunch", "first-run"]) {
      if (name === "first-run") fs.rmSync(path.join(home.root, "config/provider.yaml"));
      const { child } = await launch(launcher(name), home.env);
      await sleep(IDLE_MS);
      await dump();
      await stop(child);
      await callgrindDone();
    }
  } finally {
    await removeBenchHome(home.root);
  }
}

/** The functions of `binary` that callgrind profile `file` saw run, in the order listed. */
function functionsRun(file, binary, known) {
  const names = { ob: new Map(), fn: new Map() };
  // Callgrind compresses repeated names: "(12) name" defines id 12, "(12)" refers to it.
  const resolve = (kind, value) => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(value);
    if (!m) return value;
    if (m[2] !== undefined) names[kind].set(m[1], m[2]);
    return names[kind].get(m[1]);
  };
  const found = [];
  let object = null;
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const m = /^(c?)(ob|fn)=(.*)$/.exec(line);
    if (!m) continue;
    const name = resolve(m[2], m[3].trim());
    if (m[1]) continue;
    if (m[2] === "ob") object = name;
    else if (object && path.basename(object) === path.basename(binary) && known.has(name)) found.push(name);
  }
  return found;
}

try {
  await chat();
  await plainLaunches();
  await callgrindDone();
  // "<launcher>.<pid>.out.1" is a launch's idle dump, ".2" its turns, and "<launcher>.<pid>.out"
  // what callgrind wrote at exit (quitting). Idle dumps first, each kind in the order written.
  const phase = (f) => ({ 1: 0, 2: 1 })[/\.out\.(\d+)$/.exec(f)?.[1]] ?? 2;
  const written = (f) => fs.statSync(path.join(work, f)).mtimeMs;
  const profiles = fs.readdirSync(work).filter((f) => /\.out(\.\d+)?$/.test(f));
  profiles.sort((a, b) => phase(a) - phase(b) || written(a) - written(b));
  const idle = profiles.filter((f) => phase(f) === 0).length;
  const turns = profiles.filter((f) => phase(f) === 1).length;
  if (idle < 5 || turns < 1) {
    throw new Error(`callgrind wrote ${idle} of 5 idle profiles and ${turns} of 1 turn profile; see ${work}/valgrind.log`);
  }
  const text = definedSymbols(app, { code: true });
  const order = [];
  const seen = new Set();
  for (const profile of profiles) {
    // Sorted within each profile: callgrind lists functions in no stable order, and where a
    // function sits among those of its phase changes nothing (all of them run), so a new
    // recording's diff shows only what changed.
    const added = [...new Set(functionsRun(path.join(work, profile), app, text))].filter((name) => !seen.has(name)).sort();
    for (const name of added) seen.add(name);
    order.push(...added);
    console.error(`${profile}: ${added.length} functions`);
  }
  fs.writeFileSync(out, order.join("\n") + "\n");
  console.error(`wrote ${order.length} functions to ${out}`);
  fs.rmSync(work, { recursive: true, force: true });
} catch (e) {
  console.error(`startup order not written: ${e.message} (profiles kept in ${work})`);
  process.exit(1);
}
