// A real StatusNotifier host on the test's session bus, and the D-Bus calls a tray host makes:
// which items are registered (org.kde.StatusNotifierWatcher), an item's properties
// (org.kde.StatusNotifierItem), its menu's layout and a click on one of its entries
// (com.canonical.dbusmenu). The watcher is `status-notifier-watcher` (Debian's
// haskell-status-notifier-item-utils); the host is `gtk-sni-tray-standalone`
// (haskell-gtk-sni-tray-utils), which draws every item in a bar on the virtual display, so the
// icon and its menu can be seen in a screenshot and clicked with xdotool.

import { spawn, execFile } from "node:child_process";
import { once } from "node:events";
import * as fs from "node:fs";
import { promisify } from "node:util";

import { sleep } from "./webdriver.mjs";

const run = promisify(execFile);
export const TRAY_HOST = "gtk-sni-tray-standalone";
const WATCHER_BIN = "status-notifier-watcher";
const WATCHER = "org.kde.StatusNotifierWatcher";

/** `gdbus call --session …`; returns its stdout (GVariant text). */
export async function gdbusCall(dest, objectPath, method, ...args) {
  const { stdout } = await run("gdbus", ["call", "--session", "--dest", dest, "--object-path", objectPath, "--method", method, "--", ...args], {
    timeout: 10_000,
  });
  return stdout.trim();
}

async function nameHasOwner(name) {
  try {
    const out = await gdbusCall("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", name);
    return out.includes("true");
  } catch {
    return false;
  }
}

/** Spawns `command` in its own process group, ended in `t.after` (its output to `logFile`). */
function spawnForTest(t, command, args, logFile) {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], detached: true });
  const state = { output: "", failed: null };
  child.on("error", (e) => (state.failed = e));
  child.stdout.on("data", (d) => (state.output += d));
  child.stderr.on("data", (d) => (state.output += d));
  t.after(async () => {
    if (child.pid && child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid, "SIGTERM");
      await Promise.race([once(child, "exit"), sleep(3000)]);
    }
    if (logFile) fs.writeFileSync(logFile, state.output);
  });
  return { child, state };
}

/** Waits (bounded) until `probe` holds; fails naming `what` and the process's output. */
async function until(what, { child, state }, probe) {
  for (let i = 0; i < 100; i++) {
    if (state.failed) throw new Error(`cannot start ${what} (${state.failed.message}): run scripts/setup.sh, which installs it`);
    if (await probe()) return;
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  throw new Error(`${what} did not come up: ${state.output}`);
}

/** Starts the watcher, then the tray host, for this test; both stopped in `t.after`. The
 *  watcher runs on its own (not the host's `--watcher`), and is answering before the host
 *  starts: the host's built-in one can race its own start-up and exit. */
export async function startTrayHost(t, logFile) {
  if (await nameHasOwner(WATCHER)) throw new Error(`${WATCHER} is already owned on this bus: another tray host runs`);
  const watcher = spawnForTest(t, WATCHER_BIN, [], logFile && `${logFile}.watcher`);
  await until(WATCHER_BIN, watcher, async () => (await registeredItems().then(() => true, () => false)));
  const host = spawnForTest(t, TRAY_HOST, ["--top", "--end", "--size", "40", "--color", "#2b2f36"], logFile);
  await until(TRAY_HOST, host, async () => {
    const out = await gdbusCall(WATCHER, "/StatusNotifierWatcher", "org.freedesktop.DBus.Properties.Get", WATCHER, "IsStatusNotifierHostRegistered").catch(() => "");
    return out.includes("true");
  });
  return host.child;
}

/** The watcher's RegisteredStatusNotifierItems: bus names, or `busname/object/path`. */
export async function registeredItems() {
  const out = await gdbusCall(WATCHER, "/StatusNotifierWatcher", "org.freedesktop.DBus.Properties.Get", WATCHER, "RegisteredStatusNotifierItems");
  return [...out.matchAll(/'([^']*)'/g)].map((m) => m[1]);
}

/** `{ bus, path }` of a registered item; a bare bus name is resolved by introspecting it. */
export async function resolveItem(entry) {
  const slash = entry.indexOf("/");
  if (slash > 0) return { bus: entry.slice(0, slash), path: entry.slice(slash) };
  const { stdout } = await run("gdbus", ["introspect", "--session", "--dest", entry, "--object-path", "/", "--recurse"], { timeout: 10_000 });
  let node = null;
  for (const line of stdout.split("\n")) {
    const n = line.match(/^\s*node (\/\S*) \{/);
    if (n) node = n[1];
    if (line.includes("interface org.kde.StatusNotifierItem ") && node) return { bus: entry, path: node };
  }
  throw new Error(`${entry} exports no org.kde.StatusNotifierItem`);
}

/** The item's properties as strings (`Title`, `Status`, `Menu`, `XAyatanaLabel`, …). */
export async function itemProperties(item) {
  const out = await gdbusCall(item.bus, item.path, "org.freedesktop.DBus.Properties.GetAll", "org.kde.StatusNotifierItem");
  const props = {};
  for (const m of out.matchAll(/'(\w+)': <(?:objectpath |uint32 )?'?((?:[^'\\]|\\.)*?)'?>/g)) props[m[1]] = m[2];
  return props;
}

/** The menu's entries as `{ id, label, enabled }`, in order. */
export async function menuEntries(item) {
  const { Menu: menu } = await itemProperties(item);
  if (!menu) throw new Error("the item has no Menu");
  const out = await gdbusCall(item.bus, menu, "com.canonical.dbusmenu.GetLayout", "0", "-1", "@as []");
  const entries = [];
  for (const m of out.matchAll(/<\((\d+), \{([^}]*)\}/g)) {
    const label = m[2].match(/'label': <'((?:[^'\\]|\\.)*)'>/)?.[1];
    const enabled = !/'enabled': <false>/.test(m[2]);
    if (label !== undefined) entries.push({ id: Number(m[1]), label, enabled });
  }
  return entries;
}

/** What a host does when the user clicks a menu entry. */
export async function clickMenuEntry(item, id) {
  const { Menu: menu } = await itemProperties(item);
  await gdbusCall(item.bus, menu, "com.canonical.dbusmenu.Event", String(id), "clicked", "<int32 0>", "0");
}

/** Waits (bounded) for exactly one registered item and resolves it. */
export async function theOnlyItem(timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  let seen = [];
  while (Date.now() < deadline) {
    seen = await registeredItems().catch(() => []);
    if (seen.length === 1) return resolveItem(seen[0]);
    await sleep(200);
  }
  throw new Error(`expected one registered StatusNotifierItem, saw ${JSON.stringify(seen)}`);
}
