// The flood check in WebKitGTK (the engine the Tauri app uses on Linux), driven through
// WebKitWebDriver + MiniBrowser. Run under a display: `xvfb-run -a node ui/bench/flood-webkit.mjs [URL]`
// (with `npm run build:fake && npm run preview:fake` running). Prints measurements; asserts
// nothing about time.

import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";

const url = process.argv[2] ?? "http://localhost:4173/?scenario=flood";
const port = 4800 + Math.floor(Math.random() * 500);
const browser = process.env.MINIBROWSER ?? "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";
const driver = spawn(process.env.WEBKIT_WEBDRIVER ?? "WebKitWebDriver", [`--port=${port}`], { stdio: "ignore" });
const base = `http://127.0.0.1:${port}`;

async function wd(method, path, body) {
  const res = await fetch(base + path, { method, headers: { "content-type": "application/json" }, body: body && JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${JSON.stringify(json.value)}`);
  return json.value;
}

try {
  for (let i = 0; i < 50; i++) {
    try {
      await wd("GET", "/status");
      break;
    } catch {
      await sleep(100);
    }
  }
  const session = await wd("POST", "/session", {
    capabilities: { alwaysMatch: { browserName: "MiniBrowser", "webkitgtk:browserOptions": { binary: browser, args: ["--automation"] } } },
  });
  const sid = session.sessionId;
  await wd("POST", `/session/${sid}/url`, { url });
  let result = null;
  for (let i = 0; i < 600 && !result; i++) {
    await sleep(100);
    const v = await wd("POST", `/session/${sid}/execute/sync`, { script: "return document.body && document.body.dataset.flood || ''", args: [] });
    if (v) result = JSON.parse(v);
  }
  await wd("DELETE", `/session/${sid}`);
  if (!result) throw new Error("the flood did not finish within 60 s");
  console.log(`WebKitGTK, 100 MB into one cell: ${result.totalMs} ms; worst main-thread stall ${result.worstStallMs} ms ` +
    `(10 ms heartbeat, ${result.beats} beats); rendered text ${result.renderedChars} chars; ` +
    `${result.domNodes} DOM elements; note: "${result.note}"`);
} finally {
  driver.kill();
}
