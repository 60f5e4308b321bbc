// A tiny W3C WebDriver client over fetch: just what the end-to-end suite uses, no dependencies.
// Spec: https://www.w3.org/TR/webdriver2/ — every command is JSON over HTTP, answers are
// `{ value }`, errors are `{ value: { error, message } }`.

import { execFileSync } from "node:child_process";

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

export const Keys = Object.freeze({
  TAB: "\uE004",
  ENTER: "\uE007",
  ESCAPE: "\uE00C",
  SPACE: "\uE00D",
  BACKSPACE: "\uE003",
  CONTROL: "\uE009",
  SHIFT: "\uE008",
  F1: "\uE031",
});

export class WebDriverError extends Error {
  constructor(command, status, error, message) {
    super(`${command}: ${error} (${status}): ${message}`);
    this.error = error;
    this.status = status;
  }
}

async function call(base, method, path, body, signal) {
  const response = await fetch(base + path, {
    method,
    signal,
    headers: body === undefined ? {} : { "content-type": "application/json; charset=utf-8" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    throw new WebDriverError(`${method} ${path}`, response.status, "invalid json", text.slice(0, 500));
  }
  if (!response.ok || (json.value && json.value.error)) {
    const value = json.value ?? {};
    throw new WebDriverError(`${method} ${path}`, response.status, value.error ?? "unknown error", value.message ?? text.slice(0, 500));
  }
  return json.value;
}

/** Waits until the driver at `base` answers `/status` with ready, or `timeoutMs` passes, or
 *  `failed()` returns why the driver cannot start. */
export async function waitForDriver(base, timeoutMs = 30_000, failed = () => undefined) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    const why = failed();
    if (why) throw new Error(`the WebDriver at ${base} did not start: ${why}`);
    try {
      // Bounded: a driver that accepted the connection but cannot answer must not hang the wait.
      const status = await call(base, "GET", "/status", undefined, AbortSignal.timeout(2000));
      if (status && status.ready !== false) return;
    } catch (e) {
      last = e;
    }
    await sleep(100);
  }
  throw new Error(`no WebDriver answered at ${base} within ${timeoutMs} ms (${last?.message ?? "not ready"})`);
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** `[data-testid="id"]`, optionally followed by more CSS (`testid("message", '[data-role="user"]')`). */
export const testid = (id, more = "") => `[data-testid="${id}"]${more}`;

export class Session {
  /** Opens a new session on the driver at `base` with these capabilities (alwaysMatch). */
  static async create(base, capabilities) {
    const value = await call(base, "POST", "/session", { capabilities: { alwaysMatch: capabilities } });
    return new Session(base, value.sessionId, value.capabilities);
  }

  constructor(base, id, capabilities) {
    this.base = base;
    this.id = id;
    this.capabilities = capabilities;
  }

  cmd(method, path, body) {
    return call(this.base, method, `/session/${this.id}${path}`, body);
  }

  async delete() {
    await this.cmd("DELETE", "");
  }

  /** The first element matching `css`; throws `no such element` when there is none. */
  async find(css) {
    return new Element(this, await this.cmd("POST", "/element", { using: "css selector", value: css }));
  }

  async findAll(css) {
    const found = await this.cmd("POST", "/elements", { using: "css selector", value: css });
    return found.map((ref) => new Element(this, ref));
  }

  byTestId(id, more) {
    return this.find(testid(id, more));
  }

  allByTestId(id, more) {
    return this.findAll(testid(id, more));
  }

  /** Runs `script` (a function body; `arguments[i]` are `args`) in the page and returns its value. */
  execute(script, args = []) {
    return this.cmd("POST", "/execute/sync", { script, args: args.map(toWire) });
  }

  /** Like `execute`, but the script ends by calling `arguments[arguments.length - 1](value)`. */
  executeAsync(script, args = []) {
    return this.cmd("POST", "/execute/async", { script, args: args.map(toWire) });
  }

  /** A PNG of the window. Without compositing (`IRONCLAW_GPU=off`, the app's default without a
   *  GPU) WebKitWebDriver's screenshot command never answers once a modal dialog has been
   *  shown, so the X server's picture of the screen is taken instead. */
  async screenshot() {
    if (process.env.IRONCLAW_GPU === "off") return execFileSync("import", ["-window", "root", "png:-"]);
    return Buffer.from(await this.cmd("GET", "/screenshot"), "base64");
  }

  title() {
    return this.cmd("GET", "/title");
  }

  /** Key presses sent to whatever has focus, through the actions API. */
  async pressKeys(...keys) {
    const actions = [];
    for (const key of keys) {
      actions.push({ type: "keyDown", value: key }, { type: "keyUp", value: key });
    }
    await this.cmd("POST", "/actions", { actions: [{ type: "key", id: "keyboard", actions }] });
    await this.cmd("DELETE", "/actions");
  }

  /** One chord sent to whatever has focus: every key goes down in order, then up in reverse
   *  (`pressChord(Keys.CONTROL, Keys.SHIFT, "a")` is Ctrl+Shift+A). */
  async pressChord(...keys) {
    const actions = [...keys.map((value) => ({ type: "keyDown", value })), ...[...keys].reverse().map((value) => ({ type: "keyUp", value }))];
    await this.cmd("POST", "/actions", { actions: [{ type: "key", id: "keyboard", actions }] });
    await this.cmd("DELETE", "/actions");
  }

  /** The window's outer rectangle `{ x, y, width, height }`. */
  windowRect() {
    return this.cmd("GET", "/window/rect");
  }

  setWindowRect(rect) {
    return this.cmd("POST", "/window/rect", rect);
  }

  /** Polls `probe` until it returns a truthy value (returned) or `timeoutMs` passes (throws `what`). */
  async waitUntil(what, probe, { timeoutMs = 30_000, intervalMs = 100 } = {}) {
    const deadline = Date.now() + timeoutMs;
    let last;
    for (;;) {
      try {
        const value = await probe();
        if (value) return value;
        last = undefined;
      } catch (e) {
        if (!(e instanceof WebDriverError) && !(e instanceof RetryableError)) throw e;
        last = e;
      }
      if (Date.now() > deadline) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${last.message})` : ""}`);
      }
      await sleep(intervalMs);
    }
  }

  /** Waits for an element matching `css` to exist (and be displayed, unless `displayed: false`). */
  waitFor(css, { displayed = true, ...options } = {}) {
    return this.waitUntil(`element ${css}`, async () => {
      for (const element of await this.findAll(css)) {
        if (!displayed || (await element.isDisplayed())) return element;
      }
      return null;
    }, options);
  }

  waitForTestId(id, options) {
    return this.waitFor(testid(id), options);
  }

  /** Waits until no displayed element matches `css`. */
  waitGone(css, options) {
    return this.waitUntil(`${css} to disappear`, async () => {
      for (const element of await this.findAll(css)) {
        if (await element.isDisplayed()) return false;
      }
      return true;
    }, options);
  }
}

