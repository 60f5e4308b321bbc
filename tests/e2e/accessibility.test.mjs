// An accessibility audit (axe-core, run inside the real webview) over the screens people use:
// first run, a chat with a pending approval, the finished run and its full log, the workspace
// panel, search, Settings and the shortcuts overlay, each in the light and the dark theme. A
// violation of serious or critical impact fails the test, listed with the elements it concerns.

import { test } from "node:test";
import assert from "node:assert/strict";

import { prepare, runCodeReplies } from "./lib/harness.mjs";
import { Keys, testid } from "./lib/webdriver.mjs";
import { approvalDialog, finishedCell, sendMessage, waitForAssistant } from "./lib/ui.mjs";
import { audit, blocking } from "./lib/axe.mjs";

const THEMES = ["light", "dark"];

async function auditBothThemes(s, screen, problems) {
  for (const theme of THEMES) {
    await s.execute("document.documentElement.dataset.theme = arguments[0]", [theme]);
    const found = blocking(await audit(s));
    if (found.length) problems.push(`${screen} (${theme}):\n${found.join("\n")}`);
  }
  await s.execute("delete document.documentElement.dataset.theme");
}

test("first run passes an accessibility audit", { timeout: 120_000 }, async (t) => {
  const app = await prepare(t, {
    provider: false,
    env: { IRONCLAW_OLLAMA_BASE_URL: "http://127.0.0.1:9", OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", IRONCLAW_OPENAI_BASE_URL: "" },
  });
  const s = await app.start();
  await s.waitForTestId("provider-form");
  const problems = [];
  await auditBothThemes(s, "first run", problems);
  assert.deepEqual(problems, [], problems.join("\n\n"));
});

test("chat, approval, workspace, search, Settings and shortcuts pass an accessibility audit", { timeout: 240_000 }, async (t) => {
  const app = await prepare(t, {
    // Enough output to scroll and to fold behind "Open full log"; numbers for the highlighter.
    replies: runCodeReplies("python", `for i in range(3000):\n    print("zebra stripe", i, "=" * 60)\nopen("stripes.txt", "w").write("12")\n`, { after: "There are **12** zebra stripes." }),
  });
  const s = await app.start();
  const problems = [];
  await s.waitForTestId("chat-view");
  await auditBothThemes(s, "empty chat", problems);

  await sendMessage(s, "Count the zebra stripes");
  const dialog = await approvalDialog(s);
  await auditBothThemes(s, "approval dialog", problems);
  await (await dialog.find(testid("approve-button"))).click();
  await finishedCell(s);
  await waitForAssistant(s, "zebra stripes");
  await auditBothThemes(s, "chat with a finished run", problems);
  await (await s.waitForTestId("cell-full-log")).click();
  await s.waitForTestId("log-viewer");
  await auditBothThemes(s, "full log", problems);
  await s.pressKeys(Keys.ESCAPE);
  await s.waitGone(testid("log-viewer"));

  await (await s.byTestId("open-workspace-panel")).click();
  await s.waitFor(testid("workspace-file", '[data-path="stripes.txt"]'));
  await auditBothThemes(s, "workspace panel", problems);

  const search = await s.byTestId("conversation-search");
  await search.click();
  await search.sendKeys("zebra");
  await s.waitFor(".conv-snippet mark");
  await auditBothThemes(s, "search results", problems);
  await s.pressChord(Keys.CONTROL, "a");
  await s.pressKeys(Keys.BACKSPACE);

  await (await s.byTestId("open-settings")).click();
  await s.waitForTestId("settings-screen");
  await auditBothThemes(s, "Settings", problems);
  await s.pressKeys(Keys.ESCAPE);
  await s.waitGone(testid("settings-screen"));

  await s.execute("document.activeElement && document.activeElement.blur()");
  await s.pressChord(Keys.F1);
  await s.waitForTestId("help-overlay");
  await auditBothThemes(s, "shortcuts overlay", problems);

  assert.deepEqual(problems, [], problems.join("\n\n"));
});
