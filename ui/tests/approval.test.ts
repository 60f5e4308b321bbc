import { afterEach, describe, expect, it, vi } from "vitest";
import type { ApprovalRequest } from "../src/bindings/ApprovalRequest";
import { choicesFor } from "../src/api/fake-script";
import { ApprovalQueue, LEAVE_BACKSTOP_MS, SHOW_SENDING_AFTER_MS, rehearseApprovalDialog, type SendDecision } from "../src/views/approval";
import { all, key, q, settle } from "./helpers";

const HASH_A = "a".repeat(64);
const HASH_B = "b".repeat(64);

function req(over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    choices: choicesFor(over.destructive ?? false),
    approvalId: "appr-1",
    codeHash: HASH_A,
    language: "python",
    code: "print('hello')\n",
    risk: "normal",
    reasons: [{ level: "normal", message: "Writes a file", snippet: "open('x','w')", line: 1 }],
    destructive: false,
    alteredSession: [],
    ...over,
  };
}

function setup() {
  const send = vi.fn<SendDecision>(async () => {});
  const changed = vi.fn();
  const notice = vi.fn();
  const queue = new ApprovalQueue(send, { changed, notice });
  return { send, changed, notice, queue };
}

/** A queue whose closed dialog gives focus to a composer, as the app's does. */
function withComposer(send: SendDecision) {
  const composer = document.createElement("textarea");
  document.body.append(composer);
  const queue = new ApprovalQueue(send, {
    changed: (_p, open) => {
      if (!open) composer.focus();
    },
    notice: () => {},
  });
  return { composer, queue };
}

afterEach(() => document.body.replaceChildren());

