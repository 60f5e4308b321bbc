// Text the sandbox chose, as a person reads it in the app: a file named with a right-to-left
// override (`invoice<U+202E>txt.exe`, which displays as "invoiceexe.txt") and output carrying
// escape sequences. The rendered change list and output show the override as a marked token,
// so the name never reads as something it is not.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";

import { prepare, runCodeReplies } from "./lib/harness.mjs";
import { testid } from "./lib/webdriver.mjs";
import { approvalDialog, finishedCell, screenshot, sendMessage, waitForAssistant } from "./lib/ui.mjs";

test("a name with a direction override reads as it is in the change list and the output", { timeout: 240_000 }, async (t) => {
  // A long line too: its end is part of what is approved, never hidden behind a scrollbar.
  const code = `import os\nos.mkfifo('a-named-pipe-with-a-long-name')\nname = 'invoice\\u202etxt.exe'\nopen(name, 'w').write('x')  # ${"the end of this line must be seen ".repeat(8)}END\nprint(name, '\\x1b[2J done')`;
  const app = await prepare(t, { replies: runCodeReplies("python", code, { id: "call_1", after: "Made it." }) });
  const s = await app.start();
  await sendMessage(s, "make the invoice");
  const dialog = await approvalDialog(s);
  const overflow = await s.execute(
    "const el = document.querySelector('[data-testid=\"approval-code\"]'); return el.scrollWidth - el.clientWidth;",
  );
  assert.ok(overflow <= 1, `the code scrolls sideways by ${overflow}px`);
  assert.match(await (await s.byTestId("approval-code")).text(), /must be seen END/);
  await (await dialog.find(testid("approve-button"))).click();
  await s.waitGone(testid("approval-dialog"));
  const cell = await finishedCell(s);
  await waitForAssistant(s, "Made it.");
  // The attack is real: the file on disk has the override in its name.
  const [ws] = app.workspaces();
  assert.ok(fs.readdirSync(ws).includes("invoice\u202etxt.exe"), fs.readdirSync(ws).join(", "));

  // Folded away until opened: its text is read from the page as rendered.
  const shown = await s.execute("return arguments[0].querySelector('[data-testid=\"cell-change-list\"]').textContent;", [cell.el]);
  assert.match(shown, /invoice⟨U\+202E⟩txt\.exe/, shown);
  assert.ok(!shown.includes("\u202e"), "the override itself is not in what is rendered");
  const stdout = await (await cell.el.find(testid("cell-stdout"))).text();
  assert.match(stdout, /invoice⟨U\+202E⟩txt\.exe ⟨U\+001B⟩\[2J done/, stdout);
  await screenshot(s, "names");

  // The Files panel, narrow as it is, shows every row's name beside its badges: the named
  // pipe the run made ("named pipe, not opened" and "changed") and the file with the override.
  await (await s.byTestId("open-workspace-panel")).click();
  await s.waitForTestId("workspace-panel");
  const widths = await s.waitUntil("the panel to list the pipe", async () => {
    const found = await s.execute(
      "return [...document.querySelectorAll('[data-testid=\"workspace-file\"]')].map((row) => { const n = row.querySelector('[data-testid=\"workspace-name\"]'); return [row.dataset.kind, n.clientWidth, row.clientWidth]; });",
    );
    return found.some(([kind]) => kind === "fifo") ? found : null;
  });
  for (const [kind, name, row] of widths) {
    assert.ok(name >= 60, `the ${kind} row's name is ${name}px wide of ${row}`);
  }
  await screenshot(s, "files-panel-names");
});
