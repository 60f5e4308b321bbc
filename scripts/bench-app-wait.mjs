// What a person waits for in the app: Send → the approval dialog on screen, with a model that
// answers at once, and Approve → the first output byte on screen. Driven through WebDriver (the
// e2e suite's harness, on the release build with TAURI_WEBVIEW_AUTOMATION). A capture-phase
// click listener in the page stamps the click as the page receives it, and a MutationObserver
// (and a wrapper around the UI's animation callbacks) stamps the moment the dialog or the first
// output text is in the DOM, with where it is. "On screen" is then the first change of those
// pixels the X server reports afterwards (its DAMAGE extension, `scripts/tools/damage-watch.c`):
// the web process has painted, the app's process has taken the bitmap and GTK has drawn it,
// which no timer inside the page can see. WebDriver's own round trips are therefore not in the
// figures; the time from the physical click to the page's click event is not either (the X
// server and WebKit's input path, the same for any web app).

import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

import { percentile } from "./bench-app-launch.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

// Runs in the page once per launch. `window.__wait` holds the marks of the current round, in
// milliseconds of the page's clock (`performance.now()`); `__waitOrigin` turns them into wall-
// clock time to compare with the X server's.
const PROBE = `
  if (window.__waitProbe) return;
  window.__waitProbe = true;
  window.__wait = {};
  window.__waitOrigin = performance.timeOrigin;
  const rect = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; };
  const outputs = () => [...document.querySelectorAll('[data-testid="execution-cell"] [data-testid="cell-stdout"]')]
    .filter((e) => e.textContent.length > 0);
  const raf = window.requestAnimationFrame.bind(window);
  const check = () => {
    const w = window.__wait;
    const dialog = document.querySelector('dialog[data-testid="approval-dialog"][open]');
    if (w.send !== undefined && w.dialogSeen === undefined && dialog) {
      w.dialogSeen = performance.now();
      w.dialogRect = rect(dialog);
    }
    const out = w.approve !== undefined && w.outputSeen === undefined ? outputs() : [];
    if (out.length > w.outputsBefore) {
      w.outputSeen = performance.now();
      w.outputRect = rect(out.at(-1));
    }
  };
  // A change made inside an animation callback is seen as the callback returns, not after the
  // frame's layout and paint (when the observer's records would be delivered).
  const observer = new MutationObserver(check);
  window.requestAnimationFrame = (callback) => raf((ts) => {
    try {
      callback(ts);
    } finally {
      if (observer.takeRecords().length) check();
    }
  });
  document.addEventListener("click", (e) => {
    const t = e.target instanceof Element ? e.target : null;
    if (t && t.closest('[data-testid="send-button"]')) window.__wait = { send: performance.now() };
    if (t && t.closest('[data-testid="approve-button"]')) {
      window.__wait.approve = performance.now();
      window.__wait.outputsBefore = outputs().length;
    }
  }, true);
  observer.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ["open"] });
`;

// A block of an odd size at a known place in the page: where its damage shows up on the X
// screen gives the page's offset there.
const MARKER = [8, 8, 37, 29];

/** Builds (when its source is newer) and starts the X damage watcher on this process's
 *  display. `events` fills with `[wall ms, x, y, width, height]`. */
async function watchDamage() {
  const source = path.join(ROOT, "scripts/tools/damage-watch.c");
  const bin = path.join(ROOT, "target/bench-tools/damage-watch");
  if (!fs.existsSync(bin) || fs.statSync(bin).mtimeMs < fs.statSync(source).mtimeMs) {
    fs.mkdirSync(path.dirname(bin), { recursive: true });
    execFileSync("cc", ["-O2", "-o", bin, source, "-lXdamage", "-lXfixes", "-lX11"], { stdio: "inherit" });
  }
  const child = spawn(bin, [], { stdio: ["ignore", "pipe", "inherit"] });
  const events = [];
  let pending = "";
  let ready;
  const isReady = new Promise((resolve, reject) => {
    ready = resolve;
    child.on("exit", (code) => reject(new Error(`damage-watch exited (${code}) before it was ready`)));
  });
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    pending += chunk;
    let nl;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (line === "ready") ready();
      else events.push(line.split(" ").map(Number));
    }
  });
  await isReady;
  return { events, stop: () => child.kill() };
}

