// Startup and idle memory of the built desktop app. Launches it N times on the current display
// with IRONCLAW_REPORT_READY=1 (the app prints `ironclaw-ready ms=<n>` once the first screen is
// interactive), then measures one instance's idle memory: PSS from /proc/PID/smaps_rollup summed
// over the app and its WebKit child processes, ~5 s after it became ready.
// Usage: node scripts/bench-app.mjs APP_BINARY [RUNS]   (scripts/bench-app.sh sets it all up)

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import { benchHome, launch, percentile, pssKiB, removeBenchHome, sleep, startupOrderLine, stop, tree } from "./bench-app-launch.mjs";
import { measureWaits } from "./bench-app-wait.mjs";

const [app, runsArg, roundsArg] = process.argv.slice(2);
const RUNS = Number(runsArg ?? 10);
const ROUNDS = Number(roundsArg ?? 20);
const TARGET_MS = 1500;
const IDLE_MS = 5000;
if (!app || !fs.existsSync(app)) {
  console.error(`usage: node scripts/bench-app.mjs APP_BINARY [RUNS] (no app at ${app}: bash scripts/build-app.sh --release)`);
  process.exit(2);
}

const { root, env } = benchHome();

try {
  // One unmeasured launch warms the page cache and creates the data folder and database.
  await stop((await launch(app, env)).child);
  const app_ms = [];
  const wall_ms = [];
  for (let i = 0; i < RUNS; i++) {
    const { child, appMs, wallMs } = await launch(app, env);
    app_ms.push(appMs);
    wall_ms.push(wallMs);
    await stop(child);
  }
  const idle = async (extra) => {
    const { child } = await launch(app, { ...env, ...extra });
    await sleep(IDLE_MS);
    const found = tree(child.pid).map((p) => ({ ...p, pssKiB: pssKiB(p.pid) }));
    await stop(child);
    return found;
  };
  // As shipped (on a machine without a GPU: no compositing), then compositing through
  // software OpenGL, which is what WebKit does unless told otherwise.
  const procs = await idle({});
  const gpuProcs = await idle({ IRONCLAW_GPU: "on" });
  // WebKit's own caches and engines, as before `rendering::lighten`.
  const fullProcs = await idle({ IRONCLAW_WEBKIT_LEAN: "off" });
  // OpenGL drivers loaded in the app's own process too, as before `rendering::gl`.
  const glProcs = await idle({ IRONCLAW_APP_GL: "on" });
  // JavaScriptCore without its JIT tiers: less memory, slower waits
  // (docs/benchmarks.md#app-idle-memory).
  const jitProcs = await idle({ JSC_useJIT: "false" });
  const waits = await measureWaits(app, { rounds: ROUNDS });
  const gpuWaits = await measureWaits(app, { rounds: ROUNDS, env: { IRONCLAW_GPU: "on" } });
  // A new conversation's first run: in the warm spare (as shipped), and making its container.
  const firstRuns = Math.max(3, Math.ceil(ROUNDS / 2));
  const spareWaits = await measureWaits(app, { rounds: firstRuns, warmups: 1, newConversations: true });
  const noSpareWaits = await measureWaits(app, { rounds: firstRuns, warmups: 1, newConversations: true, sandboxYaml: "warm_spare: false\n" });

  app_ms.sort((a, b) => a - b);
  wall_ms.sort((a, b) => a - b);
  const p50 = percentile(app_ms, 50);
  const p95 = percentile(app_ms, 95);
  const w50 = percentile(wall_ms, 50);
  const w95 = percentile(wall_ms, 95);
  const sumMiB = (found) => found.reduce((s, p) => s + p.pssKiB, 0) / 1024;
  const [totalMiB, gpuMiB, fullMiB, glMiB, jitMiB] = [procs, gpuProcs, fullProcs, glProcs, jitProcs].map(sumMiB);
  const mib = (k) => (k / 1024).toFixed(1);
  const breakdown = procs
    .filter((p) => p.pssKiB > 0)
    .map((p) => `${p.comm === "app" ? path.basename(app) : p.comm} ${mib(p.pssKiB)}`)
    .join(", ");

  const load = os.loadavg().map((l) => l.toFixed(1)).join(" ");
  console.log(`IronClaw desktop app, ${RUNS} launches on ${os.cpus().length} CPU(s) (load average ${load}), ${path.basename(app)} (${(fs.statSync(app).size / 1048576).toFixed(1)} MiB binary)\n`);
  console.log("| measure | IronClaw (measured here) | reference |");
  console.log("| --- | --- | --- |");
  console.log(`| start → interactive window, p50 (app's own clock) | ${p50.toFixed(0)} ms (${(p50 / TARGET_MS).toFixed(2)}× the target) | target 1500 ms |`);
  console.log(`| start → interactive window, p95 (app's own clock) | ${p95.toFixed(0)} ms (${(p95 / TARGET_MS).toFixed(2)}× the target) | target 1500 ms |`);
  console.log(`| exec → ready line, p50 / p95 (wall clock) | ${w50.toFixed(0)} / ${w95.toFixed(0)} ms | target 1500 ms |`);
  console.log(`| idle memory after ${IDLE_MS / 1000} s (PSS, app + WebKit processes) | ${totalMiB.toFixed(0)} MiB | Electron desktop chat/agent apps: commonly reported at 300–600 MiB idle and more; a bare Electron window: commonly reported at ~100–150 MiB |`);
  const ms = (v) => v.toFixed(1);
  const gpuNote = fs.existsSync("/dev/dri") ? "" : " (this machine has no GPU: as shipped, no compositing)";
  console.log(`| idle memory, compositing through software OpenGL (IRONCLAW_GPU=on) | ${gpuMiB.toFixed(0)} MiB | |`);
  console.log(`| idle memory with WebKit's default caches and engines (IRONCLAW_WEBKIT_LEAN=off) | ${fullMiB.toFixed(0)} MiB | |`);
  console.log(`| idle memory with OpenGL drivers in the app's own process (IRONCLAW_APP_GL=on) | ${glMiB.toFixed(0)} MiB | |`);
  console.log(`| idle memory without JavaScriptCore's JIT (JSC_useJIT=false; not shipped: the waits grow) | ${jitMiB.toFixed(0)} MiB | |`);
  console.log(`| Send → approval dialog on screen (X server), p50 / p95 (${waits.n} turns, a model that answers at once)${gpuNote} | ${ms(waits.dialog.p50)} / ${ms(waits.dialog.p95)} ms (in the page's DOM: ${ms(waits.dialogDom.p50)} / ${ms(waits.dialogDom.p95)} ms) | IRONCLAW_GPU=on: ${ms(gpuWaits.dialog.p50)} / ${ms(gpuWaits.dialog.p95)} ms |`);
  console.log(`| Approve → first output byte on screen (X server), p50 / p95 (${waits.n} runs of \`print(n)\`, warm sandbox)${gpuNote} | ${ms(waits.output.p50)} / ${ms(waits.output.p95)} ms (in the page's DOM: ${ms(waits.outputDom.p50)} / ${ms(waits.outputDom.p95)} ms) | IRONCLAW_GPU=on: ${ms(gpuWaits.output.p50)} / ${ms(gpuWaits.output.p95)} ms; target p50 ≤ 30 ms |`);
  console.log(`| a new conversation's first run: Approve → first output byte on screen (X server), p50 / p95 (${spareWaits.n} new conversations, the warm spare ready; ${spareWaits.adopted} of ${spareWaits.conversations} conversations ran in an adopted spare)${gpuNote} | ${ms(spareWaits.output.p50)} / ${ms(spareWaits.output.p95)} ms (in the page's DOM: ${ms(spareWaits.outputDom.p50)} / ${ms(spareWaits.outputDom.p95)} ms) | \`warm_spare: false\` (${noSpareWaits.adopted} of ${noSpareWaits.conversations} adopted): ${ms(noSpareWaits.output.p50)} / ${ms(noSpareWaits.output.p95)} ms |`);
  console.log(`\nPSS by process (MiB): ${breakdown}`);
  console.log(startupOrderLine(app));
} finally {
  // The launches end by signal, so the warm spare each one's keeper made is still there.
  await removeBenchHome(root);
}
