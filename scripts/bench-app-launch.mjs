// Launching the built desktop app for the benchmarks and reading its memory: shared by
// bench-app.mjs (one build) and bench-app-builds.mjs (two builds taking turns).

import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function children() {
  const byParent = new Map();
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      if (!byParent.has(ppid)) byParent.set(ppid, []);
      byParent.get(ppid).push({ pid: Number(pid), comm });
    } catch {
      // The process ended while we looked.
    }
  }
  return byParent;
}

/** `root` and all its descendants, as `{ pid, comm }`. */
export function tree(root) {
  const byParent = children();
  const out = [];
  const todo = [{ pid: root, comm: "app" }];
  while (todo.length) {
    const p = todo.pop();
    out.push(p);
    todo.push(...(byParent.get(p.pid) ?? []));
  }
  return out;
}

export function pssKiB(pid) {
  try {
    const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    return Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Starts the app at `app`; resolves with `{ child, appMs, wallMs }` once it reports ready. */
export function launch(app, env) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(app, [], { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      stop(child);
      reject(new Error(`no 'ironclaw-ready' line within 60 s; stderr: ${err.slice(-2000)}`));
    }, 60_000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = /ironclaw-ready ms=(\d+(?:\.\d+)?)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout.removeAllListeners("data");
        child.stdout.resume();
        resolve({ child, appMs: Number(m[1]), wallMs: Number(process.hrtime.bigint() - started) / 1e6 });
      }
    });
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the app exited (${code}) before it was ready; stderr: ${err.slice(-2000)}`));
    });
  });
}

export async function stop(child) {
  if (child.exitCode !== null) return;
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    return;
  }
  for (let i = 0; i < 50 && child.exitCode === null; i++) await sleep(100);
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Gone.
  }
}

/** A throw-away home for the launches: data, config and XDG folders, and a configured model,
 *  so every launch opens the chat like a set-up install would (the endpoint is never asked
 *  anything at start-up; nothing listens there). Returns `{ root, env }`. */
export function benchHome() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ironclaw-bench-app-"));
  const env = {
    ...process.env,
    IRONCLAW_REPORT_READY: "1",
    IRONCLAW_DATA_DIR: path.join(root, "data"),
    IRONCLAW_CONFIG_DIR: path.join(root, "config"),
    XDG_DATA_HOME: path.join(root, "xdg-data"),
    XDG_CONFIG_HOME: path.join(root, "xdg-config"),
    XDG_CACHE_HOME: path.join(root, "xdg-cache"),
  };
  for (const dir of ["data", "config", "xdg-data", "xdg-config", "xdg-cache"]) fs.mkdirSync(path.join(root, dir));
  fs.writeFileSync(path.join(root, "config/provider.yaml"), "kind: openai\nbase_url: http://127.0.0.1:9/v1\nmodel: bench\n");
  return { root, env };
}

/** Removes the home and the warm spares its launches left (they end by signal). */
export async function removeBenchHome(root) {
  const { instanceId, removeContainers } = await import(path.join(path.dirname(new URL(import.meta.url).pathname), "../tests/e2e/lib/harness.mjs"));
  await removeContainers(instanceId(path.join(root, "data")));
  fs.rmSync(root, { recursive: true, force: true });
}

export function percentile(sorted, p) {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/** How much of src-tauri/startup-order.txt the binary at `app` still has: `{ listed, found }`.
 *  Names a rebuild no longer has (a changed dependency) fall back to LTO's scattered layout, a
 *  cost of up to 64 KiB each in idle memory; then scripts/startup-order.sh records them again. */
export function startupOrderCoverage(app) {
  const order = path.join(path.dirname(fileURLToPath(import.meta.url)), "../src-tauri/startup-order.txt");
  const listed = fs.existsSync(order) ? fs.readFileSync(order, "utf8").split("\n").filter(Boolean) : [];
  let defined;
  try {
    defined = definedSymbols(app);
  } catch {
    return { listed: listed.length, found: null };
  }
  return { listed: listed.length, found: listed.filter((name) => defined.has(name)).length };
}

/** The names of the symbols `app` defines (`nm`), or only its functions with `{ code: true }`;
 *  throws when nm cannot read it. */
export function definedSymbols(app, { code = false } = {}) {
  const out = execFileSync("nm", ["--defined-only", app], { encoding: "utf8", maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "pipe"] });
  const names = new Set();
  for (const line of out.split("\n")) {
    const [, type, name] = line.split(" ");
    if (name && (!code || type === "t" || type === "T")) names.add(name);
  }
  return names;
}

/** The coverage as a line for a bench's report. */
export function startupOrderLine(app) {
  const { listed, found } = startupOrderCoverage(app);
  const share = found === null ? `? (nm could not read the binary) of ${listed}` : `${found} of ${listed}`;
  return `startup order (src-tauri/startup-order.txt): ${share} listed functions in ${app}${found !== null && found < listed * 0.95 ? "; stale, run scripts/startup-order.sh" : ""}`;
}
