// Switching models mid-conversation in the app: the header's menu lists provider.yaml's model and
// its more_models, choosing an Anthropic-style one says so in the chat, and the next turn goes to
// that API with the earlier tool call's ids made to fit it (the call and its result still pair up).

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";

import { prepare, runCodeReplies } from "./lib/harness.mjs";
import { testid, RetryableError } from "./lib/webdriver.mjs";
import { approvalDialog, finishedCell, screenshot, sendMessage, textContent, waitForAssistant } from "./lib/ui.mjs";

// What some OpenAI-compatible servers send, and Anthropic's API refuses.
const ODD_ID = "call:7/run python.1";

test("the model menu switches the next turn to another provider, tool calls translated", { timeout: 240_000 }, async (t) => {
  const replies = [
    ...runCodeReplies("python", "print(6 * 7)", { after: "It is 42.", id: ODD_ID }),
    { type: "text", chunks: ["Claude here: still 42."] },
  ];
  const app = await prepare(t, { replies, env: { IRONCLAW_E2E_KEY: "e2e-key" } });
  fs.writeFileSync(
    path.join(app.configDir, "provider.yaml"),
    `kind: openai\nbase_url: ${app.llm.baseUrl}/v1\nmodel: mock\nmore_models:\n  - kind: anthropic\n    base_url: ${app.llm.baseUrl}\n    model: claude-e2e\n    api_key_env: IRONCLAW_E2E_KEY\n`,
  );
  const s = await app.start();

  await sendMessage(s, "what is six times seven?");
  await (await (await approvalDialog(s)).find(testid("approve-button"))).click();
  assert.equal((await finishedCell(s)).stdout, "42\n");
  await waitForAssistant(s, "It is 42.");

  const button = await s.waitForTestId("model-button");
  assert.equal(await textContent(s, button), "mock");
  assert.equal(await button.isDisplayed(), true);
  await button.click();
  const options = await s.waitUntil("the model list", async () => {
    const found = await s.allByTestId("model-option");
    if (found.length < 2) throw new RetryableError(`${found.length} options`);
    return Promise.all(found.map((o) => o.attribute("data-model")));
  });
  assert.deepEqual(options.slice(0, 2), ["openai:mock", "anthropic:claude-e2e"]);
  await screenshot(s, "model-menu");
  await (await s.waitFor(testid("model-option", '[data-model="anthropic:claude-e2e"]'))).click();
  await s.waitUntil("the switch in the header", async () => {
    const label = await textContent(s, await s.byTestId("model-button"));
    if (label !== "claude-e2e") throw new RetryableError(label);
    return true;
  });

  await sendMessage(s, "say it again");
  await waitForAssistant(s, "Claude here: still 42.");
  const last = app.llm.chatRequests().at(-1);
  assert.equal(last.path, "/v1/messages");
  const blocks = last.body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
  const uses = blocks.filter((b) => b.type === "tool_use").map((b) => b.id);
  const results = blocks.filter((b) => b.type === "tool_result").map((b) => b.tool_use_id);
  assert.equal(uses.length, 1);
  assert.deepEqual(uses, results);
  assert.notEqual(uses[0], ODD_ID);
  assert.match(uses[0], /^[A-Za-z0-9_-]+$/);
});
