// The approval dialog and its queue. A decision is sent only from this dialog's own buttons,
// with the approvalId and codeHash of the `approvalRequested` event the dialog was built from
// (held in a closure, never read back from the DOM). No single stray keypress approves: focus
// starts on the code, Enter outside a focused button does nothing, Approve is last in the tab
// order and never default, and an answer the core marks as needing confirmation (destructive
// code) needs a separate confirmation first. The dialog offers exactly the request's `choices`:
// what destructive code may do is decided once, in the core, not here.

import type { ApprovalRequest } from "../bindings/ApprovalRequest";
import type { Decision } from "../bindings/Decision";
import type { DecisionChoice } from "../bindings/DecisionChoice";
import type { DecisionKind } from "../bindings/DecisionKind";
import type { RiskLevel } from "../bindings/RiskLevel";
import { errorText } from "../api/types";
import { h } from "../lib/dom";
import { highlightElement } from "../lib/highlight";
import { describeHidden, markInvisible } from "../lib/invisible";

export const RISK_LABEL: Record<RiskLevel, string> = {
  read_only: "Read-only",
  normal: "Normal",
  destructive: "Destructive",
};

/** The heading over the risk reasons and, when nothing was flagged, the line under it: a
 *  read-only request is not "flagged", so it does not say so. */
export function riskSummary(r: Pick<ApprovalRequest, "risk" | "reasons">): { heading: string; empty: string | null } {
  if (r.reasons.length > 0) return { heading: r.risk === "read_only" ? "Risk check: reads only" : "Why it's flagged", empty: null };
  return {
    heading: "Risk check",
    empty: r.risk === "read_only" ? "Reads only, nothing flagged." : "Nothing specific flagged. Read the code before you approve.",
  };
}

const KIND: Record<Decision["type"], DecisionKind> = {
  approveOnce: "approve_once",
  alwaysAllowInSession: "always_allow_in_session",
  editAndApprove: "edit_and_approve",
  deny: "deny",
};

/** The core's answer of this kind for `r`, when it offers one. */
export function choiceOf(r: ApprovalRequest, kind: DecisionKind): DecisionChoice | undefined {
  return r.choices.find((c) => c.kind === kind);
}

export type SendDecision = (
  req: ApprovalRequest,
  decision: Decision,
  confirmed: boolean,
  freshInterpreter?: boolean,
) => Promise<void>;

/**
 * How long a decision may be on its way before the dialog says so. The core answers within a
 * few milliseconds, and painting "Sending approval…" with every button greyed out for that
 * long put a whole software-rendered frame on the way to the run's first output
 * (docs/benchmarks.md#app-waits); while it is on its way, `busy` already ignores further clicks.
 */
export const SHOW_SENDING_AFTER_MS = 150;
/** The longest a decided dialog stays (invisible, the page still inert) when frames stop. */
export const LEAVE_BACKSTOP_MS = 100;

