// An accessibility audit inside the real webview: axe-core's own script (the npm package, no
// browser download) is evaluated in the page through WebDriver, then run over the document.
// WebDriver's script evaluation is not subject to the page's CSP, and axe needs no eval.

import * as fs from "node:fs";
import * as path from "node:path";

import { ROOT } from "./harness.mjs";

const AXE_SOURCE = fs.readFileSync(path.join(ROOT, "node_modules/axe-core/axe.min.js"), "utf8");
const BLOCKING = new Set(["serious", "critical"]);

/** Runs axe over the whole document; returns every violation as `{ id, impact, help, nodes }`. */
export async function audit(session) {
  await session.execute(`if (!window.axe) { ${AXE_SOURCE}\n; window.axe = axe; }`);
  // Colours ease over 0.12 s on hover and theme changes: measure where they end, not halfway.
  await session.execute("for (const a of document.getAnimations()) { try { a.finish(); } catch {} }");
  const result = await session.executeAsync(
    `const done = arguments[arguments.length - 1];
     window.axe.run(document, { resultTypes: ["violations"] })
       .then((r) => done({ ok: true, violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
         nodes: v.nodes.map((n) => ({ target: n.target.join(" "), summary: n.failureSummary })) })) }))
       .catch((e) => done({ ok: false, error: String(e && e.stack || e) }));`,
  );
  if (!result.ok) throw new Error(`axe did not run in the webview: ${result.error}`);
  return result.violations;
}

/** The violations of serious or critical impact, as readable text (empty: none). */
export function blocking(violations) {
  return violations
    .filter((v) => BLOCKING.has(v.impact))
    .map((v) => `${v.impact} ${v.id} (${v.help}):\n${v.nodes.map((n) => `  ${n.target}: ${n.summary}`).join("\n")}`);
}
