// Start time and idle memory of two builds of the desktop app, launched in turns (A, B, A,
// B, ...) so a machine that slows down mid-run slows both alike: for a change to what the app
// does at start, which a page script cannot imitate. Each launch is timed by the app's own
// clock (process start to the first screen interactive), then left idle 5 s and its PSS summed
// over the app and its WebKit processes, as in bench-app.mjs.
// Usage: xvfb-run -a dbus-run-session -- node scripts/bench-app-builds.mjs BEFORE,AFTER [RUNS]
//   (or scripts/bench-app.sh builds APP [RUNS]: APP is a copy of the release app kept from
//   before the change)

import * as fs from "node:fs";
import * as os from "node:os";

import { benchHome, launch, percentile, pssKiB, removeBenchHome, sleep, startupOrderLine, stop, tree } from "./bench-app-launch.mjs";

const IDLE_MS = 5000;
const [appsArg, runsArg] = process.argv.slice(2);
const apps = (appsArg ?? "").split(",").filter(Boolean);
const RUNS = Number(runsArg ?? 8);
if (apps.length !== 2 || apps.some((a) => !fs.existsSync(a))) {
  console.error(`usage: node scripts/bench-app-builds.mjs BEFORE,AFTER [RUNS] (got ${appsArg})`);
  process.exit(2);
}

const homes = apps.map(() => benchHome());
const start = apps.map(() => []);
const memory = apps.map(() => []);
try {
  // One unmeasured launch each warms the page cache and creates the data folder and database.
  for (const [i, app] of apps.entries()) await stop((await launch(app, homes[i].env)).child);
  for (let r = 0; r < RUNS; r++) {
    for (const [i, app] of apps.entries()) {
      const { child, appMs } = await launch(app, homes[i].env);
      start[i].push(appMs);
      await sleep(IDLE_MS);
      memory[i].push(tree(child.pid).reduce((sum, p) => sum + pssKiB(p.pid), 0) / 1024);
      await stop(child);
      console.error(`${app} (launch ${r + 1}/${RUNS}): ready in ${appMs} ms, idle ${memory[i].at(-1).toFixed(1)} MiB`);
    }
  }
} finally {
  for (const { root } of homes) await removeBenchHome(root);
}

const sorted = (xs) => [...xs].sort((a, b) => a - b);
console.log(`\nStart → interactive window (app's own clock) and idle memory after ${IDLE_MS / 1000} s (PSS, all processes), ${RUNS} launches each taking turns, load average ${os.loadavg()[0].toFixed(2)} at the end:\n`);
console.log("| build | start p50 / p95 | idle memory, median (min–max) |");
console.log("|---|---|---|");
for (const [i, app] of apps.entries()) {
  const s = sorted(start[i]);
  const m = sorted(memory[i]);
  console.log(`| ${app} | ${percentile(s, 50).toFixed(0)} / ${percentile(s, 95).toFixed(0)} ms | ${percentile(m, 50).toFixed(1)} MiB (${m[0].toFixed(1)}–${m.at(-1).toFixed(1)}) |`);
}
console.log();
for (const app of apps) console.log(startupOrderLine(app));