/** One open dialog for one request. */
class ApprovalDialog {
  readonly el: HTMLDialogElement;
  private readonly status: HTMLElement;
  private readonly approveBtn: HTMLButtonElement;
  /** Present only when the core offers a rule (never for destructive code). */
  private readonly alwaysBtn: HTMLButtonElement | null;
  private readonly freshBtn: HTMLButtonElement | null;
  private readonly editApproveBtn: HTMLButtonElement;
  private readonly confirm: HTMLInputElement | null;
  private readonly controls: (HTMLButtonElement | HTMLInputElement | HTMLTextAreaElement)[];
  private readonly codeEl: HTMLElement;
  private busy = false;
  /** Closed or closing (close()): decides nothing and answers no key any more. */
  private leaving = false;
  /** Characters typed while the decision was on its way, for the field that gets focus back. */
  private typedAhead = "";
  private readonly typeAhead = (ev: KeyboardEvent): void => {
    // A dialog taken out of the page other than by close() keeps no keys.
    if (!this.el.isConnected) {
      document.removeEventListener("keydown", this.typeAhead, true);
      return;
    }
    if (!isCharacter(ev)) return;
    ev.preventDefault();
    this.typedAhead += ev.key;
  };
  private sendingShown: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly req: ApprovalRequest,
    position: { index: number; total: number },
    private readonly send: SendDecision,
    private readonly onEscape: () => void,
    private readonly onGone: () => void = () => {},
  ) {
    const r = req;
    // An MCP call's arguments are JSON after the line that names the tool.
    const code = h("code", { "data-lang": isToolCall(r) ? "json" : r.language }, r.code);
    // Every invisible, control, bidi or tag character is shown as a marked ⟨U+…⟩ token; the
    // hash sent with the decision is the request's, over the real text.
    markInvisible(code);
    const hiddenNote = describeHidden(r.code);
    const hidden = hiddenNote
      ? h("p", { testid: "approval-hidden-warning", className: "hidden-warning", role: "alert" }, hiddenNote)
      : null;
    this.codeEl = h("pre", { testid: "approval-code", className: "approval-code", tabindex: 0, autofocus: true, "aria-label": "Code to run" }, code);
    const reasons = h("ul", { testid: "approval-reasons", className: "approval-reasons" });
    for (const reason of r.reasons) {
      reasons.append(
        h(
          "li",
          { className: `reason reason-${reason.level}` },
          h("span", { className: `risk-dot risk-${reason.level}`, "aria-hidden": "true" }),
          h("span", { className: "reason-message" }, reason.message),
          reason.snippet ? h("code", { className: "reason-snippet" }, reason.snippet) : null,
          reason.line ? h("span", { className: "reason-line" }, `line ${reason.line}`) : null,
        ),
      );
    }
    const summary = riskSummary(r);
    if (summary.empty) reasons.append(h("li", { className: "reason muted" }, summary.empty));
    markInvisible(reasons);

    const denyReason = h("input", {
      testid: "deny-reason", className: "input", type: "text", placeholder: "Reason for denying (optional)",
      "aria-label": "Reason for denying (optional)", autocomplete: "off",
    });
    const editCode = h("textarea", { testid: "edit-code", className: "input code-input", rows: 8, spellcheck: "false", "aria-label": "Edited code" });
    editCode.value = r.code;
    this.editApproveBtn = h("button", { testid: "edit-approve-button", className: "btn btn-primary", type: "button" }, "Run edited code");
    const editArea = h("div", { className: "edit-area", hidden: true }, h("label", { className: "field-label" }, "Edit the code, then run your version"), editCode, h("div", { className: "row-end" }, this.editApproveBtn));

    const needsConfirmation = r.choices.some((c) => c.needsConfirmation);
    this.confirm = needsConfirmation
      ? h("input", { testid: "destructive-confirm", type: "checkbox", id: `confirm-${r.approvalId}` })
      : null;
    const warning = needsConfirmation
      ? h(
          "div",
          { testid: "destructive-warning", className: "destructive-warning", role: "alert" },
          h("strong", {}, r.destructive ? "This code can delete or overwrite data." : "This code needs your explicit confirmation."),
          h("p", {}, r.destructive ? "Read every line before you approve. Afterwards, Undo under the run puts the workspace's files back (not the interpreter's variables), unless the run says it cannot be undone." : "Read every line before you approve."),
          h("label", { className: "confirm-line", for: `confirm-${r.approvalId}` }, this.confirm, " I have read the code and want it to run"),
        )
      : null;

    // What earlier runs left in the interpreter: the code may not do what it reads as doing.
    const altered = r.alteredSession ?? [];
    this.freshBtn = altered.length
      ? h("button", { testid: "fresh-approve-button", className: "btn", type: "button", title: "Start a new interpreter (its variables are lost), then run this code" }, "Restart interpreter, then approve")
      : null;
    const alteredNote = altered.length
      ? h(
          "div",
          { testid: "altered-session", className: "altered-session", role: "alert" },
          h("strong", {}, `This ${r.language} interpreter is not clean`),
          h("p", {}, "What earlier runs left in it can change what the code below does:"),
          h("ul", {}, ...altered.map((a) => h("li", {}, a))),
          h("p", {}, "Restart the interpreter first to run it in a clean one."),
        )
      : null;

    // The policy would have let it run unasked if it could be undone: say why it cannot.
    const askedBecause = r.askedBecause
      ? h("p", { testid: "asked-because", className: "asked-because" }, h("strong", {}, "Asked because "), r.askedBecause)
      : null;

    this.status = h("p", { testid: "approval-status", className: "approval-status", role: "status", "aria-live": "polite" });
    const denyBtn = h("button", { testid: "deny-button", className: "btn", type: "button" }, "Deny");
    const editBtn = h("button", { testid: "edit-button", className: "btn", type: "button" }, "Edit…");
    this.alwaysBtn = choiceOf(r, "always_allow_in_session")
      ? h("button", { testid: "always-allow-button", className: "btn", type: "button", title: isToolCall(r) ? "Call this tool again in this conversation without asking, whatever its arguments, while its server describes it as now" : "Run this exact code again in this conversation without asking" }, isToolCall(r) ? "Always allow this tool here" : "Always allow in this conversation")
      : null;
    const approve = choiceOf(r, "approve_once");
    this.approveBtn = h("button", { testid: "approve-button", className: "btn btn-primary", type: "button", hidden: !approve }, approve?.needsConfirmation ? "Approve and run" : "Approve");
    if (!choiceOf(r, "edit_and_approve")) editBtn.hidden = true;
    if (!choiceOf(r, "deny")) denyBtn.hidden = true;
    this.controls = [denyBtn, editBtn, this.approveBtn, this.editApproveBtn, denyReason, editCode];
    if (this.alwaysBtn) this.controls.push(this.alwaysBtn);
    if (this.freshBtn) this.controls.push(this.freshBtn);
    if (this.confirm) this.controls.push(this.confirm);

    const titleId = `approval-title-${r.approvalId}`;
    this.el = h(
      "dialog",
      {
        testid: "approval-dialog", className: `approval-dialog risk-${r.risk}`,
        "data-approval-id": r.approvalId, "data-risk": r.risk, "data-destructive": String(r.destructive),
        "aria-labelledby": titleId,
      },
      h(
        "header",
        { className: "approval-head" },
        h("h2", { id: titleId }, isToolCall(r) ? `Call ${toolOf(r.code)}?` : `Run this ${r.language} code?`),
        position.total > 1 ? h("span", { className: "muted" }, `${position.index + 1} of ${position.total} waiting`) : null,
        h("span", { className: "spacer" }),
        h("span", { testid: "approval-language", className: "chip" }, r.language),
        h("span", { testid: "approval-risk", className: `chip risk-chip risk-${r.risk}` }, RISK_LABEL[r.risk] ?? r.risk),
      ),
      warning,
      askedBecause,
      alteredNote,
      hidden,
      this.codeEl,
      h("section", { className: "approval-why" }, h("h3", { testid: "approval-risk-heading" }, summary.heading), reasons),
      editArea,
      h("div", { className: "deny-line" }, denyReason),
      this.status,
      h("footer", { className: "approval-actions" }, denyBtn, editBtn, h("span", { className: "spacer" }), this.alwaysBtn, this.freshBtn, this.approveBtn),
    );

    highlightElement(code);
    denyBtn.addEventListener("click", () => {
      const reason = denyReason.value.trim();
      void this.decide({ type: "deny", reason: reason || null });
    });
    editBtn.addEventListener("click", () => {
      editArea.hidden = !editArea.hidden;
      if (!editArea.hidden) editCode.focus();
    });
    this.alwaysBtn?.addEventListener("click", () => void this.decide({ type: "alwaysAllowInSession" }));
    this.approveBtn.addEventListener("click", () => void this.decide({ type: "approveOnce" }));
    this.freshBtn?.addEventListener("click", () => void this.decide({ type: "approveOnce" }, true));
    this.editApproveBtn.addEventListener("click", () => void this.decide({ type: "editAndApprove", code: editCode.value }));
    this.confirm?.addEventListener("change", () => this.sync());

    // Escape closes without deciding (native dialogs fire `cancel`; jsdom only sends keydown).
    this.el.addEventListener("cancel", (ev) => {
      ev.preventDefault();
      if (!this.leaving) this.onEscape();
    });
    this.el.addEventListener("keydown", (ev) => {
      // Closing: the key finished the close (close()) and is meant for the page now.
      if (this.leaving) return;
      if (ev.key === "Escape") {
        ev.preventDefault();
        this.onEscape();
        return;
      }
      // Enter only ever activates the button that has focus; nowhere else does it do anything.
      if (ev.key === "Enter" && !(ev.target instanceof HTMLButtonElement) && !(ev.target instanceof HTMLTextAreaElement)) {
        ev.preventDefault();
      }
    });
    this.sync();
  }

  get approvalId(): string {
    return this.req.approvalId;
  }

  open(): void {
    document.body.append(this.el);
    if (typeof this.el.showModal === "function") {
      try {
        this.el.showModal();
      } catch {
        this.el.setAttribute("open", "");
      }
    } else {
      this.el.setAttribute("open", "");
    }
    this.codeEl.focus();
  }

  /**
   * Closes the dialog. `afterPaint`, for a decided request (a run's first output is usually the
   * next thing drawn): it turns invisible at once, loses its test ids and stops answering, and
   * is closed and removed once the frame after next has been drawn. Without compositing,
   * WebKitGTK repaints only the box of a dialog turning invisible, but the whole window for one
   * that closes or when the page stops being inert; on the way from Approve to the first output,
   * that repaint cost about 5 ms of the wait (docs/benchmarks.md#app-waits). Meanwhile the page
   * is still inert, so a key pressed or the pointer pressed anywhere finishes the close at once,
   * and the key then reaches whatever gets focus back. A timer finishes it if frames stop (a
   * hidden or minimized window draws none). Characters typed while the decision was on its way
   * (decide()) are typed into the field that gets focus back, if it is one.
   */
  close(afterPaint = false): void {
    this.stopSending();
    document.removeEventListener("keydown", this.typeAhead, true);
    if (this.leaving) return;
    this.leaving = true;
    let backstop: ReturnType<typeof setTimeout> | undefined;
    const finish = () => {
      clearTimeout(backstop);
      document.removeEventListener("keydown", finish, true);
      document.removeEventListener("pointerdown", finish, true);
      if (!this.el.isConnected) return;
      if (typeof this.el.close === "function" && this.el.open) this.el.close();
      this.el.remove();
      this.onGone();
      typeInto(document.activeElement, this.typedAhead);
      this.typedAhead = "";
    };
    if (!afterPaint || typeof requestAnimationFrame !== "function" || document.hidden) {
      finish();
      return;
    }
    backstop = setTimeout(finish, LEAVE_BACKSTOP_MS);
    this.el.classList.add("leaving");
    for (const el of [this.el, ...this.el.querySelectorAll("[data-testid]")]) el.removeAttribute("data-testid");
    document.addEventListener("keydown", finish, true);
    document.addEventListener("pointerdown", finish, true);
    requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(finish, 0)));
  }

  /** Whether the answer of this kind may be sent now: offered, and confirmed if it must be. */
  private ready(kind: DecisionKind): boolean {
    const c = choiceOf(this.req, kind);
    return !!c && (!c.needsConfirmation || Boolean(this.confirm?.checked));
  }

  private sync(): void {
    for (const c of this.controls) c.disabled = this.busy;
    if (!this.busy) {
      this.approveBtn.disabled = !this.ready("approve_once");
      if (this.alwaysBtn) this.alwaysBtn.disabled = !this.ready("always_allow_in_session");
      this.editApproveBtn.disabled = !this.ready("edit_and_approve");
    }
  }

  private async decide(decision: Decision, freshInterpreter = false): Promise<void> {
    if (this.busy || this.leaving) return;
    const approving = decision.type !== "deny";
    const choice = choiceOf(this.req, KIND[decision.type]);
    if (!choice) {
      this.showStatus(
        decision.type === "alwaysAllowInSession"
          ? "This code is decided one run at a time: approve it once or deny it."
          : "That answer is not offered for this code.",
        true,
      );
      return;
    }
    if (choice.needsConfirmation && !this.confirm?.checked) {
      this.showStatus("Tick the confirmation above before approving this code.", true);
      return;
    }
    this.busy = true;
    // Someone who approves with Enter and goes on typing at once: those keys would land on the
    // dialog's button and be lost. Kept, they reach the composer when the dialog has gone.
    document.addEventListener("keydown", this.typeAhead, true);
    this.sendingShown = setTimeout(() => {
      // Cleared by rejected() and close(), the only ends of `busy`.
      this.sendingShown = null;
      this.sync();
      this.showStatus(approving ? "Sending approval…" : "Sending denial…", false);
    }, SHOW_SENDING_AFTER_MS);
    try {
      // id and hash come from the request object this dialog was built from.
      const confirmed = choice.needsConfirmation && Boolean(this.confirm?.checked);
      await this.send(this.req, decision, confirmed, freshInterpreter);
    } catch (e) {
      this.rejected(errorText(e));
    }
  }

  /** The backend refused the decision; the request is still pending. */
  rejected(message: string): void {
    this.stopSending();
    document.removeEventListener("keydown", this.typeAhead, true);
    this.typedAhead = "";
    this.busy = false;
    this.sync();
    this.showStatus(message, true);
  }

  private stopSending(): void {
    if (this.sendingShown !== null) clearTimeout(this.sendingShown);
    this.sendingShown = null;
  }

  private showStatus(message: string, error: boolean): void {
    this.status.textContent = message;
    this.status.classList.toggle("error", error);
  }
}