describe("approval dialog", () => {
  it("says what earlier runs left in the interpreter and offers a fresh one", async () => {
    const { queue, send } = setup();
    queue.add(req());
    expect(document.querySelector('[data-testid="altered-session"]')).toBeNull();
    expect(document.querySelector('[data-testid="fresh-approve-button"]')).toBeNull();
    document.body.replaceChildren();
    const second = setup();
    second.queue.add(req({ approvalId: "appr-9", alteredSession: ["run #1 left: 1 thread(s) besides the main one still running in the interpreter", "run #2 left: function ls shadows the command of that name"] }));
    const note = q("altered-session");
    expect(note.textContent).toContain("This python interpreter is not clean");
    expect(note.textContent).toContain("run #2 left: function ls shadows the command of that name");
    q<HTMLButtonElement>("fresh-approve-button").click();
    await settle();
    expect(second.send).toHaveBeenCalledTimes(1);
    const [sent, decision, confirmed, fresh] = second.send.mock.calls[0]!;
    expect(sent.approvalId).toBe("appr-9");
    expect(decision).toEqual({ type: "approveOnce" });
    expect(confirmed).toBe(false);
    expect(fresh).toBe(true);
    expect(send).not.toHaveBeenCalled();
  });

  it("says why the policy asked when it would have run an undoable run unasked", () => {
    const { queue } = setup();
    queue.add(req());
    expect(document.querySelector('[data-testid="asked-because"]')).toBeNull();
    document.body.replaceChildren();
    setup().queue.add(req({ approvalId: "appr-7", askedBecause: "the workspace could not be checkpointed, so this run could not be undone: disk full" }));
    expect(q("asked-because").textContent).toBe("Asked because the workspace could not be checkpointed, so this run could not be undone: disk full");
  });

  it("shows the exact code, language, risk and reasons", () => {
    const { queue } = setup();
    queue.add(req({ code: "import os\nos.remove('a.txt')  # <b>not html</b>\n" }));
    const dialog = q("approval-dialog");
    expect(dialog.dataset["approvalId"]).toBe("appr-1");
    expect(dialog.dataset["risk"]).toBe("normal");
    expect(dialog.dataset["destructive"]).toBe("false");
    expect(q("approval-code").textContent).toBe("import os\nos.remove('a.txt')  # <b>not html</b>\n");
    expect(q("approval-code").querySelector("b")).toBeNull();
    expect(q("approval-language").textContent).toBe("python");
    expect(q("approval-risk").textContent).toBe("Normal");
    expect(q("approval-reasons").textContent).toContain("Writes a file");
  });

  it("shows every invisible, bidi and tag character as a marked token, and the hash stays the request's", async () => {
    const { queue, send } = setup();
    // The examples: a right-to-left override that makes `txt.exe` read `exe.txt`, a
    // zero-width space, tag characters (invisible ASCII), and a variant the fix was not written
    // against: a no-break space and a word joiner.
    const code = "echo \u202Etxt.exe\u202C\nr\u200Bm x\nls # \u{E0072}\u{E006D}\ncat\u00A0a\u2060b\n";
    queue.add(req({ language: "shell", code, risk: "normal" }));
    const shown = q("approval-code");
    const marks = Array.from(shown.querySelectorAll<HTMLElement>(".invisible-char"));
    expect(marks.map((m) => m.textContent)).toEqual([
      "⟨U+202E⟩", "⟨U+202C⟩", "⟨U+200B⟩", "⟨U+E0072⟩", "⟨U+E006D⟩", "⟨U+00A0⟩", "⟨U+2060⟩",
    ]);
    expect(shown.textContent).toBe(
      "echo ⟨U+202E⟩txt.exe⟨U+202C⟩\nr⟨U+200B⟩m x\nls # ⟨U+E0072⟩⟨U+E006D⟩\ncat⟨U+00A0⟩a⟨U+2060⟩b\n",
    );
    // Nothing that reorders or hides is left in what is displayed.
    expect(/[\u202A-\u202E\u2066-\u2069\u200B\u00A0\u2060]|[\u{E0000}-\u{E007F}]/u.test(shown.textContent ?? "")).toBe(false);
    expect(q("approval-hidden-warning").textContent).toContain("7 invisible or direction-changing characters");
    q<HTMLButtonElement>("approve-button").click();
    await settle();
    expect(send).toHaveBeenCalledTimes(1);
    const [sentReq] = send.mock.calls[0]!;
    expect(sentReq.codeHash).toBe(HASH_A);
    expect(sentReq.code).toBe(code);
  });

  it("keeps marks after highlighting, and leaves plain code and emoji unmarked", async () => {
    const { queue } = setup();
    queue.add(req({ code: "print('\u26A0\uFE0F ok')  # \u202Ereversed\n" }));
    const { loadHighlighter } = await import("../src/lib/highlight");
    await loadHighlighter();
    await settle();
    const shown = q("approval-code");
    expect(shown.querySelector("code")?.hasAttribute("data-highlighted")).toBe(true);
    expect(Array.from(shown.querySelectorAll(".invisible-char")).map((m) => m.textContent)).toEqual(["⟨U+202E⟩"]);
    expect(shown.textContent).toBe("print('\u26A0\uFE0F ok')  # ⟨U+202E⟩reversed\n");
    expect(document.querySelector('[data-testid="approval-hidden-warning"]')).not.toBeNull();
    document.body.replaceChildren();
    queue.add(req({ approvalId: "appr-2", code: "print('plain')\n" }));
    expect(document.querySelector('[data-testid="approval-hidden-warning"]')).toBeNull();
  });

  it("starts focus on the code, not on Approve, and Enter/Space there decide nothing", async () => {
    const { queue, send } = setup();
    queue.add(req());
    const approve = q<HTMLButtonElement>("approve-button");
    expect(document.activeElement).toBe(q("approval-code"));
    expect(document.activeElement).not.toBe(approve);
    expect(approve.hasAttribute("autofocus")).toBe(false);
    expect(approve.getAttribute("type")).toBe("button");
    const enter = key(document.activeElement as HTMLElement, "Enter");
    key(document.activeElement as HTMLElement, " ");
    expect(enter.defaultPrevented).toBe(true);
    // Enter in the deny-reason field does not submit anything either.
    key(q("deny-reason"), "Enter");
    await settle();
    expect(send).not.toHaveBeenCalled();
  });

  it("puts Approve last in the tab order, after Deny", () => {
    const { queue } = setup();
    queue.add(req());
    const focusables = [...q("approval-dialog").querySelectorAll<HTMLElement>("button, input, textarea, [tabindex]")].filter((e) => !e.closest("[hidden]"));
    const ids = focusables.map((e) => e.dataset["testid"]);
    expect(ids.indexOf("approve-button")).toBe(ids.length - 1);
    expect(ids.indexOf("deny-button")).toBeLessThan(ids.indexOf("approve-button"));
  });

  it("Escape closes without deciding and leaves the request pending for the chip", async () => {
    const { queue, send, changed } = setup();
    queue.add(req());
    key(q("approval-code"), "Escape");
    await settle();
    expect(send).not.toHaveBeenCalled();
    expect(all("approval-dialog")).toHaveLength(0);
    expect(queue.requests.map((r) => r.approvalId)).toEqual(["appr-1"]);
    expect(changed).toHaveBeenLastCalledWith([expect.objectContaining({ approvalId: "appr-1" })], false);
    queue.open();
    expect(q("approval-dialog").dataset["approvalId"]).toBe("appr-1");
  });

  it("sends the id and hash of the request it was built from, whatever the DOM says", async () => {
    const { queue, send } = setup();
    queue.add(req());
    const dialog = q("approval-dialog");
    // Something tampering with the DOM cannot redirect the decision.
    dialog.setAttribute("data-approval-id", "appr-other");
    q("approval-code").textContent = "rm -rf /";
    q<HTMLButtonElement>("approve-button").click();
    await settle();
    expect(send).toHaveBeenCalledTimes(1);
    const [sent, decision, confirmed] = send.mock.calls[0]!;
    expect(sent.approvalId).toBe("appr-1");
    expect(sent.codeHash).toBe(HASH_A);
    expect(decision).toEqual({ type: "approveOnce" });
    expect(confirmed).toBe(false);
  });

  it("denies with the optional reason, and always-allow / edit send their decisions", async () => {
    const { queue, send } = setup();
    queue.add(req());
    q<HTMLInputElement>("deny-reason").value = "  not now ";
    q<HTMLButtonElement>("deny-button").click();
    await settle();
    expect(send.mock.calls[0]?.[1]).toEqual({ type: "deny", reason: "not now" });

    queue.resolved("appr-1");
    queue.add(req({ approvalId: "appr-2", codeHash: HASH_B }));
    q<HTMLButtonElement>("always-allow-button").click();
    await settle();
    expect(send.mock.calls[1]?.[0].approvalId).toBe("appr-2");
    expect(send.mock.calls[1]?.[1]).toEqual({ type: "alwaysAllowInSession" });

    queue.resolved("appr-2");
    queue.add(req({ approvalId: "appr-3" }));
    q<HTMLButtonElement>("edit-button").click();
    q<HTMLTextAreaElement>("edit-code").value = "print('edited')\n";
    q<HTMLButtonElement>("edit-approve-button").click();
    await settle();
    expect(send.mock.calls[2]?.[1]).toEqual({ type: "editAndApprove", code: "print('edited')\n" });
  });

  it("destructive code: warning shown, Approve disabled until the deliberate confirmation", async () => {
    const { queue, send } = setup();
    queue.add(req({ risk: "destructive", destructive: true, code: "rm -rf /workspace/data\n", language: "shell" }));
    expect(q("approval-dialog").dataset["destructive"]).toBe("true");
    expect(q("destructive-warning").textContent).toContain("delete");
    const approve = q<HTMLButtonElement>("approve-button");
    expect(approve.disabled).toBe(true);
    expect(q<HTMLButtonElement>("edit-approve-button").disabled).toBe(true);
    approve.click();
    await settle();
    expect(send).not.toHaveBeenCalled();
    // Deny never needs the confirmation.
    expect(q<HTMLButtonElement>("deny-button").disabled).toBe(false);

    const confirm = q<HTMLInputElement>("destructive-confirm");
    confirm.click();
    expect(confirm.checked).toBe(true);
    expect(approve.disabled).toBe(false);
    approve.click();
    await settle();
    expect(send).toHaveBeenCalledTimes(1);
    expect(send.mock.calls[0]?.[2]).toBe(true);
  });

  it("offers exactly the core's choices, whatever the risk says", async () => {
    const { queue, send } = setup();
    // Not flagged destructive, yet the core asks for the confirmation and offers no rule: the
    // dialog follows the list, not its own idea of what destructive code may do.
    queue.add(req({
      destructive: false,
      choices: [
        { kind: "approve_once", needsConfirmation: true },
        { kind: "deny", needsConfirmation: false },
      ],
    }));
    expect(document.querySelector('[data-testid="always-allow-button"]')).toBeNull();
    expect(q<HTMLButtonElement>("edit-button").hidden).toBe(true);
    const approve = q<HTMLButtonElement>("approve-button");
    expect(approve.disabled).toBe(true);
    q<HTMLInputElement>("destructive-confirm").click();
    approve.click();
    await settle();
    expect(send.mock.calls[0]?.[1]).toEqual({ type: "approveOnce" });
    expect(send.mock.calls[0]?.[2]).toBe(true);

    // And the other way: a plain request with the whole list has no confirmation step.
    document.body.replaceChildren();
    const plain = setup();
    plain.queue.add(req({ approvalId: "appr-2" }));
    expect(document.querySelector('[data-testid="destructive-confirm"]')).toBeNull();
    q<HTMLButtonElement>("always-allow-button").click();
    await settle();
    expect(plain.send.mock.calls[0]?.[1]).toEqual({ type: "alwaysAllowInSession" });
    expect(plain.send.mock.calls[0]?.[2]).toBe(false);
  });

  it("queues several requests, one dialog at a time, next one after a decision", () => {
    const { queue } = setup();
    queue.add(req({ approvalId: "a1" }));
    queue.add(req({ approvalId: "a2" }));
    queue.add(req({ approvalId: "a3" }));
    expect(all("approval-dialog")).toHaveLength(1);
    expect(q("approval-dialog").dataset["approvalId"]).toBe("a1");
    queue.resolved("a1");
    expect(all("approval-dialog")).toHaveLength(1);
    expect(q("approval-dialog").dataset["approvalId"]).toBe("a2");
    queue.open("a3");
    expect(q("approval-dialog").dataset["approvalId"]).toBe("a3");
    expect(all("approval-dialog")).toHaveLength(1);
  });

  it("a new request reopens a dismissed dialog, oldest first", () => {
    const { queue } = setup();
    queue.add(req({ approvalId: "a1" }));
    queue.dismiss();
    expect(all("approval-dialog")).toHaveLength(0);
    queue.add(req({ approvalId: "a2" }));
    expect(all("approval-dialog")).toHaveLength(1);
    expect(q("approval-dialog").dataset["approvalId"]).toBe("a1");
    expect(document.activeElement).toBe(q("approval-code"));
  });

  it("a decision on its way ignores more clicks, and says so only when it takes a while", async () => {
    vi.useFakeTimers();
    try {
      const { queue, send } = setup();
      queue.add(req());
      const approve = q<HTMLButtonElement>("approve-button");
      approve.click();
      q<HTMLButtonElement>("deny-button").click();
      approve.click();
      expect(send).toHaveBeenCalledTimes(1);
      // Nothing repaints for an answer that comes at once.
      expect(approve.disabled).toBe(false);
      expect(q("approval-status").textContent).toBe("");
      vi.advanceTimersByTime(SHOW_SENDING_AFTER_MS);
      expect(approve.disabled).toBe(true);
      expect(q<HTMLButtonElement>("deny-button").disabled).toBe(true);
      expect(q("approval-status").textContent).toBe("Sending approval…");
      approve.click();
      expect(send).toHaveBeenCalledTimes(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a dialog closed before its decision was slow says nothing afterwards", async () => {
    vi.useFakeTimers();
    try {
      const { queue } = setup();
      queue.add(req());
      const status = q("approval-status");
      q<HTMLButtonElement>("approve-button").click();
      queue.resolved("appr-1");
      vi.advanceTimersByTime(SHOW_SENDING_AFTER_MS * 2);
      expect(all("approval-dialog")).toHaveLength(0);
      expect(status.textContent).toBe("");
    } finally {
      vi.useRealTimers();
    }
  });

  it("shows a rejection in the dialog and lets the person try again", async () => {
    const { queue, send } = setup();
    queue.add(req());
    q<HTMLButtonElement>("approve-button").click();
    await settle();
    await new Promise((r) => setTimeout(r, SHOW_SENDING_AFTER_MS + 20));
    expect(q<HTMLButtonElement>("approve-button").disabled).toBe(true); // waiting for the outcome
    queue.rejected("appr-1", "The code hash does not match the request; nothing ran.", true);
    expect(q("approval-status").textContent).toBe("The code hash does not match the request; nothing ran.");
    expect(q<HTMLButtonElement>("approve-button").disabled).toBe(false);
    expect(send).toHaveBeenCalledTimes(1);
  });

  it("a decided dialog leaves in two steps: invisible and deaf at once, removed after the frame after next", async () => {
    const { queue, changed, send } = setup();
    queue.add(req({ approvalId: "a1" }));
    queue.add(req({ approvalId: "a2" }));
    const first = q("approval-dialog");
    const approve = q<HTMLButtonElement>("approve-button");
    expect(approve.disabled).toBe(false);
    queue.resolved("a1");
    // At once: invisible, no test ids, and the next request's dialog is the only one found.
    expect(first.classList.contains("leaving")).toBe(true);
    expect(first.isConnected).toBe(true);
    expect(first.querySelector("[data-testid]")).toBeNull();
    expect(all("approval-dialog")).toHaveLength(1);
    expect(q("approval-dialog").dataset["approvalId"]).toBe("a2");
    // Its buttons decide nothing any more.
    approve.click();
    await settle();
    expect(send).not.toHaveBeenCalled();
    await new Promise((r) => setTimeout(r, 80));
    expect(first.isConnected).toBe(false);
    // The last one gone: the queue says so again once it is really removed (focus had been in it).
    queue.resolved("a2");
    changed.mockClear();
    await new Promise((r) => setTimeout(r, 80));
    expect(changed).toHaveBeenCalledWith([], false);
    expect(document.querySelector("dialog")).toBeNull();
  });

  it("a key pressed while a decided dialog leaves finishes the close at once, and only closes it", () => {
    const { queue } = setup();
    queue.add(req({ approvalId: "a1" }));
    queue.add(req({ approvalId: "a2" }));
    const first = q("approval-dialog");
    queue.resolved("a1");
    expect(first.isConnected).toBe(true);
    // Escape on the leaving dialog removes it; it does not dismiss the next one.
    key(first, "Escape");
    expect(first.isConnected).toBe(false);
    expect(q("approval-dialog").hasAttribute("open")).toBe(true);
    const second = q("approval-dialog");
    queue.resolved("a2");
    key(document.body, "a");
    expect(second.isConnected).toBe(false);
  });

  it("a decided dialog is removed within LEAVE_BACKSTOP_MS when no frame is drawn", async () => {
    const frames = vi.spyOn(window, "requestAnimationFrame").mockImplementation(() => 0);
    try {
      const { queue } = setup();
      queue.add(req({ approvalId: "a1" }));
      const first = q("approval-dialog");
      queue.resolved("a1");
      expect(frames).toHaveBeenCalled();
      await new Promise((r) => setTimeout(r, LEAVE_BACKSTOP_MS / 2));
      expect(first.isConnected).toBe(true);
      await new Promise((r) => setTimeout(r, LEAVE_BACKSTOP_MS));
      expect(first.isConnected).toBe(false);
    } finally {
      frames.mockRestore();
    }
  });

  it("characters typed while a decision is on its way reach the field that gets focus back; shortcuts pass", async () => {
    const send = vi.fn<SendDecision>(() => new Promise<void>(() => {}));
    const { composer, queue } = withComposer(send);
    queue.add(req({ approvalId: "a1" }));
    const approve = q<HTMLButtonElement>("approve-button");
    // Before a decision, keys are the dialog's: nothing is kept.
    expect(key(approve, "x").defaultPrevented).toBe(false);
    approve.click();
    expect(send).toHaveBeenCalledTimes(1);
    expect(key(approve, "h").defaultPrevented).toBe(true);
    expect(key(approve, "i").defaultPrevented).toBe(true);
    expect(key(document.body, "!").defaultPrevented).toBe(true);
    const shortcut = new KeyboardEvent("keydown", { key: "k", ctrlKey: true, bubbles: true, cancelable: true });
    approve.dispatchEvent(shortcut);
    expect(shortcut.defaultPrevented).toBe(false);
    queue.resolved("a1");
    await new Promise((r) => setTimeout(r, 80));
    expect(document.querySelector("dialog")).toBeNull();
    expect(composer.value).toBe("hi!");
    // Once the dialog has gone, keys are left alone.
    expect(key(composer, "z").defaultPrevented).toBe(false);
  });

  it("characters typed while a decision is on its way are dropped when it is refused, and not kept after", async () => {
    let refuse: (e: Error) => void = () => {};
    const send = vi.fn<SendDecision>(() => new Promise<void>((_ok, fail) => (refuse = fail)));
    const { composer, queue } = withComposer(send);
    queue.add(req({ approvalId: "a1" }));
    const approve = q<HTMLButtonElement>("approve-button");
    approve.click();
    key(approve, "a");
    refuse(new Error("the request changed"));
    await settle();
    expect(q("approval-status").textContent).toContain("the request changed");
    expect(key(approve, "b").defaultPrevented).toBe(false);
    queue.resolved("a1");
    await new Promise((r) => setTimeout(r, 80));
    expect(composer.value).toBe("");
  });

  it("a dialog closed undecided (Escape) is removed at once", () => {
    const { queue, changed } = setup();
    queue.add(req({ approvalId: "a1" }));
    const dialog = q("approval-dialog");
    key(dialog, "Escape");
    expect(dialog.isConnected).toBe(false);
    expect(changed).toHaveBeenLastCalledWith([expect.objectContaining({ approvalId: "a1" })], false);
  });

  it("a rejection for a request no longer pending closes it and tells the chat", () => {
    const { queue, notice } = setup();
    queue.add(req());
    queue.rejected("appr-1", "Already decided from a notification.", false);
    expect(all("approval-dialog")).toHaveLength(0);
    expect(notice).toHaveBeenCalledWith("Already decided from a notification.");
  });
});

describe("the rehearsal at start", () => {
  afterEach(() => {
    document.body.innerHTML = "";
  });

  it("lays out a whole dialog that nobody can see, reach or find, and leaves nothing behind", async () => {
    const composer = document.createElement("textarea");
    document.body.append(composer);
    composer.focus();
    const observer = new MutationObserver(() => {});
    observer.observe(document.body, { childList: true });

    rehearseApprovalDialog();

    const records = observer.takeRecords();
    observer.disconnect();
    // It ran: one stage went in and came out again, holding an open dialog with the code.
    const added = records.flatMap((r) => [...r.addedNodes]) as HTMLElement[];
    const removed = records.flatMap((r) => [...r.removedNodes]);
    expect(added).toHaveLength(1);
    expect(removed).toEqual(added);
    const stage = added[0];
    if (!stage) throw new Error("the rehearsal added nothing");
    const dialog = stage.querySelector("dialog");
    expect(dialog?.hasAttribute("open")).toBe(true);
    expect(dialog?.querySelector("pre code")?.textContent).toContain("print(");
    expect(dialog?.querySelectorAll("button").length).toBeGreaterThan(2);
    // Unseen and unreachable while it was there; nothing a test or the person could select.
    expect(stage.inert).toBe(true);
    expect(stage.getAttribute("aria-hidden")).toBe("true");
    expect(stage.style.visibility).toBe("hidden");
    expect(stage.querySelectorAll("[data-testid], [id], [autofocus]")).toHaveLength(0);
    expect(dialog?.hasAttribute("data-testid")).toBe(false);
    // Nothing left, focus where the person had it.
    expect(document.querySelectorAll("dialog")).toHaveLength(0);
    expect(document.activeElement).toBe(composer);

    // The real dialog that follows is built and decided as always.
    const { send, queue } = setup();
    queue.add(req());
    expect(all("approval-dialog")).toHaveLength(1);
    q("approve-button").click();
    await settle();
    expect(send).toHaveBeenCalledTimes(1);
  });
});
