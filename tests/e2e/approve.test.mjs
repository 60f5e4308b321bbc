// Ask → the approval dialog shows the exact code and its risk → approve → the output streams
// into the cell (and the PNG the code wrote shows inline) → the workspace panel marks the new
// files and "Open folder" hands the workspace to the system file manager → the image is back
// after switching to another conversation and back → after a restart the conversation is found
// again in the sidebar by full-text search, output and image included; once the image is
// deleted from the workspace, a placeholder says so.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";

import { prepare, processes, runCodeReplies } from "./lib/harness.mjs";
import { testid, RetryableError } from "./lib/webdriver.mjs";
import {
  approvalDialog, cells, cellText, finishedCell, screenshot, sendMessage, textContent, waitForAssistant,
  waitForCellOutput,
} from "./lib/ui.mjs";

// Prints three ticks a second apart (so output arrives while the cell is still running), then
// writes a small gradient PNG with nothing but the standard library.
const CODE = `import struct, time, zlib

def png(path, w=96, h=64):
    rows = b"".join(b"\\x00" + bytes(v for x in range(w) for v in (x * 255 // w, y * 255 // h, 170)) for y in range(h))
    chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    with open(path, "wb") as f:
        f.write(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))

for i in range(1, 4):
    print(f"tick {i}", flush=True)
    time.sleep(1)
png("gradient.png")
print("wrote gradient.png")
`;

const OUTPUT = "tick 1\ntick 2\ntick 3\nwrote gradient.png\n";