/** Clicks `button` as a person does: the pointer comes to rest on it before the press, so the
 *  repaint its hover style costs is over by then, not part of the wait that the press starts
 *  (WebDriver's click alone moves the pointer and presses at once). */
async function press(button) {
  await button.hover();
  await new Promise((r) => setTimeout(r, 300));
  await button.click();
}

const intersects = ([ax, ay, aw, ah], [bx, by, bw, bh]) => ax < bx + bw && bx < ax + aw && ay < by + bh && by < ay + ah;

/** The first damage at or after wall-clock `since` that touches `rect` (screen pixels), or
 *  undefined. */
function firstDamage(events, since, rect) {
  return events.find((e) => e[0] >= since && intersects(e.slice(1), rect))?.[0];
}

/** Where the page's top left corner is on the X screen: a block is shown at `MARKER` (page
 *  pixels) and its damage rectangle found. Throws when the X server reports nothing, since every
 *  figure would then be missing. */
async function pageOffset(s, events) {
  const [x, y, w, h] = MARKER;
  for (const colour of ["#ff00ff", "#00ffff", "#ffff00"]) {
    const since = Date.now();
    await s.execute(`
      let m = document.getElementById("__waitMarker");
      if (!m) { m = document.createElement("div"); m.id = "__waitMarker"; document.body.append(m); }
      m.style.cssText = "position:fixed;z-index:2147483647;left:${x}px;top:${y}px;width:${w}px;height:${h}px;background:${colour}";`);
    await new Promise((r) => setTimeout(r, 300));
    const hit = events.find((e) => e[0] >= since && e[3] === w && e[4] === h);
    if (hit) {
      await s.execute(`document.getElementById("__waitMarker").remove();`);
      return [hit[1] - x, hit[2] - y];
    }
  }
  throw new Error(`the X server reported no ${w}x${h} change where the page drew one: is its DAMAGE extension available (scripts/tools/damage-watch.c)?`);
}

/** Measures `rounds` turns (after `warmups` unmeasured ones) in one conversation of the app at
 *  `appBin`; returns `{ dialog, output, dialogDom, outputDom, answer }` (each `{p50, p95}` in
 *  ms: until on screen, and until in the page's DOM; `answer`: Approve → the first pixels that
 *  change anywhere in the page), `n`, and `first` (`{ dialog, output }`, the
 *  launch's first turn, on screen). With `newConversations`, every round
 *  after the first is the first turn of a new conversation, started `settleMs` after it was
 *  opened (time for the warm spare the last one adopted to be replaced); `adopted` then says
 *  how many of the `conversations` (warm-ups too) ran in an adopted spare. `sandboxYaml` is the
 *  user's sandbox.yaml; `pageScript` runs in the page after the probe (experiments: a style
 *  sheet injected to see what a paint costs); `code(i)` is the Python the model asks to run in
 *  round `i` (it must print `i` first). */