export interface QueueHooks {
  /** Pending requests changed (count) or the dialog was dismissed / reopened. */
  changed(pending: ApprovalRequest[], dialogOpen: boolean): void;
  /** A rejection for a request that is no longer pending (shown in the chat). */
  notice(message: string): void;
}

/** Pending approvals of the open conversation, shown one dialog at a time. */
export class ApprovalQueue {
  private pending: ApprovalRequest[] = [];
  private dialog: ApprovalDialog | null = null;
  /** Escape was pressed: stay closed until the person reopens from the chip. */
  private dismissed = false;

  constructor(
    private readonly send: SendDecision,
    private readonly hooks: QueueHooks,
  ) {}

  get requests(): readonly ApprovalRequest[] {
    return this.pending;
  }

  get openId(): string | null {
    return this.dialog?.approvalId ?? null;
  }

  /** Replaces everything (a conversation was opened). */
  reset(requests: ApprovalRequest[]): void {
    this.dialog?.close();
    this.dialog = null;
    this.pending = [...requests];
    this.dismissed = false;
    this.showNext();
  }

  add(req: ApprovalRequest): void {
    if (this.pending.some((p) => p.approvalId === req.approvalId)) return;
    this.pending.push(req);
    // A new request is new information: it reopens a dismissed dialog (focus lands on its code,
    // so keys typed elsewhere at that moment cannot decide anything).
    if (!this.dialog) {
      this.dismissed = false;
      this.showNext();
    }
    else this.hooks.changed(this.pending, this.dialog !== null);
  }

