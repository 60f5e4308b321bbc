// Conversations: full-text search, new, rename, delete (confirmed), export, pending counts.

import { renderVisible, sandboxText } from "../lib/invisible";
import type { ConversationSummary } from "../bindings/ConversationSummary";
import type { Api } from "../api";
import { errorText } from "../api";
import { formatTime, h } from "../lib/dom";
import { icon } from "../lib/icons";

export interface SidebarActions {
  /** Opens a conversation; from a search result, at the first place `match` appears. */
  select(id: string, match?: string): void;
  created(c: ConversationSummary): void;
  deleted(id: string): void;
  openSettings(): void;
  reviewPending(): void;
  toast(message: string, action?: { label: string; testid: string; run: () => void }): void;
}

/** Markdown a snippet carries from the message it was cut from (`**bold**`, `code`, links,
 *  headings, quotes, list markers), dropped so the snippet reads as plain text. Underscores
 *  stay: in code they are part of names (`__init__`, `snake_case`). */
export function plainSnippet(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\*\*|~~|`+/g, "")
    .replace(/(^|\s)\*(?=\S)/g, "$1")
    .replace(/(\S)\*(?=\s|$|[.,;:!?»])/g, "$1")
    .replace(/(^|\n)\s{0,3}(?:#{1,6}\s+|>\s?|[-*+]\s+|\d+\.\s+)/g, "$1")
    .replace(/\s+/g, " ")
    .trim();
}

/** Characters of context kept before the first match, so the match sits near the start of a
 *  narrow row (the search returns a window of words around it, often wider than the row). */
export const SNIPPET_LEAD = 24;

/** Cuts the text before the first match to about `lead` characters, at a word boundary. */
export function centreOnMatch(text: string, lead = SNIPPET_LEAD): string {
  const at = text.indexOf("«");
  if (at <= lead) return text;
  const from = text.indexOf(" ", at - lead);
  const start = from >= 0 && from < at ? from + 1 : at - lead;
  return `…${text.slice(start)}`;
}

/** Search snippets mark matched terms between « and »; shown as <mark>, the rest as text. */
export function snippet(raw: string): DocumentFragment {
  const text = centreOnMatch(plainSnippet(raw));
  const frag = document.createDocumentFragment();
  text.split(/(«[^»]*»)/).forEach((part) => {
    // Messages quote what runs printed: shown marked, never reordering the list around them.
    if (part.startsWith("«") && part.endsWith("»")) frag.append(h("mark", {}, renderVisible(part.slice(1, -1))));
    else if (part) frag.append(renderVisible(part));
  });
  return frag;
}

export class Sidebar {
  readonly el: HTMLElement;
  private readonly list: HTMLElement;
  private readonly search: HTMLInputElement;
  private readonly badge: HTMLButtonElement;
  private items: ConversationSummary[] = [];
  private current: string | null = null;
  private query = "";
  private debounce: ReturnType<typeof setTimeout> | null = null;
  private seq = 0;

  constructor(
    private readonly api: Api,
    private readonly actions: SidebarActions,
  ) {
    const newBtn = h("button", { testid: "new-conversation", className: "btn btn-primary btn-block", type: "button" }, "New conversation");
    newBtn.addEventListener("click", () => void this.create());
    this.search = h("input", { testid: "conversation-search", className: "input search", type: "search", placeholder: "Search conversations", "aria-label": "Search conversations", autocomplete: "off" });
    this.search.addEventListener("input", () => {
      if (this.debounce) clearTimeout(this.debounce);
      this.debounce = setTimeout(() => void this.refresh(this.search.value), 150);
    });
    this.badge = h("button", { testid: "pending-badge", className: "pending-badge", type: "button", hidden: true, title: "Approvals waiting" }, "0");
    this.badge.addEventListener("click", () => this.actions.reviewPending());
    this.list = h("nav", { className: "conv-list", "aria-label": "Conversations" });
    const settings = h("button", { testid: "open-settings", className: "btn btn-quiet btn-block", type: "button" }, icon("gear"), "Settings");
    settings.addEventListener("click", () => this.actions.openSettings());
    this.el = h(
      "aside",
      { testid: "sidebar", className: "sidebar" },
      h("div", { className: "brand" }, h("span", { className: "brand-mark", "aria-hidden": "true" }), h("span", { className: "brand-name" }, "IronClaw"), h("span", { className: "spacer" }), this.badge),
      newBtn,
      this.search,
      this.list,
      h("div", { className: "sidebar-foot" }, settings),
    );
  }

  get conversations(): readonly ConversationSummary[] {
    return this.items;
  }

  setCurrent(id: string | null): void {
    this.current = id;
    for (const el of this.list.querySelectorAll<HTMLElement>("[data-testid=conversation-item]")) {
      el.classList.toggle("active", el.dataset["id"] === id);
      el.setAttribute("aria-current", el.dataset["id"] === id ? "page" : "false");
    }
  }

  setPendingTotal(count: number): void {
    this.badge.hidden = count <= 0;
    this.badge.textContent = String(count);
    this.badge.setAttribute("aria-label", `${count} approvals waiting`);
  }

  /** Reloads the list; a non-empty query is a full-text search. */
  async refresh(query = this.query): Promise<void> {
    this.query = query.trim();
    const seq = ++this.seq;
    try {
      const items = await this.api.listConversations(this.query || undefined);
      if (seq !== this.seq) return; // a newer search already answered
      this.items = items;
      this.render();
    } catch (e) {
      this.actions.toast(`Could not load conversations: ${errorText(e)}`);
    }
  }

  /** Updates one entry in place (title, time, pending count changed). */
  upsert(c: ConversationSummary): void {
    const i = this.items.findIndex((x) => x.id === c.id);
    const prev = this.items[i];
    if (prev) this.items[i] = { ...prev, ...c, ...(prev.snippet !== undefined ? { snippet: prev.snippet } : {}) };
    else if (!this.query) this.items.unshift(c);
    this.render();
  }

  private async create(): Promise<void> {
    try {
      const c = await this.api.createConversation();
      if (this.query) {
        this.search.value = "";
        this.query = "";
      }
      this.items.unshift(c);
      this.render();
      this.actions.created(c);
    } catch (e) {
      this.actions.toast(`Could not start a conversation: ${errorText(e)}`);
    }
  }

  private render(): void {
    this.list.replaceChildren();
    if (this.items.length === 0) {
      this.list.append(h("p", { className: "muted conv-empty" }, this.query ? "Nothing matches." : "No conversations yet."));
      return;
    }
    for (const c of this.items) this.list.append(this.row(c));
  }

  private row(c: ConversationSummary): HTMLElement {
    // A branch's title is its original's plus " (branch)", which the row's width cut off: the
    // mark goes first, where it is always seen.
    const branch = / \(branch\)$/.test(c.title);
    const name = branch ? c.title.replace(/( \(branch\))+$/, "") : c.title;
    const title = h("span", { className: "conv-title" }, sandboxText(name || "Untitled"));
    const mark = branch ? h("span", { testid: "conversation-branch", className: "conv-branch" }, "branch") : null;
    const select = h(
      "button",
      { className: "conv-select", type: "button" },
      h("span", { className: "conv-line" }, mark, title, c.pendingApprovals > 0 ? h("span", { className: "conv-pending", title: "Approvals waiting" }, String(c.pendingApprovals)) : null),
      c.snippet ? h("span", { testid: "conversation-snippet", className: "conv-snippet" }, snippet(c.snippet)) : h("span", { className: "conv-time" }, formatTime(c.updatedAt)),
    );
    // A search result opens where it matched, not at the bottom.
    const matched = c.snippet ? /«([^»]+)»/.exec(c.snippet)?.[1] : undefined;
    select.addEventListener("click", () => this.actions.select(c.id, matched));
    const rename = h("button", { testid: "conversation-rename", className: "icon-btn", type: "button", title: "Rename", "aria-label": "Rename" }, icon("pencil", 15));
    const exp = h("button", { testid: "conversation-export", className: "icon-btn", type: "button", title: "Export as Markdown", "aria-label": "Export" }, icon("download", 15));
    const del = h("button", { testid: "conversation-delete", className: "icon-btn", type: "button", title: "Delete", "aria-label": "Delete" }, icon("trash", 15));
    const tools = h("span", { className: "conv-tools" }, rename, exp, del);
    const row = h("div", { testid: "conversation-item", className: "conv-item", "data-id": c.id }, select, tools);
    if (c.id === this.current) {
      row.classList.add("active");
      row.setAttribute("aria-current", "page");
    }
    rename.addEventListener("click", () => this.startRename(row, c));
    exp.addEventListener("click", () => void this.export(c, "markdown"));
    del.addEventListener("click", () => this.confirmDelete(row, c));
    return row;
  }

  private startRename(row: HTMLElement, c: ConversationSummary): void {
    const input = h("input", { testid: "conversation-rename-input", className: "input", type: "text", value: c.title, "aria-label": "New title" });
    row.replaceChildren(input);
    input.focus();
    input.select();
    let done = false;
    const finish = async (save: boolean) => {
      if (done) return;
      done = true;
      const title = input.value.trim();
      if (save && title && title !== c.title) {
        try {
          await this.api.renameConversation(c.id, title);
          c.title = title;
        } catch (e) {
          this.actions.toast(`Could not rename: ${errorText(e)}`);
        }
      }
      this.render();
    };
    input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") void finish(true);
      if (ev.key === "Escape") void finish(false);
    });
    input.addEventListener("blur", () => void finish(true));
  }

  private confirmDelete(row: HTMLElement, c: ConversationSummary): void {
    const yes = h("button", { testid: "conversation-delete-confirm", className: "btn btn-small btn-danger", type: "button" }, "Delete");
    const no = h("button", { testid: "conversation-delete-cancel", className: "btn btn-small", type: "button" }, "Cancel");
    row.replaceChildren(h("div", { className: "conv-confirm", role: "alertdialog", "aria-label": "Confirm delete" }, h("span", {}, `Delete “${c.title}” and its sandbox?`), h("span", { className: "row-end" }, no, yes)));
    no.focus();
    no.addEventListener("click", () => this.render());
    yes.addEventListener("click", async () => {
      try {
        await this.api.deleteConversation(c.id);
        this.items = this.items.filter((x) => x.id !== c.id);
        this.render();
        this.actions.deleted(c.id);
      } catch (e) {
        this.actions.toast(`Could not delete: ${errorText(e)}`);
        this.render();
      }
    });
  }

  private async export(c: ConversationSummary, format: "markdown" | "json"): Promise<void> {
    try {
      const path = await this.api.exportConversation(c.id, format);
      this.actions.toast(`Exported to ${path}`, format === "markdown" ? { label: "Export as JSON too", testid: "export-json", run: () => void this.export(c, "json") } : undefined);
    } catch (e) {
      this.actions.toast(`Could not export: ${errorText(e)}`);
    }
  }
}
