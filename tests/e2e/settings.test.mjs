// Settings as a new user meets it (issue 18, items 4 and 6): Close and Save stay in view, Escape
// closes it also after Save, profile names are shown whole, a saved "always allow" rule shows its
// whole code; the dialog says "conversation" and does not call read-only code flagged.
// And search (item 5): snippets are plain text and the match is shown whole in the active row.

import { test } from "node:test";
import assert from "node:assert/strict";

import { prepare, runCodeReplies } from "./lib/harness.mjs";
import { testid } from "./lib/webdriver.mjs";
import { approvalDialog, finishedCell, onScreen, sendMessage, textContent, waitForAssistant } from "./lib/ui.mjs";

// Five lines that only compute and print: read-only, and longer than a rule's preview.
const SUM = `values = [3, 5, 8, 13, 21]
total = 0
for v in values:
    total += v
print("total:", total)
`;

async function openSettings(s) {
  await (await s.waitForTestId("open-settings")).click();
  return s.waitForTestId("settings-screen");
}

/** Close and Save are on screen (not scrolled away, not covered) with the form scrolled to `where`. */
async function assertButtonsInView(s, screen, where) {
  await s.execute(`arguments[0].scrollTop = arguments[1] === "top" ? 0 : arguments[0].scrollHeight;`, [screen, where]);
  const scrollable = await s.execute(`return arguments[0].scrollHeight > arguments[0].clientHeight;`, [screen]);
  for (const id of ["settings-close", "settings-save"]) {
    const where_ = await onScreen(s, await s.byTestId(id));
    assert.ok(where_.visible, `${id} is not in view with the form scrolled to the ${where} (scrollable: ${scrollable}): ${JSON.stringify(where_)}`);
  }
}

test("Settings keeps Close and Save in view, closes on Escape after Save, and shows profiles and rules whole", { timeout: 300_000 }, async (t) => {
  const app = await prepare(t, { replies: runCodeReplies("python", SUM, { after: "The total is 50." }) });
  const s = await app.start();
  await s.waitForTestId("chat-view");

  let screen = await openSettings(s);
  await assertButtonsInView(s, screen, "top");
  await assertButtonsInView(s, screen, "bottom");

  // Every profile's label fits its list (measured in the list's own font, with room for the arrow).
  const labels = await s.execute(
    `const sel = arguments[0];
     const probe = document.createElement("span");
     probe.style.font = getComputedStyle(sel).font;
     probe.style.whiteSpace = "pre";
     probe.style.position = "absolute";
     document.body.append(probe);
     const out = [...sel.options].map((o) => { probe.textContent = o.text; return { text: o.text, width: probe.getBoundingClientRect().width }; });
     probe.remove();
     return { room: sel.clientWidth - 40, out };`,
    [await s.byTestId("settings-profile")],
  );
  assert.ok(labels.out.length > 0, "profiles are listed");
  for (const o of labels.out) assert.ok(o.width <= labels.room, `profile label cut off: ${JSON.stringify(o)} in ${labels.room}px`);
  assert.match(await (await s.byTestId("settings-profile-limits")).text(), /memory .* network/);

  // Ask for everything, so read-only code comes to the dialog; Save, then Escape still closes.
  await (await s.byTestId("settings-policy")).click();
  await (await s.find(`${testid("settings-policy")} option[value="ask_always"]`)).click();
  await (await s.byTestId("settings-save")).click();
  const status = await s.find(`${testid("settings-screen")} [role="status"]`);
  await s.waitUntil("the settings to be saved", async () => /^Saved\./.test(await status.text()));
  assert.ok((await onScreen(s, status)).visible, "what saving said is in view");
  // Reading what saving said (a click on the text) leaves nothing focused inside Settings;
  // Escape still closes it.
  await status.click();
  await s.pressKeys("\uE00C");
  await s.waitGone(testid("settings-screen"), { timeoutMs: 5_000 });

  await sendMessage(s, "Add these up");
  const dialog = await approvalDialog(s);
  assert.equal(await dialog.attribute("data-risk"), "read_only");
  const heading = await (await dialog.find(".approval-why h3")).text();
  assert.doesNotMatch(heading, /flagged/i, "read-only code is not called flagged");
  assert.match(heading, /^risk check/i);
  const always = await dialog.find(testid("always-allow-button"));
  assert.equal(await always.text(), "Always allow in this conversation");
  assert.doesNotMatch(await textContent(s, dialog), /\bsession\b/i);
  assert.doesNotMatch(await always.attribute("title"), /\bsession\b/i);
  await always.click();
  await s.waitGone(testid("approval-dialog"));
  assert.equal((await finishedCell(s)).state, "ok");
  await waitForAssistant(s, "The total is 50.");

  // The rule shows every line of the code, collapsed to a preview that expands.
  screen = await openSettings(s);
  const rule = await s.waitForTestId("rule-item");
  const code = await rule.find(".rule-code");
  assert.equal(await textContent(s, code), SUM.trimEnd());
  const expand = await rule.find(testid("rule-expand"));
  assert.equal(await expand.text(), "Show all 5 lines");
  await expand.click();
  const fits = await s.execute(`return arguments[0].scrollHeight <= arguments[0].clientHeight + 1;`, [code]);
  assert.ok(fits, "expanded, the whole rule is shown");
  await s.pressKeys("\uE00C");
  await s.waitGone(testid("settings-screen"), { timeoutMs: 5_000 });
});

test("search snippets are plain text and the active row shows the matched word whole", { timeout: 240_000 }, async (t) => {
  const answer =
    "I looked at the picture you sent earlier this afternoon and measured it twice to be sure: " +
    "the thumbnail is **120x80** pixels, which is small enough for the preview pane.";
  const app = await prepare(t, { replies: [{ type: "text", chunks: [answer] }] });
  const s = await app.start();
  await sendMessage(s, "How big is the thumbnail?");
  await waitForAssistant(s, "pixels");

  const search = await s.byTestId("conversation-search");
  await search.click();
  await search.sendKeys("120x80");
  const row = ".conv-item.active .conv-snippet";
  await s.waitFor(row);
  const shown = await s.waitUntil("the snippet to show the match", async () =>
    s.execute(
      `const snip = document.querySelector(arguments[0]);
       const mark = snip && snip.querySelector("mark");
       if (!mark) return null;
       const b = snip.getBoundingClientRect(), m = mark.getBoundingClientRect();
       return { text: snip.textContent, mark: mark.textContent, box: [b.left, b.top, b.right, b.bottom], match: [m.left, m.top, m.right, m.bottom] };`,
      [row],
    ),
  );
  assert.doesNotMatch(shown.text, /\*\*/, `raw markdown in the snippet: ${shown.text}`);
  assert.equal(shown.mark, "120x80");
  const [bl, bt, br, bb] = shown.box;
  const [ml, mt, mr, mb] = shown.match;
  assert.ok(ml >= bl - 0.5 && mr <= br + 0.5 && mt >= bt - 0.5 && mb <= bb + 0.5, `the match is cut off: ${JSON.stringify(shown)}`);
});
