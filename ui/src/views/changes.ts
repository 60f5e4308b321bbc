// Under a finished run: what it changed in the workspace ("3 files changed") and Undo. Undo
// takes back the files only, never the interpreter's variables, and says so. When later runs
// changed the same files the core changes nothing and the strip asks whether to take those back
// too; a run that could not be checkpointed says why it cannot be undone.

import type { FileChange } from "../bindings/FileChange";
import { h } from "../lib/dom";

export interface UndoActions {
  undo(executionId: string, force: boolean): void;
  redo(executionId: string): void;
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

export class ChangesStrip {
  readonly el: HTMLElement;
  private readonly summary: HTMLElement;
  private readonly status: HTMLElement;
  private readonly undoBtn: HTMLButtonElement;
  private readonly redoBtn: HTMLButtonElement;
  private readonly forceBtn: HTMLButtonElement;

  constructor(
    private readonly executionId: string,
    changes: FileChange[],
    state: { undoable: boolean; undone: boolean; notUndoable: string | null },
    private readonly actions: UndoActions,
  ) {
    const list = h("ul", { testid: "cell-change-list", className: "change-list" });
    for (const c of changes) {
      // Paths are the code's to choose: text only, never markup.
      list.append(h("li", { className: `change change-${c.change}` }, h("span", { className: "change-kind" }, VERB[c.change]), " ", h("code", {}, c.path)));
    }
    this.summary = h("summary", { testid: "cell-changes-summary" }, plural(changes.length, "file changed", "files changed"));
    this.status = h("span", { testid: "cell-undo-status", className: "undo-status", role: "status" });
    this.undoBtn = h("button", { testid: "cell-undo", className: "btn btn-small", type: "button" }, "Undo");
    this.redoBtn = h("button", { testid: "cell-redo", className: "btn btn-small", type: "button", hidden: true }, "Redo");
    this.forceBtn = h("button", { testid: "cell-undo-force", className: "btn btn-small", type: "button", hidden: true }, "Undo those too");
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
    );
    if (state.notUndoable) {
      this.undoBtn.hidden = true;
      this.status.textContent = `Cannot be undone: ${state.notUndoable}`;
    } else if (state.undone) {
      this.undone();
    } else if (!state.undoable) {
      this.undoBtn.hidden = true;
    }
  }

  /** An undo or redo was sent and has not been answered. */
  working = false;

  private send(act: () => void): void {
    this.working = true;
    for (const b of [this.undoBtn, this.redoBtn, this.forceBtn]) b.disabled = true;
    this.status.textContent = "Working…";
    act();
  }

  private settle(): void {
    this.working = false;
    for (const b of [this.undoBtn, this.redoBtn, this.forceBtn]) b.disabled = false;
  }

  /** Taken back: the files are as before the run; the interpreter is not. */
  undone(alongWith?: string): void {
    this.settle();
    this.el.dataset["state"] = "undone";
    this.undoBtn.hidden = true;
    this.forceBtn.hidden = true;
    this.redoBtn.hidden = false;
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

  /** The core refused (its reason is shown in the thread). */
  failed(): void {
    this.settle();
    this.status.textContent = "";
  }
}
