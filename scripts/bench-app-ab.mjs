// Does a change to what the page paints shorten a person's wait? Launches the release app once
// per variant per repetition, interleaved (A, B, C, A, B, C, ...) so a machine that slows down
// mid-run slows every variant alike, and prints Approve → first output on screen and Send →
// dialog on screen (as the X server reports it), p50 / p95 per launch. A variant is a page script
// run after the probe (`bench-app-wait.mjs`'s `pageScript`): the shipped UI with one thing
// changed, never a change to the code under test, so the same binary is measured throughout; or
// `{ env }`, the same binary launched with these variables (a switch the app reads, or WebKit's
// own); or `{ code }`, other code for the model to ask to run. The findings are in
// docs/benchmarks.md#app-waits, and each measurement in docs/bench/history.md#app-waits.
// Usage (scripts/bench-app.sh builds what it needs first):
//   xvfb-run -a dbus-run-session -- node scripts/bench-app-ab.mjs APP_BINARY [ROUNDS] [REPS] [VARIANTS]
//   VARIANTS is a comma-separated list of the names below (default: all). APP_BINARY may be two
//   builds, `BEFORE,AFTER` (a copy of the release app kept from before a change): each variant
//   then runs with both, taking turns, for a change a page script cannot imitate.

import * as fs from "node:fs";
import * as os from "node:os";

import { measureWaits } from "./bench-app-wait.mjs";

const style = (css) => `
  const s = document.createElement("style");
  s.textContent = ${JSON.stringify(css)};
  document.head.append(s);`;

const LONGER_CODE = `import csv, math, statistics
rows = []
for day in range(1, 31):
    temp = 12 + 8 * math.sin(day / 30 * math.pi) + (day % 7) * 0.3
    rain = max(0.0, 5 * math.cos(day / 4))
    rows.append({"day": day, "temp_c": round(temp, 1), "rain_mm": round(rain, 1)})

with open("weather.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=["day", "temp_c", "rain_mm"])
    w.writeheader()
    w.writerows(rows)

temps = [r["temp_c"] for r in rows]
print(f"days: {len(rows)}")
print(f"mean temperature: {statistics.mean(temps):.1f} C")
print(f"warmest day: {max(rows, key=lambda r: r['temp_c'])['day']}")`;

const keptBox = (backdrop) => `
  const s = document.createElement("style");
  s.textContent = "dialog::backdrop { ${backdrop}; } dialog.ic-kept { display: block !important; visibility: hidden !important; position: fixed !important; margin: 0 !important; }";
  document.head.append(s);
  const close = HTMLDialogElement.prototype.close;
  const remove = Element.prototype.remove;
  const kept = new WeakSet();
  HTMLDialogElement.prototype.close = function (...args) {
    if (!this.matches('[data-testid="approval-dialog"]')) return close.apply(this, args);
    const r = this.getBoundingClientRect();
    Object.assign(this.style, { left: r.left + "px", top: r.top + "px", width: r.width + "px", height: r.height + "px", inset: "auto" });
    this.style.left = r.left + "px";
    this.style.top = r.top + "px";
    this.classList.add("ic-kept");
    kept.add(this);
    close.apply(this, args);
    requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => remove.call(this), 0)));
  };
  Element.prototype.remove = function () {
    if (!kept.has(this)) remove.call(this);
  };`;

