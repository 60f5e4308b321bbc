// The person's AGENTS.md in the config folder: the chat header names it as soon as the
// conversation opens (where it comes from on hover), and the model receives it with the first
// message.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";

import { prepare } from "./lib/harness.mjs";
import { screenshot, sendMessage, waitForAssistant } from "./lib/ui.mjs";

test("the header names the instruction files in force, and the model received them", { timeout: 180_000 }, async (t) => {
  const app = await prepare(t, { replies: [{ type: "text", chunks: ["Bonjour !"] }] });
  const file = path.join(app.configDir, "AGENTS.md");
  fs.writeFileSync(file, "Answer in French. E2E-USER-MARKER\n");
  const s = await app.start();
  // Named as soon as the conversation is open, before anything is sent.
  const early = await s.waitForTestId("instructions-chip");
  assert.equal((await early.text()).trim(), "Instructions: AGENTS.md");

  await sendMessage(s, "hello");
  await waitForAssistant(s, "Bonjour !");
  const pill = await s.waitForTestId("instructions-chip");
  assert.equal((await pill.text()).trim(), "Instructions: AGENTS.md");
  const title = await pill.attribute("title");
  assert.match(title, /yours, for every conversation/);
  assert.ok(title.includes(file), title);

  const sent = JSON.stringify(app.llm.chatRequests()[0]?.body ?? null);
  assert.ok(sent.includes("E2E-USER-MARKER"), sent.slice(0, 400));
  await screenshot(s, "instructions-chip");
});
