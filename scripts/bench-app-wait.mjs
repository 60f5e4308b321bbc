// What a person waits for in the app: Send → the approval dialog on screen, with a model that
// answers at once, and Approve → the first output byte on screen. Driven through WebDriver (the
// e2e suite's harness, on the release build with TAURI_WEBVIEW_AUTOMATION), but timed inside the
// page: a capture-phase click listener stamps the click as the page receives it, a
// MutationObserver (and a wrapper around the UI's animation callbacks) sees the dialog or the
// first output text arrive, and a task queued behind the frame that paints it counts as painted. WebDriver's own round trips are therefore not in the figures; the time
// from the physical click to the page's click event is not either (the X server and WebKit's
// input path, the same for any web app).

import * as path from "node:path";
import { fileURLToPath } from "node:url";

import { percentile } from "./bench-app-launch.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

// Runs in the page once per launch. `window.__wait` holds the marks of the current round.
const PROBE = `
  if (window.__waitProbe) return;
  window.__waitProbe = true;
  window.__wait = {};
  const stamp = (key) => setTimeout(() => { window.__wait[key] = performance.now(); }, 0);
  const raf = window.requestAnimationFrame.bind(window);
  const withOutput = () => [...document.querySelectorAll('[data-testid="execution-cell"] [data-testid="cell-stdout"]')]
    .filter((e) => e.textContent.length > 0).length;
  // A change made inside an animation callback (the UI renders streamed output there) is
  // painted at the end of that frame: a task queued then runs once it is painted. A change made
  // anywhere else waits for the next frame.
  const check = (inFrame) => {
    const w = window.__wait;
    const painted = (key) => (inFrame ? stamp(key) : raf(() => stamp(key)));
    if (w.send !== undefined && w.dialogSeen === undefined && document.querySelector('dialog[data-testid="approval-dialog"][open]')) {
      w.dialogSeen = performance.now();
      painted("dialog");
    }
    if (w.approve !== undefined && w.outputSeen === undefined && withOutput() > w.outputsBefore) {
      w.outputSeen = performance.now();
      painted("output");
    }
  };
  const observer = new MutationObserver(() => check(false));
  window.requestAnimationFrame = (callback) => raf((ts) => {
    try {
      callback(ts);
    } finally {
      if (observer.takeRecords().length) check(true);
    }
  });
  document.addEventListener("click", (e) => {
    const t = e.target instanceof Element ? e.target : null;
    if (t && t.closest('[data-testid="send-button"]')) window.__wait = { send: performance.now() };
    if (t && t.closest('[data-testid="approve-button"]')) {
      window.__wait.approve = performance.now();
      window.__wait.outputsBefore = withOutput();
    }
  }, true);
  observer.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ["open"] });
`;

/** Measures `rounds` turns (after `warmups` unmeasured ones) in one conversation of the app at
 *  `appBin`; returns `{ dialog, output, dialogDom, outputDom }` (each `{p50, p95}` in ms:
 *  until painted, and until in the page's DOM), `n`, and `first` (`{ dialog, output }`, the
 *  launch's first turn, painted). With `newConversations`, every round
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
  const { approvalDialog, sendMessage, waitForAssistant } = await import(path.join(ROOT, "tests/e2e/lib/ui.mjs"));
  const { testid } = await import(path.join(ROOT, "tests/e2e/lib/webdriver.mjs"));
  const fs = await import("node:fs");

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
  let adopted = null;
  // The launch's first turn (a warm-up, so not in the figures above): the first dialog a person
  // meets after starting the app, with nothing in the page used yet.
  let first = null;
  try {
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
      await sendMessage(s, `round ${i}`);
      const d = await approvalDialog(s, { timeoutMs: 60_000 });
      await (await d.find(testid("approve-button"))).click();
      await waitForAssistant(s, `Done ${i}.`);
      const w = await s.waitUntil("the round's marks", async () => {
        const marks = await s.execute("return window.__wait");
        return marks.dialog !== undefined && marks.output !== undefined ? marks : false;
      }, { timeoutMs: 10_000 });
      if (i === 0) first = { dialog: w.dialog - w.send, output: w.output - w.approve };
      if (i >= warmups) {
        dialog.push(w.dialog - w.send);
        output.push(w.output - w.approve);
        dialogDom.push(w.dialogSeen - w.send);
        outputDom.push(w.outputSeen - w.approve);
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
    n: rounds,
    first,
    adopted,
    conversations: total,
  };
}