  resolved(approvalId: string): void {
    this.pending = this.pending.filter((p) => p.approvalId !== approvalId);
    if (this.dialog?.approvalId === approvalId) {
      this.dialog.close(true);
      this.dialog = null;
      if (!this.dismissed) {
        this.showNext();
        return;
      }
    }
    this.hooks.changed(this.pending, this.dialog !== null);
  }

  rejected(approvalId: string, message: string, stillPending: boolean): void {
    if (!stillPending) {
      this.resolved(approvalId);
      this.hooks.notice(message);
      return;
    }
    if (this.dialog?.approvalId === approvalId) this.dialog.rejected(message);
    else this.hooks.notice(message);
  }

  /** Opens the dialog for `approvalId`, or the oldest pending request. */
  open(approvalId?: string): void {
    this.dismissed = false;
    const req = (approvalId && this.pending.find((p) => p.approvalId === approvalId)) || this.pending[0];
    if (!req) return;
    if (this.dialog?.approvalId === req.approvalId) return;
    this.dialog?.close();
    this.show(req);
  }

  /** Closes the dialog without deciding; the request stays pending. */
  dismiss(): void {
    this.dismissed = true;
    this.dialog?.close();
    this.dialog = null;
    this.hooks.changed(this.pending, false);
  }

  private showNext(): void {
    const next = this.pending[0];
    if (next) this.show(next);
    else this.hooks.changed(this.pending, false);
  }

