// Under a finished run: what it changed in the workspace ("3 files changed") and Undo. Undo
// takes back the files only, never the interpreter's variables, and says so. When later runs
// changed the same files the core changes nothing and the strip asks whether to take those back
// too; a run that could not be checkpointed says why it cannot be undone.

import type { ChangeDetail } from "../bindings/ChangeDetail";
import type { ChangeSide } from "../bindings/ChangeSide";
import type { FileChange } from "../bindings/FileChange";
import { errorText } from "../api/types";
import { formatBytes, h } from "../lib/dom";
import { markInvisible, renderVisible, sandboxText } from "../lib/invisible";

export interface UndoActions {
  undo(executionId: string, force: boolean): void;
  redo(executionId: string): void;
  /** The files as they were right after this run: every later run undone. */
  rewind(executionId: string): void;
  /** Both sides of one changed file, from the run's checkpoint. */
  detail(executionId: string, path: string): Promise<ChangeDetail>;
}

const DIFF_MARK = { same: " ", added: "+", removed: "-", gap: "" } as const;

/** One side that is not text shown in a diff: what it was, in words (or the image). */
function sideView(label: string, side: ChangeSide): HTMLElement {
  const body = ((): HTMLElement | string => {
    switch (side.kind) {
      case "absent": return "nothing";
      case "folder": return "a folder";
      case "special": return "a FIFO, socket or device";
      case "link": return h("span", {}, "a link to ", h("code", {}, side.target));
      case "binary": return `binary data, ${formatBytes(side.bytes)}`;
      case "tooLarge": return `${formatBytes(side.bytes)}: too large to show here`;
      case "text": return `text, ${side.text.split("\n").length} lines`;
      case "image": return h("img", { className: "change-image", src: side.dataUrl, alt: `${label} image` });
    }
  })();
  return h("figure", { className: `change-side change-side-${side.kind}` }, h("figcaption", {}, label), body);
}

/** The detail of one changed file: a line diff for text, both sides for anything else. */
export function changeDetailView(d: ChangeDetail): HTMLElement {
  if (d.unavailable) return h("p", { testid: "change-detail", className: "change-detail muted" }, `Not shown: ${d.unavailable}`);
  if (d.diff.length) {
    const pre = h("pre", { className: "diff", "aria-label": `Changes to ${renderVisible(d.path)}` });
    for (const line of d.diff) {
      pre.append(h("span", { className: `diff-line diff-${line.kind}` }, line.kind === "gap" ? line.text : `${DIFF_MARK[line.kind]} ${line.text}`), "\n");
    }
    // The file's lines are the code's: marked, and each line its own direction.
    markInvisible(pre);
    return h("div", { testid: "change-detail", className: "change-detail" }, pre);
  }
  if (d.before.kind === "text" && d.after.kind === "text") {
    return h("p", { testid: "change-detail", className: "change-detail muted" }, "The contents are the same; only the permissions changed.");
  }
  return h("div", { testid: "change-detail", className: "change-detail change-sides" }, sideView("Before", d.before), sideView("After", d.after));
}

const VERB: Record<FileChange["change"], string> = {
  added: "added",
  modified: "changed",
  deleted: "deleted",
  mode: "permissions changed",
};

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** How a run's changes stand: undoable, undone, not undoable (why), or not recorded (why). */
export interface ChangesState {
  undoable: boolean;
  undone: boolean;
  notUndoable: string | null;
  changesUnknown?: string | null;
}

export class ChangesStrip {
  readonly el: HTMLElement;
  private readonly summary: HTMLElement;
  private readonly status: HTMLElement;
  private readonly undoBtn: HTMLButtonElement;
  private readonly redoBtn: HTMLButtonElement;
  private readonly forceBtn: HTMLButtonElement;
  private readonly rewindBtn: HTMLButtonElement;
  private readonly rewindConfirm: HTMLButtonElement;
  /** Later runs whose changes stand: what a rewind to this run would undo. */
  private laterStanding = 0;

