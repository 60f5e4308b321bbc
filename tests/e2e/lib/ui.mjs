// Steps through IronClaw's screens by the `data-testid`s of the shared DOM contract.

import * as fs from "node:fs";
import * as path from "node:path";

import { ROOT } from "./harness.mjs";
import { testid, RetryableError } from "./webdriver.mjs";

// The manual's screenshots (docs/screenshots) are refreshed on request
// (`scripts/e2e.sh --update-screenshots`); ordinary runs write to target/ so the tree stays clean.
export const SCREENSHOT_DIR = process.env.IRONCLAW_SCREENSHOT_DIR ?? path.join(ROOT, "target/e2e-screenshots");

/** The element's text exactly as in the DOM (WebDriver's own `text` normalizes whitespace). */
export function textContent(session, element) {
  return session.execute("return arguments[0].textContent", [element]);
}

/** Waits for the chat, types `text` into the composer and sends it. */
export async function sendMessage(session, text) {
  const input = await session.waitForTestId("message-input");
  await input.click();
  await input.sendKeys(text);
  await (await session.byTestId("send-button")).click();
  await session.waitFor(testid("message", '[data-role="user"]'));
}

/** The open approval dialog (waits for one). */
export function approvalDialog(session, options) {
  return session.waitForTestId("approval-dialog", options);
}

/** The execution cells in order, each as `{ el, id, state }`. */
export async function cells(session) {
  const found = await session.allByTestId("execution-cell");
  return Promise.all(
    found.map(async (el) => ({ el, id: await el.attribute("data-execution-id"), state: await el.attribute("data-state") })),
  );
}

/** Waits until the (only or last) cell is finished and returns `{ el, state, stdout, stderr, code }`. */
export async function finishedCell(session, options) {
  return session.waitUntil(
    "an execution cell to finish",
    async () => {
      const all = await cells(session);
      const last = all.at(-1);
      if (!last) throw new RetryableError("no execution-cell yet");
      if (last.state === "running") throw new RetryableError(`cell ${last.id} still running`);
      return { ...last, ...(await cellText(session, last.el)) };
    },
    { timeoutMs: 120_000, ...options },
  );
}

/** Waits (output is painted per animation frame) until the cell's `stream` equals `expected`;
 *  on timeout fails with what the cell showed instead. */
export async function waitForCellOutput(session, cell, expected, { stream = "stdout", timeoutMs = 15_000 } = {}) {
  let last;
  try {
    await session.waitUntil(
      `${stream} of the cell to be ${JSON.stringify(expected)}`,
      async () => {
        last = await cellText(session, cell);
        return last[stream] === expected;
      },
      { timeoutMs },
    );
  } catch {
    throw new Error(`the cell's ${stream} is ${JSON.stringify(last?.[stream])}, expected ${JSON.stringify(expected)} (whole cell: ${JSON.stringify(last)})`);
  }
  return last;
}

export async function cellText(session, cell) {
  return session.execute(
    `const c = arguments[0];
     const t = (id) => { const e = c.querySelector('[data-testid="' + id + '"]'); return e ? e.textContent : null; };
     return { stdout: t("cell-stdout"), stderr: t("cell-stderr"), code: t("cell-code"), exit: t("cell-exit") };`,
    [cell],
  );
}

/** The text of every assistant message so far. */
export function assistantTexts(session) {
  return session.execute(
    `return [...document.querySelectorAll('[data-testid="message"][data-role="assistant"] [data-testid="message-body"]')].map((e) => e.textContent);`,
  );
}

/** Waits for an assistant message containing `needle`. */
export function waitForAssistant(session, needle, options) {
  return session.waitUntil(
    `an assistant message containing ${JSON.stringify(needle)}`,
    async () => (await assistantTexts(session)).some((t) => t.includes(needle)),
    { timeoutMs: 60_000, ...options },
  );
}

/** Saves a WebDriver screenshot of the window as docs/screenshots/<name>.png. */
export async function screenshot(session, name) {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  // Let the last frame paint (transitions, highlighter) before the shot.
  await session.executeAsync("const done = arguments[arguments.length - 1]; requestAnimationFrame(() => requestAnimationFrame(() => done()));");
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  fs.writeFileSync(file, await session.screenshot());
  return file;
}

/** Whether the browser has a JavaScript dialog (alert/confirm/prompt) open. */
export async function alertOpen(session) {
  try {
    await session.cmd("GET", "/alert/text");
    return true;
  } catch (e) {
    if (e.error === "no such alert") return false;
    throw e;
  }
}

/** Where `element` is on screen: whether it lies wholly inside the window and is what a click
 *  at its centre would hit (not covered, not scrolled away), with the rectangles for messages. */
export function onScreen(session, element) {
  return session.execute(
    `const e = arguments[0];
     const r = e.getBoundingClientRect();
     const inside = r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
     const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
     return { visible: inside && !!hit && (hit === e || e.contains(hit)), rect: [r.left, r.top, r.right, r.bottom].map(Math.round), window: [innerWidth, innerHeight] };`,
    [element],
  );
}
