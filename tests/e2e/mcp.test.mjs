// MCP tools in the app, as a person meets them: a real server from PyPI (mcp-server-time,
// installed by scripts/mcp-test-servers.sh) added in Settings, checked (started in its own
// sandbox container, its tools listed), then called by the model — the approval dialog names
// the tool, shows the arguments, and the call runs only once approved; its answer shows in
// the conversation and reaches the model fenced as untrusted.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import { prepare } from "./lib/harness.mjs";
import { testid, RetryableError } from "./lib/webdriver.mjs";
import { approvalDialog, finishedCell, screenshot, sendMessage, textContent, waitForAssistant } from "./lib/ui.mjs";

const packages = path.join(
  process.env.IRONCLAW_TEST_MCP_DIR ?? path.join(os.homedir(), ".cache", "ironclaw", "mcp-test-servers"),
  "time",
);

test("an MCP server added in Settings is checked, and its tool runs only as approved", { timeout: 300_000 }, async (t) => {
  assert.ok(fs.existsSync(path.join(packages, "mcp_server_time")), `${packages}: run scripts/mcp-test-servers.sh`);
  const replies = [
    { type: "toolCalls", text: [], calls: [{ id: "c1", name: "mcp__time__get_current_time", argumentChunks: ['{"timezone":', ' "Asia/Tokyo"}'] }] },
    { type: "text", chunks: ["Tokyo's time is above."] },
  ];
  const app = await prepare(t, { replies });
  const s = await app.start();

  await (await s.waitForTestId("open-settings")).click();
  await s.waitForTestId("settings-mcp");
  await (await s.byTestId("mcp-name")).sendKeys("time");
  await (await s.byTestId("mcp-command")).sendKeys("python3 -m mcp_server_time --local-timezone Etc/UTC");
  await (await s.byTestId("mcp-packages")).sendKeys(packages);
  await (await s.byTestId("mcp-add")).click();
  await s.waitFor(testid("mcp-server", '[data-name="time"]'));
  const yaml = fs.readFileSync(path.join(app.configDir, "mcp.yaml"), "utf8");
  assert.match(yaml, /time:\n\s+command:/);
  await (await s.byTestId("mcp-check")).click();
  const probe = await s.waitUntil("the server to be checked", async () => {
    const found = await s.findAll(testid("mcp-probe"));
    if (found.length === 0) throw new RetryableError("not checked yet");
    return textContent(s, found[0]);
  }, { timeoutMs: 90_000 });
  assert.match(probe, /get_current_time, convert_time/);
  await screenshot(s, "mcp-settings");

  // The system check has a line per server too.
  await (await s.byTestId("run-doctor")).click();
  const line = await s.waitUntil("the doctor's MCP line", async () => {
    const found = await s.findAll(testid("doctor-mcp-line", '[data-name="time"]'));
    const text = found.length ? await textContent(s, found[0]) : "";
    if (!/get_current_time/.test(text)) throw new RetryableError(`not yet: ${text}`);
    return text;
  }, { timeoutMs: 90_000 });
  assert.match(line, /^time: 2 tool\(s\) in its own sandbox container/);
  await screenshot(s, "mcp-doctor");
  await (await s.byTestId("doctor-continue")).click();
  await s.waitGone(testid("doctor-screen"));

  await sendMessage(s, "What time is it in Tokyo?");
  const dialog = await approvalDialog(s, { timeoutMs: 90_000 });
  const title = await textContent(s, await dialog.find("h2"));
  assert.equal(title, "Call the MCP tool time/get_current_time?");
  const shown = await textContent(s, await dialog.find("pre"));
  assert.match(shown, /"timezone": "Asia\/Tokyo"/);
  assert.match(await textContent(s, dialog), /only reads: its own claim/);
  assert.equal(app.llm.chatRequests().length, 1, "nothing answered before the approval");
  await screenshot(s, "mcp-approval");
  await (await dialog.find(testid("approve-button"))).click();
  await s.waitGone(testid("approval-dialog"));

  const cell = await finishedCell(s);
  assert.match(cell.stdout, /Asia\/Tokyo/);
  await waitForAssistant(s, "Tokyo's time is above.");
  await screenshot(s, "mcp-answer");
  const results = app.llm.chatRequests().at(-1).body.messages.filter((m) => m.role === "tool").map((m) => m.content);
  assert.match(results.at(-1), /untrusted/);
  assert.match(results.at(-1), /"datetime"/);
});