  private show(req: ApprovalRequest): void {
    const index = this.pending.indexOf(req);
    this.dialog = new ApprovalDialog(req, { index, total: this.pending.length }, this.send, () => this.dismiss(), () => {
      // Really gone (a decided dialog leaves in two steps, close()): focus, which was inside,
      // now needs a place.
      if (this.dialog === null) this.hooks.changed(this.pending, false);
    });
    this.dialog.open();
    this.hooks.changed(this.pending, true);
  }

  destroy(): void {
    this.dialog?.close();
    this.dialog = null;
    this.pending = [];
  }
}

/** A key that types one character (not a shortcut, not part of an input method's composition). */
function isCharacter(ev: KeyboardEvent): boolean {
  return [...ev.key].length === 1 && !ev.ctrlKey && !ev.metaKey && !ev.altKey && !ev.isComposing;
}

/** Types `text` into `field` at its cursor, as typing would, if it is a text field. */
function typeInto(field: Element | null, text: string): void {
  if (!text) return;
  const textField = field instanceof HTMLTextAreaElement || (field instanceof HTMLInputElement && (field.type === "text" || field.type === "search"));
  if (!textField || field.disabled || field.readOnly) return;
  // insertText keeps the field's undo history and fires `input`, as typing does.
  if (typeof document.execCommand === "function" && document.execCommand("insertText", false, text)) return;
  field.setRangeText(text, field.selectionStart ?? field.value.length, field.selectionEnd ?? field.value.length, "end");
  field.dispatchEvent(new Event("input", { bubbles: true }));
}

