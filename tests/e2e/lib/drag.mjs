// Drags files from a real GTK drag source (drag-source.py) onto the app's window with xdotool:
// the window system delivers an XDND drop, exactly as from a file manager.

import { spawn, execFileSync } from "node:child_process";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

import { sleep } from "./webdriver.mjs";

const SOURCE = path.join(path.dirname(fileURLToPath(import.meta.url)), "drag-source.py");
// Debian's interpreter: it has the GTK bindings (python3-gi), a pyenv or venv one may not.
const PYTHON = "/usr/bin/python3";

function xdotool(...args) {
  return execFileSync("xdotool", args.map(String), { encoding: "utf8" }).trim();
}

/** The app window's rectangle on the screen. */
function appWindow() {
  const ids = xdotool("search", "--onlyvisible", "--name", "^IronClaw").split("\n").filter(Boolean);
  if (ids.length === 0) throw new Error("no visible IronClaw window to drop on");
  const geometry = Object.fromEntries(
    xdotool("getwindowgeometry", "--shell", ids[ids.length - 1])
      .split("\n")
      .map((l) => l.split("="))
      .map(([k, v]) => [k, Number(v)]),
  );
  return { x: geometry.X, y: geometry.Y, width: geometry.WIDTH, height: geometry.HEIGHT };
}

function lines(child) {
  const seen = [];
  const waiters = [];
  let buf = "";
  child.stdout.on("data", (d) => {
    buf += d;
    const parts = buf.split("\n");
    buf = parts.pop() ?? "";
    for (const l of parts) {
      seen.push(l.trim());
      for (const w of [...waiters]) if (l.trim() === w.line) w.resolve();
    }
  });
  child.on("exit", (code) => {
    for (const w of waiters.splice(0)) w.reject(new Error(`drag source exited (${code}) before "${w.line}"`));
  });
  return (line, timeoutMs) =>
    seen.includes(line)
      ? Promise.resolve()
      : new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`drag source: no "${line}" within ${timeoutMs} ms`)), timeoutMs);
          waiters.push({ line, resolve: () => (clearTimeout(timer), resolve()), reject: (e) => (clearTimeout(timer), reject(e)) });
        });
}

/**
 * Drags `files` onto the middle of the app's chat area. `whileOver` runs with the pointer held
 * over the window (the drag in progress), before the button is released.
 */
export async function dragFilesOntoApp(files, { whileOver } = {}) {
  const child = spawn(PYTHON, [SOURCE, ...files], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const waitFor = lines(child);
  try {
    await waitFor("ready", 15_000).catch((e) => {
      throw new Error(`${e.message}; stderr: ${stderr}`);
    });
    const app = appWindow();
    const to = { x: app.x + Math.round(app.width * 0.6), y: app.y + Math.round(app.height * 0.5) };
    xdotool("mousemove", 60, 60);
    xdotool("mousedown", 1);
    // Past GTK's drag threshold first, then across in steps: each motion is an XDND position.
    for (let i = 1; i <= 12; i++) {
      xdotool("mousemove", Math.round(60 + ((to.x - 60) * i) / 12), Math.round(60 + ((to.y - 60) * i) / 12));
      await sleep(50);
    }
    if (whileOver) await whileOver();
    xdotool("mouseup", 1);
    await waitFor("drag-end", 15_000);
  } finally {
    child.kill();
  }
}
