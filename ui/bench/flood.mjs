// Feeds 100 MB of output into one execution cell in a real browser (headless Chromium against
// `npm run preview:fake`, the build with the fake backend) and prints how long the main thread
// stalled at worst and how much text stayed rendered.
// Usage: node --experimental-websocket ui/bench/flood.mjs [URL]
// Prints measurements; asserts nothing about time.

import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";

const url = process.argv[2] ?? "http://localhost:4173/?scenario=flood";
const port = 9300 + Math.floor(Math.random() * 500);
const browser = spawn(
  process.env.CHROMIUM ?? "chromium",
  ["--headless", "--no-sandbox", "--disable-gpu", `--remote-debugging-port=${port}`, "--window-size=1280,800", "about:blank"],
  { stdio: "ignore" },
);

async function json(path) {
  for (let i = 0; i < 100; i++) {
    try {
      return await (await fetch(`http://127.0.0.1:${port}${path}`)).json();
    } catch {
      await sleep(100);
    }
  }
  throw new Error("Chromium did not open its debugging port");
}

try {
  const page = (await json("/json/list")).find((t) => t.type === "page");
  const ws = new WebSocket(page.webSocketDebuggerUrl);
  await new Promise((r, j) => ((ws.onopen = r), (ws.onerror = j)));
  let id = 0;
  const pending = new Map();
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    pending.get(msg.id)?.(msg.result);
    pending.delete(msg.id);
  };
  const call = (method, params = {}) =>
    new Promise((r) => {
      pending.set(++id, r);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await call("Page.enable");
  await call("Page.navigate", { url });
  let result = null;
  for (let i = 0; i < 600 && !result; i++) {
    await sleep(100);
    const r = await call("Runtime.evaluate", { expression: "document.body && document.body.dataset.flood || ''", returnByValue: true });
    if (r?.result?.value) result = JSON.parse(r.result.value);
  }
  if (!result) throw new Error("the flood did not finish within 60 s");
  console.log(`100 MB into one cell: ${result.totalMs} ms; worst main-thread stall ${result.worstStallMs} ms ` +
    `(10 ms heartbeat, ${result.beats} beats); rendered text ${result.renderedChars} chars; ` +
    `${result.domNodes} DOM elements; note: "${result.note}"`);
  ws.close();
} finally {
  browser.kill();
}