  constructor(
    private readonly executionId: string,
    changes: FileChange[],
    state: ChangesState,
    private readonly actions: UndoActions,
  ) {
    const list = h("ul", { testid: "cell-change-list", className: "change-list" });
    for (const c of changes) {
      // Paths are the code's to choose: text only, never markup.
      const open = h("button", { testid: "cell-change", className: "change-open", type: "button", "aria-expanded": "false", title: "Show what changed" }, h("span", { className: "change-kind" }, VERB[c.change]), " ", h("code", {}, sandboxText(c.path)));
      const item = h("li", { className: `change change-${c.change}` }, open);
      open.addEventListener("click", () => void this.toggleDetail(item, open, c.path));
      list.append(item);
    }
    this.summary = h("summary", { testid: "cell-changes-summary" }, plural(changes.length, "file changed", "files changed"));
    this.status = h("span", { testid: "cell-undo-status", className: "undo-status", role: "status" });
    this.undoBtn = h("button", { testid: "cell-undo", className: "btn btn-small", type: "button" }, "Undo");
    this.redoBtn = h("button", { testid: "cell-redo", className: "btn btn-small", type: "button", hidden: true }, "Redo");
    this.forceBtn = h("button", { testid: "cell-undo-force", className: "btn btn-small", type: "button", hidden: true }, "Undo those too");
    // Shown by the thread only while a later run's changes stand (see `rewindable`).
    this.rewindBtn = h("button", { testid: "cell-rewind", className: "btn btn-small btn-quiet", type: "button", hidden: true, title: "Put the files back as they were right after this run: every later run is undone (each can be redone)" }, "Rewind files to here");
    // More than one run undone by one click is asked once more, saying how many.
    this.rewindConfirm = h("button", { testid: "cell-rewind-confirm", className: "btn btn-small btn-danger", type: "button", hidden: true }, "Undo them");
    this.rewindBtn.addEventListener("click", () => {
      if (this.laterStanding > 1 && this.rewindConfirm.hidden) {
        this.rewindConfirm.hidden = false;
        this.rewindConfirm.textContent = `Undo ${this.laterStanding} later runs`;
        this.status.textContent = `Rewinding undoes the ${this.laterStanding} runs after this one, newest first; each can be redone.`;
        this.rewindConfirm.focus();
        return;
      }
      this.send(() => this.actions.rewind(this.executionId));
    });
    this.rewindConfirm.addEventListener("click", () => this.send(() => this.actions.rewind(this.executionId)));
    this.undoBtn.addEventListener("click", () => this.send(() => this.actions.undo(this.executionId, false)));
    this.forceBtn.addEventListener("click", () => this.send(() => this.actions.undo(this.executionId, true)));
    this.redoBtn.addEventListener("click", () => this.send(() => this.actions.redo(this.executionId)));
    this.el = h(
      "div",
      { testid: "cell-changes", className: "cell-changes" },
      h("details", { className: "change-details" }, this.summary, list),
      this.status,
      this.forceBtn,
      this.undoBtn,
      this.redoBtn,
      this.rewindBtn,
      this.rewindConfirm,
    );
    if (state.changesUnknown && !state.undone) {
      // Never "0 files changed": nobody knows what the run changed, but it is linked to the
      // state before it, and Undo puts that back whatever stopped the record.
      this.summary.textContent = "Changes not recorded";
      this.el.dataset["state"] = "unrecorded";
      this.undoBtn.textContent = "Put back as before this run";
      this.status.textContent = `What this run changed could not be recorded: ${renderVisible(state.changesUnknown)}`;
    } else if (state.notUndoable) {
      this.undoBtn.hidden = true;
      this.status.textContent = `Cannot be undone: ${state.notUndoable}`;
    } else if (state.undone) {
      this.undone();
    } else if (!state.undoable) {
      this.undoBtn.hidden = true;
    }
  }

  /** Shows (fetching it once) or hides one file's diff under its line. */
  private async toggleDetail(item: HTMLElement, open: HTMLElement, path: string): Promise<void> {
    const shown = item.querySelector<HTMLElement>('[data-testid="change-detail"]');
    if (shown) {
      shown.hidden = !shown.hidden;
      open.setAttribute("aria-expanded", String(!shown.hidden));
      return;
    }
    open.setAttribute("aria-expanded", "true");
    let detail: HTMLElement;
    try {
      detail = changeDetailView(await this.actions.detail(this.executionId, path));
    } catch (e) {
      detail = h("p", { testid: "change-detail", className: "change-detail muted" }, `Could not show it: ${errorText(e)}`);
    }
    item.append(detail);
    // What was asked for is shown, not left below the fold.
    detail.scrollIntoView?.({ block: "nearest" });
  }

  /** An undo or redo was sent and has not been answered. */
  working = false;

  private send(act: () => void): void {
    this.working = true;
    this.rewindConfirm.hidden = true;
    for (const b of [this.undoBtn, this.redoBtn, this.forceBtn, this.rewindBtn]) b.disabled = true;
    this.status.textContent = "Working…";
    act();
  }

  private settle(): void {
    this.working = false;
    for (const b of [this.undoBtn, this.redoBtn, this.forceBtn, this.rewindBtn]) b.disabled = false;
  }

  /** Taken back: the files are as before the run; the interpreter is not. */
  undone(alongWith?: string): void {
    this.settle();
    // A run put back without a record of its changes has nothing to redo.
    const redoable = this.el.dataset["state"] !== "unrecorded";
    this.el.dataset["state"] = "undone";
    this.undoBtn.hidden = true;
    this.forceBtn.hidden = true;
    this.redoBtn.hidden = !redoable;
    this.status.textContent = `${alongWith ? `Undone with ${alongWith}. ` : "Undone. "}Files restored; variables in the interpreter are unchanged.`;
  }

  redone(): void {
    this.settle();
    this.el.dataset["state"] = "";
    this.redoBtn.hidden = true;
    this.undoBtn.hidden = false;
    this.status.textContent = "Redone: the files are as the run left them.";
  }

  /** Later runs changed the same files: nothing changed; offer to take them back too. */
  blocked(laterRuns: string[], paths: string[]): void {
    this.settle();
    const shown = paths.slice(0, 5).join(", ") + (paths.length > 5 ? ` and ${paths.length - 5} more` : "");
    this.status.textContent = `Not undone: ${laterRuns.join(", ")} changed the same files (${shown}). Nothing was changed.`;
    this.forceBtn.hidden = false;
  }

  /** Whether this run's changes stand (it can be undone and is not) — what a rewind keeps. */
  get standing(): boolean {
    return !this.undoBtn.hidden;
  }

  /** Offer "Rewind files to here" when a later run's changes stand and this run's do too. */
  rewindable(later: number): void {
    this.laterStanding = later;
    this.rewindBtn.hidden = !(later > 0 && this.standing);
    if (this.rewindBtn.hidden) this.rewindConfirm.hidden = true;
  }

  /** A rewind to this run is done: `count` later runs were undone. */
  rewound(count: number): void {
    this.settle();
    this.status.textContent =
      count === 0 ? "Nothing to rewind: no later run's changes stand." : `Rewound: ${count === 1 ? "1 later run" : `${count} later runs`} undone; the files are as this run left them.`;
    // Beside that, the Undo button takes back this run itself: say so.
    this.undoBtn.textContent = "Undo this run too";
  }

  /** The core refused (its reason is shown in the thread). */
  failed(): void {
    this.settle();
    this.status.textContent = "";
  }
}
