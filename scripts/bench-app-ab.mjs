// Does a change to what the page paints shorten a person's wait? Launches the release app once
// per variant per repetition, interleaved (A, B, C, A, B, C, ...) so a machine that slows down
// mid-run slows every variant alike, and prints Approve → first output painted and Send → dialog
// painted, p50 / p95 per launch. A variant is a page script run after the probe
// (`bench-app-wait.mjs`'s `pageScript`): the shipped UI with one thing changed, never a change
// to the code under test, so the same binary is measured throughout; or `{ env }`, the same
// binary launched with these variables (a switch the app reads, or WebKit's own). The findings are in the
// README's app benchmark notes.
// Usage (scripts/bench-app.sh builds what it needs first):
//   xvfb-run -a dbus-run-session -- node scripts/bench-app-ab.mjs APP_BINARY [ROUNDS] [REPS] [VARIANTS]
//   VARIANTS is a comma-separated list of the names below (default: all).

import * as fs from "node:fs";
import * as os from "node:os";

import { measureWaits } from "./bench-app-wait.mjs";

const style = (css) => `
  const s = document.createElement("style");
  s.textContent = ${JSON.stringify(css)};
  document.head.append(s);`;

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
  // JavaScriptCore's interpreter only: 7–8 MiB less at idle (README footnote 8).
  "jit-off": { env: { JSC_useJIT: "false" } },
};

const [app, roundsArg, repsArg, namesArg] = process.argv.slice(2);
if (!app || !fs.existsSync(app)) {
  console.error(`usage: node scripts/bench-app-ab.mjs APP_BINARY [ROUNDS] [REPS] [VARIANTS] (no app at ${app}: bash scripts/build-app.sh --release)`);
  process.exit(2);
}
const rounds = Number(roundsArg ?? 16);
const reps = Number(repsArg ?? 3);
const names = (namesArg ?? Object.keys(VARIANTS).join(",")).split(",");
const unknown = names.filter((n) => !(n in VARIANTS));
if (unknown.length) {
  console.error(`unknown variant(s) ${unknown.join(", ")}; known: ${Object.keys(VARIANTS).join(", ")}`);
  process.exit(2);
}

const ms = (x) => `${Math.round(x)}`;
const results = Object.fromEntries(names.map((n) => [n, []]));
for (let r = 0; r < reps; r++) {
  for (const name of names) {
    const v = VARIANTS[name];
    const w = await measureWaits(app, { rounds, ...(v?.env ? { env: v.env } : { pageScript: v }) });
    results[name].push(w);
    console.error(`${name} (launch ${r + 1}/${reps}): approve → output ${ms(w.output.p50)} / ${ms(w.output.p95)} ms`);
  }
}

console.log(`\nApprove → first output painted and Send → dialog painted, p50 / p95 ms per launch (${rounds} turns each, load average ${os.loadavg()[0].toFixed(2)} at the end):\n`);
console.log("| variant | Approve → output | Send → dialog |");
console.log("|---|---|---|");
for (const name of names) {
  const out = results[name].map((w) => `${ms(w.output.p50)} / ${ms(w.output.p95)}`).join(", ");
  const dlg = results[name].map((w) => `${ms(w.dialog.p50)} / ${ms(w.dialog.p95)}`).join(", ");
  console.log(`| ${name} | ${out} | ${dlg} |`);
}