/** Thrown by a probe to mean "not yet" with a reason that shows up in the timeout message. */
export class RetryableError extends Error {}

function toWire(arg) {
  return arg instanceof Element ? { [ELEMENT]: arg.id } : arg;
}

export class Element {
  constructor(session, ref) {
    this.session = session;
    this.id = ref[ELEMENT];
  }

  cmd(method, path, body) {
    return this.session.cmd(method, `/element/${this.id}${path}`, body);
  }

  async click() {
    // Without compositing, WebKitWebDriver does not scroll an element inside a scrolled box
    // (Settings) into view before it clicks, and calls it not interactable; a person scrolls.
    if (process.env.IRONCLAW_GPU === "off") {
      await this.session.cmd("POST", "/execute/sync", {
        script: "arguments[0].scrollIntoView({ block: 'nearest', inline: 'nearest' });",
        args: [{ [ELEMENT]: this.id }],
      });
    }
    await this.cmd("POST", "/click", {});
  }

  async clear() {
    await this.cmd("POST", "/clear", {});
  }

  /** Moves the pointer over the element (what shows hover-only controls). */
  async hover() {
    const actions = [{ type: "pointerMove", duration: 0, origin: { [ELEMENT]: this.id }, x: 0, y: 0 }];
    await this.session.cmd("POST", "/actions", { actions: [{ type: "pointer", id: "mouse", parameters: { pointerType: "mouse" }, actions }] });
  }

  async sendKeys(text) {
    await this.cmd("POST", "/value", { text });
  }

  text() {
    return this.cmd("GET", "/text");
  }

  attribute(name) {
    return this.cmd("GET", `/attribute/${encodeURIComponent(name)}`);
  }

  property(name) {
    return this.cmd("GET", `/property/${encodeURIComponent(name)}`);
  }

  isEnabled() {
    return this.cmd("GET", "/enabled");
  }

  /** Rendered and visible, judged in the page (the endpoint for this is not in the W3C spec). */
  isDisplayed() {
    return this.session.execute(
      `const e = arguments[0];
       if (!e.isConnected) return false;
       const s = getComputedStyle(e);
       if (s.display === "none" || s.visibility === "hidden") return false;
       return e.getClientRects().length > 0;`,
      [this],
    );
  }

  async find(css) {
    return new Element(this.session, await this.cmd("POST", "/element", { using: "css selector", value: css }));
  }

  async findAll(css) {
    const found = await this.cmd("POST", "/elements", { using: "css selector", value: css });
    return found.map((ref) => new Element(this.session, ref));
  }

  async screenshot() {
    return Buffer.from(await this.cmd("GET", "/screenshot"), "base64");
  }
}
