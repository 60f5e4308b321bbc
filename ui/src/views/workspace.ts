// The conversation's workspace folder: its files, which ones the last run changed, Open folder.

import type { FolderOpening } from "../bindings/FolderOpening";
import type { WorkspaceEntry } from "../bindings/WorkspaceEntry";
import type { Api } from "../api";
import { errorText } from "../api";
import { formatBytes, h } from "../lib/dom";
import { icon } from "../lib/icons";
import { markInvisible, renderVisible } from "../lib/invisible";

const KIND_ICON: Record<WorkspaceEntry["kind"], string> = {
  dir: "▸",
  image: "▣",
  text: "≡",
  binary: "◆",
  symlink: "↪",
  fifo: "‖",
  socket: "◎",
  device: "⚙",
};

/** Kinds the backend lists but never opens or follows; shown with a label saying so. */
const SPECIAL_LABEL: Partial<Record<WorkspaceEntry["kind"], string>> = {
  symlink: "link, not followed",
  fifo: "named pipe, not opened",
  socket: "socket, not opened",
  device: "device, not opened",
};

/** A file name as text with every control, bidi and invisible character shown as a marked ⟨U+…⟩ token. */
function visibleName(tag: "span" | "button" | "h2", path: string, attrs: Record<string, string>): HTMLElement {
  const el = h(tag, attrs, path);
  markInvisible(el);
  return el;
}

export class WorkspacePanel {
  readonly el: HTMLElement;
  private readonly list: HTMLElement;
  private readonly status: HTMLElement;
  /** Right under "Open folder": why it did not open, and the path to open by hand. */
  private readonly folderProblem: HTMLElement;
  private id: string | null = null;

  constructor(private readonly api: Api, onClose: () => void) {
    const open = h("button", { testid: "open-folder", className: "btn btn-small", type: "button" }, icon("folder", 15), "Open folder");
    open.addEventListener("click", async () => {
      if (!this.id) return;
      this.folderProblem.hidden = true;
      try {
        const result = await this.api.openWorkspaceFolder(this.id);
        if (!result.opened) this.showFolderProblem(result);
      } catch (e) {
        this.status.textContent = errorText(e);
      }
    });
    const refresh = h("button", { testid: "workspace-refresh", className: "btn btn-small btn-quiet", type: "button", title: "Refresh" }, icon("refresh", 15), "Refresh");
    refresh.addEventListener("click", () => void this.refresh());
    const close = h("button", { className: "icon-btn", type: "button", "aria-label": "Close files" }, "×");
    close.addEventListener("click", onClose);
    this.folderProblem = h("div", { testid: "open-folder-problem", className: "ws-problem", role: "alert", hidden: true });
    this.list = h("ul", { className: "ws-list" });
    this.status = h("p", { className: "muted ws-status", role: "status" });
    this.el = h(
      "aside",
      { testid: "workspace-panel", className: "workspace", hidden: true, "aria-label": "Workspace files" },
      h("header", { className: "ws-head" }, h("h2", {}, "Workspace"), h("span", { className: "spacer" }), close),
      h("div", { className: "ws-actions" }, open, refresh),
      this.folderProblem,
      this.list,
      this.status,
    );
  }

  get visible(): boolean {
    return !this.el.hidden;
  }

  setConversation(id: string | null): void {
    this.id = id;
    this.folderProblem.hidden = true;
    this.list.replaceChildren();
    if (this.visible) void this.refresh();
  }

  toggle(force?: boolean): void {
    this.el.hidden = force === undefined ? !this.el.hidden : !force;
    if (this.visible) void this.refresh();
  }

  async refresh(): Promise<void> {
    if (!this.id) return;
    const id = this.id;
    try {
      const entries = await this.api.listWorkspace(id);
      if (id !== this.id) return;
      this.render(entries);
    } catch (e) {
      this.status.textContent = errorText(e);
    }
  }

