// Files in: a real drag from a desktop drag source (GTK, XDND) onto the window shows the drop
// overlay, copies the files into the conversation's workspace (a link to a host file inside the
// folder is left out and says so), the next message tells the model what arrived, and the
// approved code reads the copies in the sandbox.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execFileSync } from "node:child_process";

import { dragFilesOntoApp } from "./lib/drag.mjs";
import { prepare, runCodeReplies, visible } from "./lib/harness.mjs";
import { testid, RetryableError, sleep } from "./lib/webdriver.mjs";
import { SCREENSHOT_DIR, approvalDialog, finishedCell, screenshot, sendMessage, textContent, waitForAssistant } from "./lib/ui.mjs";

const CODE = "print(open('/workspace/sales.csv').read().strip().splitlines()[-1]); print(sorted(__import__('os').listdir('/workspace/report')))";

test("files dragged onto the window arrive in the workspace and the model is told", { timeout: 240_000 }, async (t) => {
  const src = fs.mkdtempSync(path.join(os.tmpdir(), "ironclaw-drop-"));
  t.after(() => fs.rmSync(src, { recursive: true, force: true }));
  fs.writeFileSync(path.join(src, "sales.csv"), "region,total\nnorth,42\n");
  fs.mkdirSync(path.join(src, "report"));
  fs.writeFileSync(path.join(src, "report", "notes.md"), "# Q3\n");
  const secret = path.join(src, "host-secret.txt");
  fs.writeFileSync(secret, "not for the sandbox");
  fs.symlinkSync(secret, path.join(src, "report", "key"));

  const app = await prepare(t, { replies: runCodeReplies("python", CODE, { after: "North sold 42." }) });
  const s = await app.start();
  await s.waitForTestId("message-input");

  let overlayShown = false;
  await dragFilesOntoApp([path.join(src, "sales.csv"), path.join(src, "report")], {
    whileOver: async () => {
      // The drag is in progress: the page shows where the files will go.
      overlayShown = await s.waitUntil("the drop overlay", async () => {
        const overlay = await s.byTestId("drop-overlay");
        if (!(await overlay.isDisplayed())) throw new RetryableError("overlay hidden");
        return true;
      });
      await screenshot(s, "attach-drop-overlay");
    },
  });
  assert.equal(overlayShown, true);

  const chips = await s.waitUntil("two attached chips", async () => {
    const found = await s.allByTestId("attached-chip");
    if (found.length < 2) throw new RetryableError(`${found.length} chips`);
    return Promise.all(found.map((c) => textContent(s, c)));
  });
  assert.match(chips[0], /^sales\.csv · 22 bytes$/);
  assert.match(chips[1], /^report\/ · 1 file, 5 bytes1 left out$/);
  assert.equal(await (await s.byTestId("drop-overlay")).isDisplayed(), false);
  await screenshot(s, "attach-chips");

  // The copies are in the workspace, owned like the rest of it; the link out is not.
  // A fresh installation: the one conversation's is the only workspace.
  const workspaces = path.join(app.dataDir, "workspaces");
  const [only, ...more] = visible(fs.readdirSync(workspaces));
  assert.deepEqual(more, []);
  const ws = path.join(workspaces, only);
  assert.equal(fs.readFileSync(path.join(ws, "sales.csv"), "utf8"), "region,total\nnorth,42\n");
  assert.equal(fs.existsSync(path.join(ws, "report", "key")), false);

  await sendMessage(s, "what did north sell?");
  const note = await textContent(s, await s.waitFor(testid("message-attached")));
  assert.equal(note.trim(), "Attached: sales.csv, report/");
  assert.equal((await s.allByTestId("attached-chip")).length, 0);

  const dialog = await approvalDialog(s);
  await (await dialog.find(testid("approve-button"))).click();
  const cell = await finishedCell(s);
  assert.equal(cell.stdout, "north,42\n['notes.md']\n");
  await waitForAssistant(s, "North sold 42.");

  const first = app.llm.chatRequests().map((r) => JSON.stringify(r.body)).find((b) => b.includes("what did north sell?"));
  assert.ok(first, "the model got the message");
  assert.match(first, /\[The person attached files; they are in your workspace now: \/workspace\/sales\.csv \(22 bytes\); \/workspace\/report\/ \(a folder: 1 file, 5 bytes\)\. Left out: report\/key/);
});

test("Attach → Files… opens the system's file dialog and copies what the person picks", { timeout: 180_000 }, async (t) => {
  const src = fs.mkdtempSync(path.join(os.tmpdir(), "ironclaw-pick-"));
  t.after(() => fs.rmSync(src, { recursive: true, force: true }));
  const picked = path.join(src, "budget.txt");
  fs.writeFileSync(picked, "rent 1200\n");

  const app = await prepare(t, {});
  const s = await app.start();
  await (await s.waitForTestId("attach-button")).click();
  await (await s.waitForTestId("attach-files")).click();

  // The dialog is GTK's own window, not part of the page: found and driven through X.
  const dialog = await s.waitUntil("the file dialog", async () => {
    try {
      return execFileSync("xdotool", ["search", "--onlyvisible", "--name", "^Attach files"], { encoding: "utf8" }).trim().split("\n")[0];
    } catch {
      throw new RetryableError("no dialog window yet");
    }
  });
  await screenshotScreen(app, "attach-file-dialog");
  // Real key presses (XTEST, not events sent to a window, which GTK ignores) into the focused
  // dialog, as a person types a path: Ctrl+L opens its location field. A dialog mapped a moment
  // ago can drop the first keys (GTK logs "WIDGET_REALIZED_FOR_EVENT" for them; one CI run lost
  // the path that way), so while the dialog is still open the person types it again.
  const dialogOpen = () => {
    try {
      return execFileSync("xdotool", ["search", "--onlyvisible", "--name", "^Attach files"], { encoding: "utf8" }).trim() !== "";
    } catch {
      return false;
    }
  };
  for (let attempt = 0; attempt < 3 && dialogOpen(); attempt++) {
    execFileSync("xdotool", ["windowfocus", "--sync", dialog]);
    execFileSync("xdotool", ["key", "ctrl+l"]);
    await sleep(400);
    execFileSync("xdotool", ["key", "ctrl+a"]);
    execFileSync("xdotool", ["type", "--delay", "30", picked]);
    await sleep(400);
    execFileSync("xdotool", ["key", "Return"]);
    for (let waited = 0; waited < 3000 && dialogOpen(); waited += 250) await sleep(250);
  }

  const chip = await s.waitUntil("the picked file's chip", async () => {
    const found = await s.allByTestId("attached-chip");
    if (found.length === 0) throw new RetryableError("no chip yet");
    return textContent(s, found[0]);
  });
  assert.equal(chip, "budget.txt · 10 bytes");
  const workspaces = path.join(app.dataDir, "workspaces");
  const [only] = visible(fs.readdirSync(workspaces));
  assert.equal(fs.readFileSync(path.join(workspaces, only, "budget.txt"), "utf8"), "rent 1200\n");
});

/** The whole X screen (the file dialog is not in the page WebDriver sees). */
async function screenshotScreen(app, name) {
  const out = path.join(SCREENSHOT_DIR, `${name}.png`);
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await sleep(300);
  execFileSync("import", ["-window", "root", out]);
}
