// "Open folder" when the system's file manager fails (here: xdg-open and every fallback launcher
// exit 3 at once, as xdg-open does when nothing can open a folder): the panel says what failed and
// what to do right under the button, and offers the path to copy, instead of the launcher's
// raw exit status.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";

import { prepare } from "./lib/harness.mjs";
import { screenshot } from "./lib/ui.mjs";

test("a folder the file manager cannot open is explained next to the button, with the path to copy", { timeout: 120_000 }, async (t) => {
  const app = await prepare(t, { failingLaunchers: true });
  const s = await app.start();

  await (await s.byTestId("open-workspace-panel")).click();
  await s.waitForTestId("workspace-panel");
  await (await s.byTestId("open-folder")).click();
  // The handler really was asked (and failed).
  const asked = await s.waitUntil("the folder handler to be invoked", () => app.openedFolders()[0]);
  const problem = await s.waitForTestId("open-folder-problem");
  const text = await (await s.byTestId("open-folder-problem-text")).text();
  assert.match(text, /No file manager opened this folder/);
  assert.match(text, /Copy the path/);
  assert.doesNotMatch(text, /ExitStatus|unix_wait_status/);
  // The launcher's raw status is kept, folded away behind Details.
  const detail = await s.execute("const d = arguments[0].querySelector('details'); return [d.open, d.textContent];", [problem]);
  assert.equal(detail[0], false);
  assert.match(detail[1], /xdg-open.*ExitStatus/);
  assert.doesNotMatch(detail[1], /LD_LIBRARY_PATH|env -u/, "the launcher's environment stays out of the message");
  const shownPath = await s.execute("return arguments[0].value;", [await s.byTestId("open-folder-path")]);
  assert.equal(fs.realpathSync(shownPath), fs.realpathSync(asked), "the path offered is the folder that failed to open");
  // The path field takes the panel's width: more than its first few characters can be read.
  const [field, panel] = await s.execute(
    "return [arguments[0].clientWidth, document.querySelector('[data-testid=\"workspace-panel\"]').clientWidth];",
    [await s.byTestId("open-folder-path")],
  );
  assert.ok(field >= panel * 0.7, `the path field is ${field}px of a ${panel}px panel`);
  // Next to the button: the box sits right below the row that holds it.
  const adjacent = await s.execute(
    "const p = arguments[0]; return p.previousElementSibling && p.previousElementSibling.contains(document.querySelector('[data-testid=open-folder]'));",
    [problem],
  );
  assert.equal(adjacent, true);
  await (await s.byTestId("copy-folder-path")).click();
  await s.waitUntil("the copy to be confirmed", async () => /Copied|Ctrl\+C/.test(await (await s.byTestId("open-folder-copied")).text()));
  await screenshot(s, "open-folder-failed");
});
