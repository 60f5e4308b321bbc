// Issue 18, items 3–6: first-run texts and marks, Settings (keys, rules, profiles), search
// snippets, and one word for one thing.

import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ApprovalRequest } from "../src/bindings/ApprovalRequest";
import { choicesFor } from "../src/api/fake-script";
import { FakeBackend } from "../src/api/fake";
import { App } from "../src/app";
import { ApprovalQueue, riskSummary, type SendDecision } from "../src/views/approval";
import { applyModelMark, providerCheckText } from "../src/views/doctor";
import { ruleCode } from "../src/views/settings";
import { centreOnMatch, plainSnippet, snippet } from "../src/views/sidebar";
import { all, key, q, settle } from "./helpers";

function req(over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    choices: choicesFor(over.destructive ?? false),
    approvalId: "appr-1",
    codeHash: "a".repeat(64),
    language: "python",
    code: "print(open('x').read())\n",
    risk: "read_only",
    reasons: [],
    destructive: false,
    alteredSession: [],
    ...over,
  };
}

function queue() {
  const send = vi.fn<SendDecision>(async () => {});
  return { send, queue: new ApprovalQueue(send, { changed: vi.fn(), notice: vi.fn() }) };
}

let root: HTMLElement;
beforeEach(() => {
  root = document.createElement("div");
  document.body.append(root);
});
afterEach(() => document.body.replaceChildren());

describe("words in the approval dialog", () => {
  it("a read-only request with nothing flagged is not headed 'Why it's flagged'", () => {
    queue().queue.add(req());
    expect(q("approval-risk-heading").textContent).toBe("Risk check");
    expect(q("approval-reasons").textContent).toBe("Reads only, nothing flagged.");
    expect(q("approval-dialog").textContent).not.toMatch(/flagged\W*$|why it.s flagged/i);
  });

  it("reasons are headed by what they are: flagged risks, or notes on read-only code", () => {
    expect(riskSummary({ risk: "normal", reasons: [{ level: "normal", message: "Writes", snippet: "", line: 0 }] })).toEqual({ heading: "Why it's flagged", empty: null });
    expect(riskSummary({ risk: "read_only", reasons: [{ level: "read_only", message: "Reads", snippet: "", line: 0 }] }).heading).toBe("Risk check: reads only");
    // Normal risk with no specific reason: not "read only", and not "no risks" either.
    const normal = riskSummary({ risk: "normal", reasons: [] });
    expect(normal.heading).toBe("Risk check");
    expect(normal.empty).not.toMatch(/reads only|no .*risk/i);
  });

  it("says 'conversation', never 'session', for the conversation", () => {
    queue().queue.add(req({ risk: "normal", reasons: [{ level: "normal", message: "Writes a file", snippet: "", line: 0 }] }));
    const always = q<HTMLButtonElement>("always-allow-button");
    expect(always.textContent).toBe("Always allow in this conversation");
    const texts = [q("approval-dialog").textContent ?? "", ...[...document.querySelectorAll("[title]")].map((e) => e.getAttribute("title") ?? "")];
    for (const t of texts) expect(t).not.toMatch(/\bsession\b/i);
  });

  it("never offers 'Always allow' for destructive code, not even after the confirmation is ticked", async () => {
    const { queue: qu, send } = queue();
    qu.add(req({ risk: "destructive", destructive: true, language: "shell", code: "rm -rf /workspace/data\n", reasons: [{ level: "destructive", message: "Deletes a tree", snippet: "rm -rf", line: 1 }] }));
    expect(all("always-allow-button")).toHaveLength(0);
    q<HTMLInputElement>("destructive-confirm").click();
    await settle();
    expect(all("always-allow-button")).toHaveLength(0);
    expect(q("approval-dialog").textContent).not.toMatch(/always allow/i);
    // Approving once is still possible, and sends a one-off decision.
    q<HTMLButtonElement>("approve-button").click();
    await settle();
    expect(send.mock.calls[0]?.[1]).toEqual({ type: "approveOnce" });
  });
});