  private showFolderProblem(result: FolderOpening): void {
    const path = h("input", { testid: "open-folder-path", className: "ws-path", type: "text", readOnly: true, value: result.path, "aria-label": "Workspace folder path", spellcheck: false });
    path.addEventListener("focus", () => path.select());
    const copied = h("span", { testid: "open-folder-copied", className: "muted ws-copied", role: "status" });
    const copy = h("button", { testid: "copy-folder-path", className: "btn btn-small", type: "button" }, "Copy path");
    copy.addEventListener("click", async () => {
      path.focus();
      path.select();
      try {
        await navigator.clipboard.writeText(result.path);
        copied.textContent = "Copied.";
      } catch {
        // No clipboard access here: the path is selected, so Ctrl+C copies it.
        copied.textContent = "Selected: press Ctrl+C to copy.";
      }
    });
    const dismiss = h("button", { className: "icon-btn", type: "button", "aria-label": "Dismiss" }, "×");
    dismiss.addEventListener("click", () => (this.folderProblem.hidden = true));
    this.folderProblem.replaceChildren(
      h("div", { className: "ws-problem-head" }, h("strong", {}, "The folder did not open"), h("span", { className: "spacer" }), dismiss),
      h("p", { testid: "open-folder-problem-text" }, result.problem ?? "No file manager opened this folder. Copy the path below and open it yourself."),
      h("div", { className: "ws-path-row" }, path, copy),
      copied,
    );
    if (result.detail) this.folderProblem.append(h("details", { className: "ws-detail" }, h("summary", {}, "Details"), h("code", {}, result.detail)));
    this.folderProblem.hidden = false;
  }

  /** Shows a workspace image in a small viewer (read through the backend's safe reader). */
  private async preview(path: string): Promise<void> {
    if (!this.id) return;
    try {
      const url = await this.api.readWorkspaceImage(this.id, path);
      if (!/^data:image\/(png|jpeg|gif|webp|svg\+xml);base64,/i.test(url)) return;
      const shown = renderVisible(path);
      const img = h("img", { testid: "workspace-image", className: "ws-preview-img", alt: shown });
      img.src = url;
      const close = h("button", { className: "btn", type: "button" }, "Close");
      const dlg = h("dialog", { className: "ws-preview", "aria-label": shown }, h("header", { className: "log-head" }, visibleName("h2", path, {})), img, h("footer", { className: "row-end" }, close));
      const done = () => dlg.remove();
      close.addEventListener("click", done);
      dlg.addEventListener("close", done);
      document.body.append(dlg);
      if (typeof dlg.showModal === "function") dlg.showModal();
      else dlg.setAttribute("open", "");
      close.focus();
    } catch (e) {
      this.status.textContent = errorText(e);
    }
  }

  private render(entries: WorkspaceEntry[]): void {
    const sorted = [...entries].sort((a, b) => Number(b.changedByLastRun) - Number(a.changedByLastRun) || a.path.localeCompare(b.path));
    this.list.replaceChildren(...sorted.map((f) => this.row(f)));
    this.status.textContent = entries.length === 0 ? "The workspace is empty. Files the code writes appear here." : "";
  }

  private row(f: WorkspaceEntry): HTMLElement {
    // The sandboxed code chose this name: a right-to-left override could make `x‮gnp.exe`
    // read as `xexe.png`, so every such character is shown as a token, tooltips included.
    const shown = renderVisible(f.path);
    const name =
      f.kind === "image"
        ? visibleName("button", f.path, { testid: "workspace-name", className: "ws-name ws-open", type: "button", title: `Show ${shown}` })
        : visibleName("span", f.path, { testid: "workspace-name", className: "ws-name" });
    if (f.kind === "image") name.addEventListener("click", () => void this.preview(f.path));
    const special = SPECIAL_LABEL[f.kind];
    const sized = f.kind === "image" || f.kind === "text" || f.kind === "binary";
    return h(
      "li",
      { testid: "workspace-file", className: `ws-file${f.changedByLastRun ? " changed" : ""}`, "data-path": f.path, "data-kind": f.kind, "data-changed": String(f.changedByLastRun), title: shown },
      h("span", { className: "ws-icon", "aria-hidden": "true" }, KIND_ICON[f.kind] ?? "·"),
      name,
      special ? h("span", { testid: "workspace-special", className: "ws-special" }, special) : null,
      f.changedByLastRun ? h("span", { className: "ws-changed", title: "Changed by the last run" }, "changed") : null,
      sized ? h("span", { className: "ws-size" }, formatBytes(Number(f.size))) : null,
    );
  }
}