const VARIANTS = {
  shipped: null,
  // The dialog closes as the click lands, not when the core confirms the decision (the
  // decision itself still travels as shipped).
  "close-at-click": `
    document.addEventListener("click", (e) => {
      const t = e.target instanceof Element ? e.target : null;
      const d = t?.closest('[data-testid="approve-button"]')?.closest("dialog");
      if (d && d.open) d.close();
    }, false);`,
  // As before `SHOW_SENDING_AFTER_MS`: the click greys out every control and says "Sending
  // approval…" at once, a repaint of the dialog on the way to the output.
  "sending-at-click": `
    document.addEventListener("click", (e) => {
      const t = e.target instanceof Element ? e.target : null;
      const d = t?.closest('[data-testid="approve-button"]')?.closest("dialog");
      if (!d || !d.open) return;
      for (const c of d.querySelectorAll("button, input, textarea")) c.disabled = true;
      const status = d.querySelector('[data-testid="approval-status"]');
      if (status) status.textContent = "Sending approval…";
    }, false);`,
  "no-shadow": style(".approval-dialog { box-shadow: none !important; }"),
  flat: style(
    ".approval-dialog { box-shadow: none !important; } dialog::backdrop { background: transparent !important; } .cell-status::before { animation: none !important; }",
  ),
  "no-transitions": style("* { transition: none !important; }"),
  // Without compositing, WebKitGTK repaints the whole window when a positioned box goes away
  // (display: none, removed, a dialog closed, modal or not) but only the box when it turns
  // invisible (docs/benchmarks.md#app-waits). Here the approval dialog turns invisible as it
  // closes, over a backdrop that does not dim, and is really closed and removed two frames later.
  "hide-then-close": `
    const s = document.createElement("style");
    s.textContent = "dialog::backdrop { background: transparent !important; }";
    document.head.append(s);
    const close = HTMLDialogElement.prototype.close;
    const remove = Element.prototype.remove;
    const leaving = new WeakSet();
    HTMLDialogElement.prototype.close = function (...args) {
      if (!this.matches('[data-testid="approval-dialog"]')) return close.apply(this, args);
      this.style.visibility = "hidden";
      leaving.add(this);
      // Once the frame after next has been drawn: the output is on screen by then.
      requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => { close.apply(this, args); remove.call(this); }, 0)));
    };
    Element.prototype.remove = function () {
      if (!leaving.has(this)) remove.call(this);
    };`,
  // As hide-then-close, but the dialog is really closed at once, so the page is not inert a
  // moment longer: the box it leaves is kept (fixed, where it was, invisible) and removed two
  // frames later. The backdrop is transparent, or with `-nobd` not drawn at all.
  "kept-box": keptBox("background: transparent !important"),
  "kept-box-nobd": keptBox("display: none !important"),
  // As hide-then-close, but the dialog is not modal: the page behind is made inert by the
  // `inert` attribute, which is lifted at once when the dialog turns invisible, so the page
  // answers the next click while the dialog waits two frames to be closed and removed.
  nonmodal: `
    const s = document.createElement("style");
    s.textContent = "dialog.ic-nm { position: fixed !important; inset: 0 !important; margin: auto !important; height: fit-content; z-index: 1000; } dialog.ic-nm.ic-leave { visibility: hidden !important; }";
    document.head.append(s);
    const showModal = HTMLDialogElement.prototype.showModal;
    const close = HTMLDialogElement.prototype.close;
    const remove = Element.prototype.remove;
    const leaving = new WeakSet();
    HTMLDialogElement.prototype.showModal = function () {
      if (!this.matches('[data-testid="approval-dialog"]')) return showModal.call(this);
      this.classList.add("ic-nm");
      for (const c of document.body.children) if (c.tagName !== "DIALOG" && c.tagName !== "SCRIPT") c.inert = true;
      this.show();
    };
    HTMLDialogElement.prototype.close = function (...args) {
      if (!this.classList.contains("ic-nm") || leaving.has(this)) return close.apply(this, args);
      this.classList.add("ic-leave");
      leaving.add(this);
      for (const c of document.body.children) c.inert = false;
      requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => { close.apply(this, args); remove.call(this); }, 0)));
    };
    Element.prototype.remove = function () {
      if (!leaving.has(this)) remove.call(this);
    };`,
  // Compositing through OpenGL (Mesa's software rasteriser here), as on a machine with a GPU.
  "gpu-on": { env: { IRONCLAW_GPU: "on" } },
  // JavaScriptCore's interpreter only: 7–8 MiB less at idle (docs/benchmarks.md#app-idle-memory).
  "jit-off": { env: { JSC_useJIT: "false" } },
  // What a model more often asks to run than `print(n)`: 17 lines, highlighted in the dialog
  // and again in the run's cell, with four lines of output.
  "longer-code": { code: (i) => `print(${i})\n${LONGER_CODE}` },
};

const [appArg, roundsArg, repsArg, namesArg] = process.argv.slice(2);
// Two builds, `A,B`, are compared with each variant; the table names the build too.
const apps = (appArg ?? "").split(",").filter(Boolean);
if (apps.length === 0 || apps.some((a) => !fs.existsSync(a))) {
  console.error(`usage: node scripts/bench-app-ab.mjs APP_BINARY[,OTHER_BUILD] [ROUNDS] [REPS] [VARIANTS] (no app at ${appArg}: bash scripts/build-app.sh --release)`);
  process.exit(2);
}
const rounds = Number(roundsArg ?? 16);
const reps = Number(repsArg ?? 3);
const variantNames = (namesArg ?? Object.keys(VARIANTS).join(",")).split(",");
const unknown = variantNames.filter((n) => !(n in VARIANTS));
if (unknown.length) {
  console.error(`unknown variant(s) ${unknown.join(", ")}; known: ${Object.keys(VARIANTS).join(", ")}`);
  process.exit(2);
}

const ms = (x) => `${Math.round(x)}`;
const runs = apps.flatMap((app) => variantNames.map((variant) => ({
  app,
  variant,
  name: apps.length > 1 ? `${variant} @ ${app}` : variant,
})));
const names = runs.map((r) => r.name);
const results = Object.fromEntries(names.map((n) => [n, []]));
for (let r = 0; r < reps; r++) {
  for (const run of runs) {
    const v = VARIANTS[run.variant];
    const w = await measureWaits(run.app, { rounds, ...(v?.env ? { env: v.env } : v?.code ? { code: v.code } : { pageScript: v }) });
    results[run.name].push(w);
    console.error(`${run.name} (launch ${r + 1}/${reps}): approve → output ${ms(w.output.p50)} / ${ms(w.output.p95)} ms`);
  }
}

console.log(`\nApprove → first output on screen and Send → dialog on screen (X server), p50 / p95 ms per launch (${rounds} turns each, load average ${os.loadavg()[0].toFixed(2)} at the end):\n`);
console.log("| variant | Approve → output | (in the DOM) | Approve → first change on screen | Send → dialog | (in the DOM) |");
console.log("|---|---|---|---|---|---|");
const cell = (name, key) => results[name].map((w) => `${ms(w[key].p50)} / ${ms(w[key].p95)}`).join(", ");
for (const name of names) {
  console.log(`| ${name} | ${cell(name, "output")} | ${cell(name, "outputDom")} | ${cell(name, "answer")} | ${cell(name, "dialog")} | ${cell(name, "dialogDom")} |`);
}
console.log("\nEach launch's first turn (not in the table above), Send → dialog / Approve → output, on screen, ms:\n");
for (const name of names) {
  console.log(`- ${name}: ${results[name].map((w) => `${ms(w.first.dialog)} / ${ms(w.first.output)}`).join(", ")}`);
}