/** Whether the request is a call of an MCP server's tool rather than code to run. */
function isToolCall(r: ApprovalRequest): boolean {
  return r.language === "mcp";
}

/** "the MCP tool time/get_current_time", from a call's first line. */
export function toolOf(code: string): string {
  const m = /^mcp (\S+) \(definition /.exec(code);
  return m ? `the MCP tool ${m[1]}` : "this MCP tool";
}

/** What the rehearsal lays out: a request with every part a first dialog usually has (a
 *  reason with its snippet, the confirmation of destructive code) in the sandbox's language. */
const REHEARSAL: ApprovalRequest = {
  approvalId: "rehearsal",
  codeHash: "rehearsal",
  language: "python",
  code: 'import csv\n\n# Count the rows of each file.\nfor name in ["a.csv", "b.csv"]:\n    with open(name) as f:\n        print(name, sum(1 for _ in csv.reader(f)), 3.5)\n',
  risk: "destructive",
  reasons: [{ level: "destructive", message: "Writes files in the workspace", snippet: 'open(name, "w")', line: 5 }],
  destructive: true,
  choices: [
    { kind: "approve_once", needsConfirmation: true },
    { kind: "edit_and_approve", needsConfirmation: true },
    { kind: "deny", needsConfirmation: false },
  ],
  alteredSession: [],
  askedBecause: null,
};

/**
 * Builds and lays out a dialog nobody sees, once, while the app is idle after start. The first
 * dialog of a launch took about 60 ms longer than later ones on the way from Send to the dialog
 * on screen (docs/benchmarks.md#app-waits): the web view resolved each font size and weight
 * the dialog uses for the first time (fontconfig), compiled the highlighter's Python grammar and
 * ran the dialog's code for the first time. This does that work before the person is waiting.
 * The copy is inert, hidden and off screen, carries no test ids or ids, is never shown as a
 * dialog (no focus moves) and is removed in the same task: no query ever finds it and nothing
 * is painted (a MutationObserver on the body does see it come and go).
 */
export function rehearseApprovalDialog(): void {
  const dialog = new ApprovalDialog(REHEARSAL, { index: 0, total: 1 }, async () => {}, () => {});
  for (const el of [dialog.el, ...dialog.el.querySelectorAll("*")]) {
    el.removeAttribute("data-testid");
    el.removeAttribute("id");
    el.removeAttribute("autofocus");
  }
  dialog.el.setAttribute("open", "");
  const stage = h("div", { "aria-hidden": "true" }, dialog.el);
  stage.inert = true;
  stage.style.cssText = "position: fixed; left: -10000px; top: 0; width: 800px; visibility: hidden; pointer-events: none";
  document.body.append(stage);
  stage.getBoundingClientRect();
  stage.remove();
}
