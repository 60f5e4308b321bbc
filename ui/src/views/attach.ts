// Files in: the composer's Attach button (files or a folder, through the system's dialog), the
// drop overlay, a progress line while a copy runs, and the chips of what the next message will
// tell the model about. The page never names a host path: the dialog is opened by the app and a
// drop is claimed by its id (see ironclaw-desktop's attachments.rs).

import type { AttachedItem } from "../bindings/AttachedItem";
import type { AttachProgress } from "../bindings/AttachProgress";
import { errorText } from "../api/types";
import { h } from "../lib/dom";
import { icon } from "../lib/icons";
import { renderVisible } from "../lib/invisible";

/** One copy into the workspace: the dialog's or a drop's. */
export type AttachTask = (onProgress: (p: AttachProgress) => void) => Promise<AttachedItem[]>;

/** How every note about attached files begins (ironclaw-sandbox's `NOTE_START`). */
const NOTE_START = "[The person attached files;";

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

// Names are shown with bidi overrides and invisible characters as visible tokens, as in the
// workspace panel: `invoice‮fdp.exe` must not read as `invoiceexe.pdf`.
function describe(item: AttachedItem): string {
  const name = renderVisible(item.name);
  if (!item.isDir) return `${name} · ${formatBytes(item.bytes)}`;
  return `${name}/ · ${item.files} file${item.files === 1 ? "" : "s"}, ${formatBytes(item.bytes)}`;
}

/**
 * A sent message that carried a note about attached files: the note (what the model was told,
 * shown quieter) and what the person typed.
 */
export function splitNote(text: string): { note: string | null; typed: string } {
  if (!text.startsWith(NOTE_START)) return { note: null, typed: text };
  const end = text.indexOf("]\n\n");
  if (end < 0) return { note: null, typed: text };
  const note = text.slice(NOTE_START.length, end).replace(/^\s*they are in your workspace now:\s*/, "");
  return { note: `Attached: ${note}`, typed: text.slice(end + 3) };
}

export class AttachTray {
  /** The chips row and the progress line, above the composer. */
  readonly el: HTMLElement;
  /** The paperclip button in the composer, with its Files…/Folder… menu. */
  readonly control: HTMLElement;
  /** Shown over the window while files are dragged over it. */
  readonly overlay: HTMLElement;
  private readonly chips: HTMLElement;
  private readonly status: HTMLElement;
  private readonly bar: HTMLProgressElement;
  private readonly label: HTMLElement;
  private readonly menu: HTMLElement;
  private readonly button: HTMLButtonElement;
  private items: AttachedItem[] = [];
  private copying = 0;
  /** Bumped when another conversation is shown: a copy still running then adds no chips here. */
  private shown = 0;

  constructor(pick: (folders: boolean) => void, private readonly onChange: () => void = () => {}, pickPicture?: () => void) {
    this.button = h("button", { testid: "attach-button", className: "btn btn-quiet btn-icon", type: "button", title: "Attach files or a folder", "aria-label": "Attach files or a folder", "aria-haspopup": "menu", "aria-expanded": "false" }, icon("clip"));
    const files = h("button", { testid: "attach-files", type: "button", role: "menuitem" }, "Files…");
    const folder = h("button", { testid: "attach-folder", type: "button", role: "menuitem" }, "Folder…");
    const picture = pickPicture ? h("button", { testid: "attach-picture", type: "button", role: "menuitem" }, "Picture for the model…") : null;
    picture?.addEventListener("click", () => this.choose(() => pickPicture?.()));
    this.menu = h("div", { className: "attach-menu", role: "menu", hidden: true }, files, folder, picture);
    files.addEventListener("click", () => this.choose(() => pick(false)));
    folder.addEventListener("click", () => this.choose(() => pick(true)));
    this.button.addEventListener("click", () => this.toggleMenu());
    this.menu.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") {
        ev.stopPropagation();
        this.toggleMenu(false);
        this.button.focus();
      }
    });
    this.control = h("div", { className: "attach-control" }, this.button, this.menu);

    this.chips = h("ul", { testid: "attached-chips", className: "attached-chips", "aria-label": "Attached files" });
    this.bar = h("progress", { className: "attach-bar", max: 1, value: 0 });
    this.label = h("span", { testid: "attach-status-text" }, "");
    this.status = h("div", { testid: "attach-status", className: "attach-status", role: "status", hidden: true }, this.label, this.bar);
    this.el = h("div", { className: "attach-tray", hidden: true }, this.status, this.chips);
    this.overlay = h(
      "div",
      { testid: "drop-overlay", className: "drop-overlay", hidden: true },
      h("div", { className: "drop-card" }, icon("clip", 28), h("strong", {}, "Drop to copy into this conversation’s workspace"), h("span", {}, "Copies, owned by you; links and special files are left out.")),
    );
  }

  private choose(run: () => void): void {
    this.toggleMenu(false);
    run();
  }

  private toggleMenu(open = this.menu.hidden): void {
    this.menu.hidden = !open;
    this.button.setAttribute("aria-expanded", String(open));
    if (open) (this.menu.firstElementChild as HTMLElement | null)?.focus();
  }

  hover(over: boolean): void {
    this.overlay.hidden = !over;
  }

  /** What the next message will tell the model about (a freshly opened conversation's). */
  show(items: AttachedItem[]): void {
    this.shown++;
    this.items = [...items];
    this.render();
  }

  /** Sent: the model has been told. Returns what it was told about. */
  take(): AttachedItem[] {
    const sent = this.items;
    this.items = [];
    this.render();
    return sent;
  }

  /** Runs one copy with its progress on screen (`waiting` until the first report); what arrived
   *  becomes chips. */
  async run(waiting: string, task: AttachTask): Promise<void> {
    const shown = this.shown;
    this.copying++;
    this.status.hidden = false;
    this.status.classList.remove("failed");
    this.label.textContent = renderVisible(waiting);
    this.bar.hidden = false;
    this.bar.removeAttribute("value");
    this.el.hidden = false;
    try {
      const arrived = await task((p) => {
        this.label.textContent = `Copying ${renderVisible(p.name)}… ${formatBytes(p.done)} of ${formatBytes(p.all)}`;
        this.bar.value = p.all > 0 ? p.done / p.all : 1;
      });
      // Another conversation's copy: that one shows it when opened again.
      if (shown === this.shown) this.items.push(...arrived);
      this.copying--;
      if (this.copying === 0) this.status.hidden = true;
    } catch (e) {
      this.copying--;
      this.status.classList.add("failed");
      this.bar.hidden = true;
      this.label.textContent = `Nothing was attached: ${errorText(e)}`;
    }
    this.render();
    this.onChange();
  }

  private render(): void {
    this.chips.replaceChildren(
      ...this.items.map((item) => {
        const left = item.leftOut.length;
        return h(
          "li",
          { testid: "attached-chip", className: "attached-chip", title: renderVisible(left ? `Left out: ${item.leftOut.join("; ")}` : `In the workspace as ${item.name}`) },
          icon(item.isDir ? "folder" : "files", 14),
          h("span", {}, describe(item)),
          left ? h("span", { testid: "attached-left-out", className: "attached-left-out" }, `${left} left out`) : null,
        );
      }),
    );
    this.el.hidden = this.items.length === 0 && this.status.hidden;
  }
}