test("approved code streams into its cell, and the conversation survives a restart", { timeout: 300_000 }, async (t) => {
  const app = await prepare(t, {
    replies: runCodeReplies("python", CODE, {
      before: ["I'll count to three and draw a gradient."],
      after: "Counted to three and saved **gradient.png** in your workspace.",
    }),
  });
  let s = await app.start();

  await sendMessage(s, "Count to three slowly and draw me a zebra-striped gradient");

  // The dialog shows exactly what the model asked for, with language and risk.
  const dialog = await approvalDialog(s);
  assert.equal(await textContent(s, await dialog.find(testid("approval-code"))), CODE);
  assert.equal((await (await dialog.find(testid("approval-language"))).text()).trim(), "python");
  const risk = await dialog.attribute("data-risk");
  assert.ok(["read_only", "normal", "destructive"].includes(risk), `data-risk=${risk}`);
  assert.equal(risk, "normal", "writing a file in the workspace is normal risk");
  assert.match(await (await dialog.find(testid("approval-risk"))).text(), /normal/i);
  assert.equal(await dialog.attribute("data-destructive"), "false");
  await screenshot(s, "approval-dialog");

  await (await dialog.find(testid("approve-button"))).click();
  await s.waitGone(testid("approval-dialog"));

  // Output arrives while the code still runs: some tick is in the cell before it ends.
  const seenWhileRunning = await s.waitUntil("output in a running cell", async () => {
    const [cell] = await cells(s);
    if (!cell) throw new RetryableError("no cell yet");
    const { stdout } = await cellText(s, cell.el);
    if (cell.state !== "running") return { state: cell.state, stdout };
    return stdout && stdout.includes("tick 1") ? { state: "running", stdout } : null;
  });
  assert.equal(seenWhileRunning.state, "running", `the cell finished before any output showed: ${JSON.stringify(seenWhileRunning)}`);
  assert.doesNotMatch(seenWhileRunning.stdout, /wrote gradient\.png/);

  const cell = await finishedCell(s);
  assert.equal(cell.state, "ok");
  await waitForCellOutput(s, cell.el, OUTPUT);
  assert.equal(cell.code, CODE);
  assert.match(cell.exit ?? "", /\b0\b/);
  await waitForAssistant(s, "Counted to three");

  // The image the code wrote is shown inline, from the workspace.
  const img = await s.waitFor(testid("cell-image"));
  assert.equal(await img.attribute("data-path"), "gradient.png");
  await s.waitUntil("the inline image to load", () => s.execute("const i = arguments[0]; return i.complete && i.naturalWidth === 96;", [img]));
  await screenshot(s, "chat-with-cell");

  // The workspace panel lists what the last run changed; Open folder opens that folder.
  await (await s.byTestId("open-workspace-panel")).click();
  await s.waitForTestId("workspace-panel");
  const file = await s.waitFor(testid("workspace-file", '[data-path="gradient.png"]'));
  assert.equal(await file.attribute("data-changed"), "true");
  await screenshot(s, "workspace-panel");
  await (await s.byTestId("open-folder")).click();
  const opened = await s.waitUntil("the file manager to be invoked", () => app.openedFolders()[0]);
  const [workspace] = app.workspaces();
  assert.ok(workspace, "the app made a workspace under its data folder");
  assert.equal(fs.realpathSync(opened), fs.realpathSync(workspace));
  assert.ok(fs.existsSync(path.join(opened, "gradient.png")), "the opened folder is the one the code wrote to");
  // The app's WebKit processes run with its stand-in libraries first on LD_LIBRARY_PATH
  // (src-tauri/src/stand_ins.rs); the file manager gets the environment the app was started with.
  const shell = processes().find((p) => p.comm === "ironclaw-app" && p.pgid === app.driver.pid);
  const web = processes().find((p) => p.ppid === shell?.pid && p.comm.startsWith("WebKitWebProces"));
  assert.ok(web, "the app's web process");
  const webEnv = fs.readFileSync(`/proc/${web.pid}/environ`, "utf8").split("\0");
  assert.ok(webEnv.some((v) => /^LD_LIBRARY_PATH=.*\/stand-ins\/speech/.test(v)), "the web process was started with the stand-ins");
  assert.deepEqual(app.openedWithLibraryPath(), [process.env.LD_LIBRARY_PATH ?? "(unset)"], "the file manager's LD_LIBRARY_PATH is the app's own");

  const conversationId = await (await s.find(`${testid("conversation-item")}.active`)).attribute("data-id");

  // Away to a new conversation and back: the image comes back from the history.
  await (await s.byTestId("new-conversation")).click();
  await s.waitUntil("the new conversation to open", async () =>
    (await (await s.find(`${testid("conversation-item")}.active`)).attribute("data-id")) !== conversationId);
  // The sidebar marks the new conversation before the chat view has swapped its cells.
  await s.waitUntil("the new conversation's empty chat (no image)", async () =>
    (await s.allByTestId("cell-image")).length === 0);
  await (await s.find(`${testid("conversation-item", `[data-id="${conversationId}"]`)} button`)).click();
  await imageShown(s, "gradient.png");

  // Restart: the conversation is in the sidebar, found by a word only its text contains, and
  // opening it shows the cell with its output.
  s = await app.restart();
  await s.waitFor(testid("conversation-item", `[data-id="${conversationId}"]`));
  const search = await s.byTestId("conversation-search");
  await search.click();
  await search.sendKeys("zebra");
  await s.waitUntil("search to narrow the list to the zebra conversation", async () => {
    const ids = await Promise.all((await s.allByTestId("conversation-item")).map((e) => e.attribute("data-id")));
    return ids.length === 1 && ids[0] === conversationId;
  });
  await (await s.find(`${testid("conversation-item", `[data-id="${conversationId}"]`)} button`)).click();
  const again = await finishedCell(s);
  assert.equal(again.state, "ok");
  assert.equal(again.stdout, OUTPUT, "the stored output comes back whole");
  assert.equal(again.code, CODE);
  await waitForAssistant(s, "Counted to three");
  await imageShown(s, "gradient.png");
  await screenshot(s, "image-after-restart");
  assert.equal(app.llm.chatRequests().length, 2, "one request for the tool call, one after its result");

  // Deleted from the workspace: a placeholder says so where the image was.
  fs.rmSync(path.join(workspace, "gradient.png"));
  await (await s.byTestId("new-conversation")).click();
  await s.waitUntil("the new conversation to open", async () =>
    (await (await s.find(`${testid("conversation-item")}.active`)).attribute("data-id")) !== conversationId);
  await (await s.find(`${testid("conversation-item", `[data-id="${conversationId}"]`)} button`)).click();
  const missing = await s.waitFor(testid("cell-image-missing", '[data-path="gradient.png"]'));
  assert.match(await missing.text(), /no longer in the workspace/i);
  assert.equal((await s.allByTestId("cell-image")).length, 0);
  await screenshot(s, "image-gone-placeholder");
});

/** Waits until the run's image is in its cell and has really loaded. */
async function imageShown(s, name) {
  const img = await s.waitFor(testid("cell-image", `[data-path="${name}"]`));
  await s.waitUntil(`${name} to load`, () => s.execute("const i = arguments[0]; return i.complete && i.naturalWidth === 96;", [img]));
}
