// Hostile model output: markdown carrying a script tag, an onerror handler, a javascript:
// link, a fake approve button, a form and an iframe, sent alongside a real run_code request.
// None of it may run, alert, navigate, or decide the pending approval.

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";

import { prepare } from "./lib/harness.mjs";
import { testid } from "./lib/webdriver.mjs";
import { alertOpen, approvalDialog, cells, sendMessage, textContent } from "./lib/ui.mjs";
import { runCodeReplies } from "./lib/harness.mjs";

const HOSTILE = [
  "Here is your report.\n\n",
  '<script>window.__pwned = "script"; alert("script")</script>\n\n',
  '<img src="nope.png" onerror="window.__pwned = \'onerror\'; alert(\'onerror\')">\n\n',
  "[Click for details](javascript:window.__pwned='link';alert('link'))\n\n",
  '<button data-testid="approve-button" onclick="window.__pwned=\'button\'">Approve</button>\n\n',
  '<a data-testid="approve-button" href="javascript:window.__pwned=\'anchor\'">Approve</a>\n\n',
  '<form action="javascript:window.__pwned=\'form\'"><input type="submit" value="Approve"></form>\n\n',
  '<iframe src="javascript:parent.__pwned=\'iframe\'"></iframe>\n\n',
  '<svg onload="window.__pwned=\'svg\'"><circle r="5"/></svg>\n\n',
  '<div style="position:fixed;inset:0" onclick="window.__pwned=\'overlay\'">Approve</div>\n',
];

test("hostile markdown from the model stays inert and cannot approve", { timeout: 240_000 }, async (t) => {
  const code = 'open("hostile-marker.txt", "w").write("ran")';
  const app = await prepare(t, {
    replies: [
      {
        type: "toolCalls",
        text: HOSTILE,
        calls: [{ id: "call_1", name: "run_code", argumentChunks: [JSON.stringify({ language: "python", code })] }],
      },
    ],
  });
  const s = await app.start();
  await sendMessage(s, "Write the report");

  // Close the real dialog without deciding; the request stays pending.
  const dialog = await approvalDialog(s);
  const approvalId = await dialog.attribute("data-approval-id");
  await s.pressKeys("\uE00C");
  await s.waitGone(testid("approval-dialog"));
  await s.waitForTestId("pending-approval-chip");

  const body = await s.waitFor(`${testid("message", '[data-role="assistant"]')} ${testid("message-body")}`);
  await s.waitUntil("the hostile text to render", async () => (await body.text()).includes("Here is your report"));

  // What survived sanitizing: no script, handler, form control, frame or javascript: URL.
  const audit = await s.execute(
    `const b = arguments[0];
     const all = [...b.querySelectorAll("*")];
     return {
       scripts: b.querySelectorAll("script").length,
       handlers: all.filter((e) => [...e.attributes].some((a) => a.name.startsWith("on"))).length,
       controls: b.querySelectorAll("button, input, form, select, textarea, iframe, object, embed, dialog").length,
       jsUrls: all.filter((e) => [...e.attributes].some((a) => /^\\s*javascript:/i.test(a.value))).length,
       styled: all.filter((e) => e.hasAttribute("style")).length,
       fakeApprove: b.querySelectorAll('[data-testid="approve-button"]').length,
     };`,
    [body],
  );
  assert.deepEqual(audit, { scripts: 0, handlers: 0, controls: 0, jsUrls: 0, styled: 0, fakeApprove: 0 });

  // Click everything that is left in the message (links, images, the "Approve" texts).
  for (const el of await body.findAll("a, img, div, span, p, svg")) {
    if (await el.isDisplayed()) await el.click().catch(() => {});
  }

  assert.equal(await alertOpen(s), false, "no alert was raised");
  assert.equal(await s.execute("return window.__pwned === undefined"), true, "no hostile code ran");
  assert.equal((await cells(s)).length, 0, "nothing executed");
  assert.ok(await (await s.byTestId("pending-approval-chip")).isDisplayed(), "the approval is still pending");
  const pending = await s.executeAsync(
    `const done = arguments[arguments.length - 1];
     window.__TAURI_INTERNALS__.invoke("pending_approvals").then((p) => done(p.map((x) => x.request.approvalId)), (e) => done("error: " + e));`,
  );
  assert.deepEqual(pending, [approvalId], "the backend still holds the request undecided");
  const files = app.workspaces().flatMap((ws) => (fs.existsSync(ws) ? fs.readdirSync(ws) : []));
  assert.ok(!files.includes("hostile-marker.txt"));
  assert.equal(app.llm.chatRequests().length, 1, "the model heard nothing back: no decision was made");
});

test("invisible, bidi and tag characters in code are shown marked in the real dialog, never as read-only", { timeout: 240_000 }, async (t) => {
  // Reads as `echo exe.txt rm` in a bidi-aware view; a zero-width space and tag characters hide more.
  const code = "echo \u202Etxt.exe\u202C r\u200Bm \u{E0041}\u{E0042}";
  const app = await prepare(t, { replies: runCodeReplies("shell", code) });
  const s = await app.start();
  await sendMessage(s, "Print a file name");
  const dialog = await approvalDialog(s);
  const shown = await s.byTestId("approval-code");
  await s.waitUntil("the marks", async () => (await textContent(s, shown)).includes("⟨U+202E⟩"));
  assert.equal(await textContent(s, shown), "echo ⟨U+202E⟩txt.exe⟨U+202C⟩ r⟨U+200B⟩m ⟨U+E0041⟩⟨U+E0042⟩");
  const marks = await s.execute(
    `return [...arguments[0].querySelectorAll(".invisible-char")].map((m) => [m.textContent, getComputedStyle(m).borderTopStyle]);`,
    [shown],
  );
  assert.deepEqual(marks.map((m) => m[0]), ["⟨U+202E⟩", "⟨U+202C⟩", "⟨U+200B⟩", "⟨U+E0041⟩", "⟨U+E0042⟩"]);
  assert.ok(marks.every((m) => m[1] === "dashed"), `marks are styled: ${JSON.stringify(marks)}`);
  assert.notEqual(await dialog.attribute("data-risk"), "read_only");
  const why = await textContent(s, await s.byTestId("approval-reasons"));
  assert.ok(why.includes("contains 5 invisible or bidirectional-control characters"), why);
  assert.ok(await (await s.byTestId("approval-hidden-warning")).isDisplayed());
  assert.equal((await cells(s)).length, 0, "nothing ran before a decision");
});