describe("first run", () => {
  it("the Model card's mark turns into the passed mark after a passing test, and back on failure", () => {
    const mark = document.createElement("span");
    applyModelMark(mark, "untested");
    expect(mark.textContent).toBe("◎");
    applyModelMark(mark, "passed");
    expect([mark.textContent, mark.dataset["state"], mark.classList.contains("ok")]).toEqual(["✓", "passed", true]);
    applyModelMark(mark, "failed");
    expect([mark.textContent, mark.classList.contains("ok"), mark.classList.contains("bad")]).toEqual(["!", false, true]);
  });

  it("status texts are sentences, not 'Connected to X. openai answers (1 model listed)'", () => {
    const ok = providerCheckText({ ok: true, model: "scripted", message: "Connected: the server at http://h/v1 answers and offers 1 model. IronClaw will use “scripted”." });
    expect(ok).toMatch(/^Connected: the server at http:\/\/h\/v1 answers/);
    expect(ok).not.toMatch(/Connected to|model listed|openai answers/);
    expect(providerCheckText({ ok: false, model: null, message: "connection refused" })).toBe("The model did not answer: connection refused");
  });

  it("after Save and test passes, the mark is ✓ and 'Start chatting' has focus", async () => {
    const api = new FakeBackend({ scenario: "nomodel" });
    await new App(api, root).start();
    await settle();
    expect(q("model-mark").dataset["state"]).toBe("untested");
    q<HTMLSelectElement>("provider-kind").value = "openai";
    q<HTMLSelectElement>("provider-kind").dispatchEvent(new Event("change"));
    q<HTMLInputElement>("provider-base-url").value = "http://127.0.0.1:8080/v1";
    q<HTMLInputElement>("provider-model").value = "mock";
    q<HTMLButtonElement>("save-provider").click();
    await settle(10);
    expect(q("model-mark").dataset["state"]).toBe("passed");
    expect(q("model-mark").textContent).toBe("✓");
    expect(q("provider-status").textContent).toBe("Connected: the server at http://127.0.0.1:8080/v1 answers and offers 1 model. IronClaw will use “mock”.");
    expect(q("doctor-continue").textContent).toBe("Start chatting");
    expect(document.activeElement).toBe(q("doctor-continue"));
  });
});

describe("Settings", () => {
  async function openSettingsWithRule(code: string) {
    const api = new FakeBackend({ scenario: "" });
    const app = new App(api, root);
    await app.start();
    await settle();
    const conv = api.convs.get("conv-sales")!;
    conv.rules = [{ codeHash: "c".repeat(64), language: "python", code, createdAt: 0 }];
    q<HTMLButtonElement>("open-settings").click();
    await settle();
    return api;
  }

  it("a saved rule shows its whole multi-line code, collapsed with a button that expands it", async () => {
    const code = "import os\nfor f in os.listdir('.'):\n    print(f)\nprint('done')\n";
    await openSettingsWithRule(code);
    const item = q("rule-item");
    const pre = q("rule-code", item);
    expect(pre.textContent).toBe(code.trimEnd());
    expect(pre.classList.contains("collapsed")).toBe(true);
    const expand = q<HTMLButtonElement>("rule-expand", item);
    expect(expand.textContent).toBe("Show all 4 lines");
    expand.click();
    expect(pre.classList.contains("collapsed")).toBe(false);
    expect(expand.getAttribute("aria-expanded")).toBe("true");
  });

  it("a rule's invisible characters are shown as tokens, with the dialog's warning", () => {
    // A right-to-left override and a zero-width space, on the second line.
    const el = ruleCode("print('ok')\nx = 'abc\u202E\u200Bdef'\n");
    expect(q("rule-code", el).textContent).toContain("⟨U+202E⟩");
    expect(q("rule-code", el).textContent).toContain("⟨U+200B⟩");
    expect(q("rule-hidden-warning", el).textContent).toMatch(/invisible|hidden|U\+/i);
    // Short code needs no expander.
    expect(all("rule-expand", el)).toHaveLength(0);
  });

  it("Escape closes Settings, also after Save", async () => {
    await openSettingsWithRule("print(1)");
    q<HTMLButtonElement>("settings-save").click();
    await settle(10);
    expect(all("settings-screen")).toHaveLength(1);
    key(document.body, "Escape");
    await settle();
    expect(all("settings-screen")).toHaveLength(0);
  });

  it("the profile list names profiles only; the limits are spelled out under it", async () => {
    await openSettingsWithRule("print(1)");
    const options = [...q<HTMLSelectElement>("settings-profile").options].map((o) => o.text);
    expect(options.length).toBeGreaterThan(0);
    for (const o of options) expect(o).toMatch(/^[\w-]+( \(default\))?$/);
    expect(q("settings-profile-limits").textContent).toMatch(/memory .* network/);
  });
});

describe("search snippets", () => {
  it("show plain text, not raw markdown", () => {
    expect(plainSnippet("The image is **«120x80»** pixels, see `size` and [the docs](http://x)")).toBe("The image is «120x80» pixels, see size and the docs");
    expect(plainSnippet("## Result\n- *one* item\n> quoted «word»")).toBe("Result one item quoted «word»");
    // Names with underscores and arithmetic stay as written.
    expect(plainSnippet("call «__init__» on snake_case, 2*3")).toBe("call «__init__» on snake_case, 2*3");
  });

  it("the window starts shortly before the match, at a word boundary", () => {
    const long = "one two three four five six seven eight nine ten eleven twelve «needle» after";
    const c = centreOnMatch(long, 24);
    expect(c.startsWith("…")).toBe(true);
    expect(c.indexOf("«")).toBeLessThanOrEqual(26);
    expect(c).toMatch(/^…\S/); // starts with a whole word
    expect(centreOnMatch("short «hit» here")).toBe("short «hit» here");
  });

  it("renders the match as <mark>, with no markdown left around it", () => {
    const host = document.createElement("span");
    host.append(snippet("lots of words before the actual match so that it would be cut **«120x80»** end"));
    expect(host.querySelector("mark")?.textContent).toBe("120x80");
    expect(host.textContent).not.toContain("*");
  });
});