export async function measureWaits(appBin, { rounds = 20, warmups = 2, env = {}, newConversations = false, settleMs = 3000, sandboxYaml = null, pageScript = null, code = (i) => `print(${i})` } = {}) {
  // The app inherits the driver's environment.
  process.env.TAURI_WEBVIEW_AUTOMATION = "true";
  const saved = { ...process.env };
  Object.assign(process.env, env);
  const { prepare, runCodeReplies } = await import(path.join(ROOT, "tests/e2e/lib/harness.mjs"));
  const { approvalDialog, waitForAssistant } = await import(path.join(ROOT, "tests/e2e/lib/ui.mjs"));
  const { testid } = await import(path.join(ROOT, "tests/e2e/lib/webdriver.mjs"));

  const total = warmups + rounds;
  const replies = [];
  for (let i = 0; i < total; i++) {
    replies.push(...runCodeReplies("python", code(i), { id: `call_${i}`, after: `Done ${i}.` }));
  }
  const cleanups = [];
  const t = { name: "bench-app-wait", after: (fn) => cleanups.push(fn) };
  const dialog = [];
  const output = [];
  const dialogDom = [];
  const outputDom = [];
  const answer = [];
  let adopted = null;
  // The launch's first turn (a warm-up, so not in the figures above): the first dialog a person
  // meets after starting the app, with nothing in the page used yet.
  let first = null;
  try {
    const damage = await watchDamage();
    cleanups.push(damage.stop);
    // No closing screenshot: without compositing, WebKitWebDriver's can hang (scripts/e2e.sh).
    const app = await prepare(t, { replies, sandboxYaml, screenshots: false, appBin });
    const s = await app.start();
    // The harness is loaded once per process, so two builds compared in one run must each be
    // the one launched (an earlier version launched the first build every time).
    const launched = app.launchedBinaries();
    if (!launched.includes(fs.realpathSync(appBin))) {
      throw new Error(`asked to launch ${appBin}, but the app processes are ${launched.join(", ") || "none"}`);
    }
    // A person takes longer than this to type a first message; what the app does once its
    // first screen is up (loading the highlighter, starting the warm spare) is done by then
    // for them too.
    await new Promise((r) => setTimeout(r, 4000));
    await s.execute(PROBE);
    const origin = await s.execute("return window.__waitOrigin");
    const offset = await pageOffset(s, damage.events);
    const viewport = await s.execute("return [window.innerWidth, window.innerHeight]");
    const onScreen = (seen, [x, y, w, h]) => {
      const since = origin + seen;
      return firstDamage(damage.events, since, [x + offset[0], y + offset[1], Math.max(1, w), Math.max(1, h)]);
    };
    if (pageScript) await s.execute(pageScript);
    for (let i = 0; i < total; i++) {
      if (newConversations && i > 0) {
        const active = `${testid("conversation-item")}.active`;
        const before = await (await s.find(active)).attribute("data-id");
        await (await s.byTestId("new-conversation")).click();
        await s.waitUntil("the new conversation to open", async () =>
          (await (await s.find(active)).attribute("data-id")) !== before);
        await s.waitUntil("its empty chat", async () => (await s.allByTestId("execution-cell")).length === 0);
        await new Promise((r) => setTimeout(r, settleMs));
      }
      // The last round's dialog is gone (a variant may close it late) before the next message.
      await s.waitUntil("no open dialog", async () => !(await s.execute("return !!document.querySelector('dialog[open]')")));
      const input = await s.waitForTestId("message-input");
      await input.click();
      await input.sendKeys(`round ${i}`);
      await press(await s.byTestId("send-button"));
      const d = await approvalDialog(s, { timeoutMs: 60_000 });
      await press(await d.find(testid("approve-button")));
      await waitForAssistant(s, `Done ${i}.`);
      const w = await s.waitUntil("the round's marks in the page", async () => {
        const marks = await s.execute("return window.__wait");
        return marks.dialogSeen !== undefined && marks.outputSeen !== undefined ? marks : false;
      }, { timeoutMs: 10_000 });
      const screen = await s.waitUntil("the X server to show the dialog and the output", async () => {
        const dialogAt = onScreen(w.dialogSeen, w.dialogRect);
        const outputAt = onScreen(w.outputSeen, w.outputRect);
        // The first pixels the press changes anywhere in the window: the click answered.
        const answerAt = onScreen(w.approve, [0, 0, ...viewport]);
        return dialogAt !== undefined && outputAt !== undefined
          ? { dialog: dialogAt - origin - w.send, output: outputAt - origin - w.approve, answer: answerAt - origin - w.approve }
          : false;
      }, { timeoutMs: 10_000 });
      if (i === 0) first = screen;
      if (i >= warmups) {
        dialog.push(screen.dialog);
        output.push(screen.output);
        dialogDom.push(w.dialogSeen - w.send);
        outputDom.push(w.outputSeen - w.approve);
        answer.push(screen.answer);
      }
    }
    if (newConversations) {
      // Which sessions run in an adopted spare: their record names the spare's container.
      const dir = path.join(app.dataDir, "sessions");
      const records = fs.readdirSync(dir).filter((f) => f.endsWith(".json"))
        .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")));
      adopted = records.filter((r) => r.container).length;
    }
  } finally {
    for (const fn of cleanups.reverse()) await fn();
    for (const key of Object.keys(env)) {
      if (key in saved) process.env[key] = saved[key];
      else delete process.env[key];
    }
  }
  const summary = (xs) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
  };
  return {
    dialog: summary(dialog),
    output: summary(output),
    dialogDom: summary(dialogDom),
    outputDom: summary(outputDom),
    answer: summary(answer),
    n: rounds,
    first,
    adopted,
    conversations: total,
  };
}
