import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeBackend } from "../src/api/fake";
import { App } from "../src/app";
import { installShortcuts, isTyping, matchShortcut, type KeyLike } from "../src/lib/shortcuts";
import { all, q, settle } from "./helpers";

const k = (key: string, mods: Partial<KeyLike> = {}): KeyLike => ({ key, ctrlKey: false, metaKey: false, shiftKey: false, altKey: false, ...mods });
const ctrl = (key: string, more: Partial<KeyLike> = {}) => k(key, { ctrlKey: true, ...more });

describe("shortcut table", () => {
  it("maps the documented chords", () => {
    expect(matchShortcut(ctrl("n"), false)).toBe("newConversation");
    expect(matchShortcut(ctrl("k"), true)).toBe("search");
    expect(matchShortcut(ctrl("f"), false)).toBe("search");
    expect(matchShortcut(ctrl(","), false)).toBe("settings");
    expect(matchShortcut(ctrl("A", { shiftKey: true }), false)).toBe("pendingApproval");
    expect(matchShortcut(ctrl("="), false)).toBe("zoomIn");
    expect(matchShortcut(ctrl("+", { shiftKey: true }), false)).toBe("zoomIn");
    expect(matchShortcut(ctrl("-"), false)).toBe("zoomOut");
    expect(matchShortcut(ctrl("0"), false)).toBe("zoomReset");
    expect(matchShortcut(ctrl("q"), true)).toBe("quit");
    expect(matchShortcut(k("F1"), true)).toBe("help");
    expect(matchShortcut(k("?", { shiftKey: true }), false)).toBe("help");
    // Cmd on macOS is Ctrl elsewhere.
    expect(matchShortcut(k("n", { metaKey: true }), false)).toBe("newConversation");
  });

  it("leaves plain typing, Alt chords and unknown chords alone", () => {
    expect(matchShortcut(k("?", { shiftKey: true }), true)).toBeNull(); // typing a question
    expect(matchShortcut(k("n"), false)).toBeNull();
    expect(matchShortcut(k("a"), false)).toBeNull();
    expect(matchShortcut(ctrl("a"), false)).toBeNull(); // select all stays select all
    expect(matchShortcut(ctrl("n", { shiftKey: true }), false)).toBeNull();
    expect(matchShortcut(ctrl("n", { altKey: true }), false)).toBeNull();
    for (const key of ["Enter", " ", "y", "Y", "Tab"]) {
      expect(matchShortcut(k(key), false)).toBeNull();
      expect(matchShortcut(ctrl(key), false)).toBeNull();
      expect(matchShortcut(ctrl(key, { shiftKey: true }), false)).toBeNull();
    }
  });

  it("knows a text field from a button", () => {
    const input = document.createElement("input");
    const box = document.createElement("input");
    box.type = "checkbox";
    expect(isTyping(input)).toBe(true);
    expect(isTyping(document.createElement("textarea"))).toBe(true);
    expect(isTyping(box)).toBe(false);
    expect(isTyping(document.createElement("button"))).toBe(false);
    expect(isTyping(null)).toBe(false);
  });
});

describe("shortcuts in the app", () => {
  let root: HTMLElement;
  let uninstall: () => void;
  beforeEach(() => {
    root = document.createElement("div");
    document.body.append(root);
  });
  afterEach(() => {
    uninstall();
    document.body.replaceChildren();
  });

  async function start(scenario = "") {
    const api = new FakeBackend({ scenario });
    const app = new App(api, root);
    uninstall = installShortcuts((a) => app.shortcut(a));
    await app.start();
    await settle();
    return { api, app };
  }

  function press(key: string, mods: Partial<KeyLike> = {}): KeyboardEvent {
    const target = document.activeElement ?? document.body;
    const ev = new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, ...mods });
    target.dispatchEvent(ev);
    return ev;
  }

  it("new conversation, search, Settings and help each do their one thing", async () => {
    await start();
    const before = all("conversation-item").length;
    press("n", { ctrlKey: true });
    await settle(10);
    expect(all("conversation-item").length).toBe(before + 1);
    press("k", { ctrlKey: true });
    expect(document.activeElement).toBe(q("conversation-search"));
    // A "?" typed into the search box is text, not the help overlay.
    expect(press("?", { shiftKey: true }).defaultPrevented).toBe(false);
    expect(all("help-overlay")).toHaveLength(0);
    press(",", { ctrlKey: true });
    await settle(10);
    expect(all("settings-screen")).toHaveLength(1);
    q("settings-close").click();
    (document.activeElement as HTMLElement | null)?.blur();
    press("F1");
    expect(all("help-overlay")).toHaveLength(1);
    expect(q("help-overlay").textContent).toContain("Ctrl");
    press("Escape");
    expect(all("help-overlay")).toHaveLength(0);
  });

  it("no key, shortcut or not, decides a pending approval; Ctrl+Shift+A only shows it", async () => {
    const { api } = await start("approval");
    const dialog = q("approval-dialog");
    const chords: [string, Partial<KeyLike>][] = [
      ["Enter", {}], [" ", {}], ["y", {}], ["a", {}], ["Enter", { ctrlKey: true }], ["n", { ctrlKey: true }],
      ["k", { ctrlKey: true }], [",", { ctrlKey: true }], ["A", { ctrlKey: true, shiftKey: true }], ["F1", {}],
      ["?", { shiftKey: true }], ["=", { ctrlKey: true }], ["Enter", { ctrlKey: true, shiftKey: true }],
    ];
    for (const [key, mods] of chords) press(key, mods);
    await settle(10);
    // While the dialog is open it owns the keyboard: no shortcut ran behind it.
    expect(all("help-overlay")).toHaveLength(0);
    expect(all("settings-screen")).toHaveLength(0);
    press("Escape");
    await settle(5);
    expect(all("approval-dialog")).toHaveLength(0);
    for (const [key, mods] of chords) {
      press(key, mods);
      await settle(5);
      // Every overlay a shortcut opened is closed again by Escape, which never decides.
      press("Escape");
      document.querySelector<HTMLElement>('[data-testid="settings-close"]')?.click();
    }
    press("A", { ctrlKey: true, shiftKey: true });
    await settle(10);
    const shown = q("approval-dialog");
    expect(shown.dataset["approvalId"]).toBe(dialog.dataset["approvalId"]);
    expect(document.activeElement).toBe(q("approval-code"));
    for (const [key, mods] of chords) press(key, mods);
    await settle(10);
    expect(api.calls.filter((c) => c.name === "decide")).toHaveLength(0);
    // The same dialog's own button still works, so the count above could have moved.
    q<HTMLButtonElement>("approve-button").click();
    await settle(20);
    expect(api.calls.filter((c) => c.name === "decide")).toHaveLength(1);
  });

  it("Escape out of Settings gives the keys back to the composer, and Ctrl+Q quits", async () => {
    const { api } = await start();
    press(",", { ctrlKey: true });
    await settle(10);
    expect(all("settings-screen")).toHaveLength(1);
    expect(q("settings-screen").contains(document.activeElement)).toBe(true);
    press("Escape");
    await settle(5);
    expect(all("settings-screen")).toHaveLength(0);
    // Not lost on the page: what is typed next goes into the message box.
    expect(document.activeElement).toBe(q("message-input"));
    expect(api.quitRequests).toBe(0);
    press("q", { ctrlKey: true });
    await settle(5);
    expect(api.quitRequests).toBe(1);
  });
});

