// The conversation: messages (streaming markdown), approval cards and execution cells, plus the
// composer. Streaming text is re-rendered at most once per animation frame per message.

import type { ContextGauge } from "../bindings/ContextGauge";
import type { AgentEvent } from "../bindings/AgentEvent";
import type { ChangeDetail } from "../bindings/ChangeDetail";
import type { ApprovalRequest } from "../bindings/ApprovalRequest";
import type { ApprovalState } from "../bindings/ApprovalState";
import type { ConversationView } from "../bindings/ConversationView";
import type { HistoryItem } from "../bindings/HistoryItem";
import type { InstructionFile } from "../bindings/InstructionFile";
import type { HostDecision } from "../bindings/HostDecision";
import { errorText } from "../api/types";
import { formatTime, h } from "../lib/dom";
import { icon } from "../lib/icons";
import { inNextFrame } from "../lib/frame";
import { markInvisible, renderVisible } from "../lib/invisible";
import { renderMarkdownInto, wireLinks } from "../lib/markdown";
import { RISK_LABEL } from "./approval";
import { POLICIES } from "./policies";
import { FetchCard } from "./fetch";
import { ExecutionCell } from "./cell";
import { AttachTray, splitNote, type AttachTask } from "./attach";
import { PictureTray, thumbnail, type Picture } from "./pictures";
import type { ImageInput } from "../bindings/ImageInput";
import type { SentImage } from "../bindings/SentImage";
import { ModelPicker } from "./model-menu";
import type { ModelMenu } from "../bindings/ModelMenu";
import type { ModelOption } from "../bindings/ModelOption";
import type { AttachedItem } from "../bindings/AttachedItem";

export interface ChatActions {
  send(text: string, images: ImageInput[]): Promise<void>;
  /** Edits the person's message `messageId`: a branch of the conversation at that message, to
   *  which `text` (and the pictures) is sent. */
  branch(messageId: string, text: string, images: ImageInput[]): Promise<void>;
  /** A picture a message carried to the model (see SentImage), as a data: URL. */
  readSentImage(messageId: string, ordinal: number): Promise<string>;
  /** A workspace picture as a data: URL (what `view_image` showed the model, live). */
  readImage(path: string): Promise<string>;
  /** What a failed send's error points to, offered as a banner button. */
  fixFor(e: unknown): { label: string; run: () => void } | undefined;
  stop(): void;
  openLog(executionId: string): void;
  openExternal(url: string): void;
  reviewApproval(approvalId: string): void;
  toggleWorkspace(): void;
  /** The Attach button's Files… (false) or Folder… (true). */
  attach(folders: boolean): void;
  modelMenu(): Promise<ModelMenu>;
  useModel(option: ModelOption): void;
  decideHost(target: string, decision: HostDecision): void;
  undo(executionId: string, force: boolean): void;
  redo(executionId: string): void;
  rewind(executionId: string): void;
  /** One file a run changed, both sides and a diff. */
  changeDetail(executionId: string, path: string): Promise<ChangeDetail>;
}

interface Message {
  el: HTMLElement;
  body: HTMLElement;
  text: string;
  /** The model's visible thinking, folded above the answer; only while the app runs. */
  reasoning: string;
  reasoningEl: HTMLElement | null;
  render: () => void;
}

/** Cells beyond this many (newest first) have their output folded away. */
const OPEN_CELLS = 4;

export class ChatView {
  readonly el: HTMLElement;
  private readonly log: HTMLElement;
  private readonly title: HTMLElement;
  private readonly input: HTMLTextAreaElement;
  private readonly sendBtn: HTMLButtonElement;
  private readonly stopBtn: HTMLButtonElement;
  private readonly chip: HTMLButtonElement;
  private readonly meter: HTMLElement;
  private readonly rules: HTMLElement;
  private readonly empty: HTMLElement;
  private readonly tray: AttachTray;
  private readonly pictures: PictureTray;
  private readonly picker: ModelPicker;
  /** The model of the last answer shown, to label an answer from another one. */
  private lastModel: string | null = null;
  /** Switched to while the conversation is open: the next new answer is labelled with it. */
  private switchedTo: string | null = null;
  private messages = new Map<string, Message>();
  private cells = new Map<string, ExecutionCell>();
  private fetches = new Map<string, FetchCard>();
  /** Hosts asked about for a fetch (which waits) rather than after a run (which is over). */
  private fetchHosts = new Set<string>();
  private cards = new Map<string, { el: HTMLElement; state: HTMLElement; review: HTMLButtonElement }>();
  private hostPrompts = new Map<string, HTMLElement>();
  private running = false;
  private stick = true;

  constructor(private readonly actions: ChatActions) {
    this.title = h("h1", { className: "chat-title" }, "");
    this.chip = h("button", { testid: "pending-approval-chip", className: "pending-chip", type: "button", hidden: true });
    this.chip.addEventListener("click", () => this.actions.reviewApproval(""));
    this.meter = h("span", { testid: "context-meter", className: "context-meter", hidden: true });
    this.rules = h("span", { testid: "instructions-chip", className: "context-meter instructions-chip", hidden: true });
    // Named by its own label: a tooltip would cover the panel's header as it opens.
    const wsBtn = h("button", { testid: "open-workspace-panel", className: "btn btn-quiet", type: "button", "aria-label": "Workspace files" }, icon("files"), "Files");
    wsBtn.addEventListener("click", () => this.actions.toggleWorkspace());
    this.empty = h(
      "div",
      { className: "chat-empty" },
      h("h2", {}, "What should we work on?"),
      h("p", {}, "Ask a question about your files. Any code the assistant wants to run is shown to you first, and only runs inside the sandbox after you approve it."),
    );
    this.log = h("div", { className: "chat-log", role: "log", "aria-live": "polite" }, this.empty);
    this.log.addEventListener("scroll", () => {
      this.stick = this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 80;
    });
    wireLinks(this.log, (url) => this.actions.openExternal(url));
    // A picture that arrives after its item (a run's image, what the model looked at) makes
    // the log taller: a log that followed the end keeps following it. `load` does not bubble.
    this.log.addEventListener("load", () => this.scroll(), true);

    this.input = h("textarea", { testid: "message-input", className: "composer-input", rows: 1, placeholder: "Message IronClaw…", "aria-label": "Message" });
    this.sendBtn = h("button", { testid: "send-button", className: "btn btn-primary", type: "button" }, "Send");
    this.stopBtn = h("button", { testid: "stop-button", className: "btn btn-danger-quiet", type: "button", hidden: true }, "Stop");
    this.input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        void this.submit();
      }
    });
    this.input.addEventListener("input", () => this.autosize());
    this.sendBtn.addEventListener("click", () => void this.submit());
    this.pictures = new PictureTray((why) => this.notice(why, true));
    this.tray = new AttachTray((folders) => this.actions.attach(folders), undefined, () => this.pictures.input.click());
    // A pasted picture goes with the message; pasted text stays the textarea's.
    this.input.addEventListener("paste", (ev) => {
      const data = ev.clipboardData;
      // Some engines list a copied picture only among the items, not the files.
      const listed = [...(data?.files ?? [])];
      const items = [...(data?.items ?? [])].filter((i) => i.kind === "file").map((i) => i.getAsFile()).filter((f): f is File => f !== null);
      const files = (listed.length ? listed : items).filter((f) => f.type.startsWith("image/"));
      if (files.length === 0) return;
      ev.preventDefault();
      void this.pictures.add(files);
    });
    this.picker = new ModelPicker({ load: () => this.actions.modelMenu(), choose: (o) => this.actions.useModel(o) });
    this.stopBtn.addEventListener("click", () => this.actions.stop());

    this.el = h(
      "main",
      { testid: "chat-view", className: "chat" },
      h("header", { className: "chat-head" }, this.title, h("span", { className: "spacer" }), this.rules, this.meter, this.chip, this.picker.el, wsBtn),
      this.log,
      h("footer", { className: "composer" }, this.tray.el, this.pictures.el, this.pictures.input, h("div", { className: "composer-box" }, this.tray.control, this.input, this.stopBtn, this.sendBtn), h("p", { className: "composer-hint" }, "Enter to send · Shift+Enter for a new line · drop files or paste pictures · code runs only after you approve it")),
      this.tray.overlay,
    );
  }

  private autosize(): void {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight, 200)}px`;
  }

  private async submit(): Promise<void> {
    const text = this.input.value.trim();
    if (!text && this.pictures.count === 0) return;
    this.input.value = "";
    this.autosize();
    const pictures = this.pictures.take();
    this.addUser(text, undefined, this.tray.take(), pictures);
    try {
      await this.actions.send(text, pictures.map((p) => p.input));
    } catch (e) {
      this.notice(errorText(e), true);
      const fix = this.actions.fixFor(e);
      if (fix) this.banner(errorText(e), fix.label, fix.run);
    }
  }

  focusInput(): void {
    this.input.focus();
  }

  setTitle(title: string): void {
    this.title.textContent = title;
  }

  /** Brings the first message or run that contains `text` into view and marks it for a
   *  moment (a search result was opened); the thread then stays where it is. */
  showMatch(text: string): void {
    const wanted = text.toLowerCase();
    const items = this.log.querySelectorAll<HTMLElement>("[data-testid='message'], [data-testid='execution-cell']");
    const hit = [...items].find((el) => (el.textContent ?? "").toLowerCase().includes(wanted));
    if (!hit) return;
    this.stick = false;
    // After the opening's own scroll to the end, which runs in the next frame.
    inNextFrame(() => hit.scrollIntoView?.({ block: "center" }), true);
    hit.classList.add("search-hit");
    hit.dataset["searchHit"] = "true";
    setTimeout(() => {
      hit.classList.remove("search-hit");
      delete hit.dataset["searchHit"];
    }, 2500);
  }

  /** The header's "Context N%" chip, with the model and the window's source on hover. */
  private showContext(e: ContextGauge): void {
    const pct = Math.min(100, Math.round((100 * e.usedTokens) / Math.max(1, e.windowTokens)));
    this.meter.hidden = false;
    this.meter.textContent = `Context ${pct}%`;
    this.meter.classList.toggle("full", pct >= 80);
    this.meter.title = `${e.model}: about ${e.usedTokens.toLocaleString()} of ${e.windowTokens.toLocaleString()} tokens in use (window ${e.windowSource}). When the conversation outgrows it, the earlier part is summarised.`;
  }

  /** Renders a freshly opened conversation. */
  load(view: ConversationView): void {
    for (const c of this.cells.values()) c.dispose();
    this.messages.clear();
    this.cells.clear();
    this.cards.clear();
    this.hostPrompts.clear();
    this.fetches.clear();
    this.fetchHosts.clear();
    this.log.replaceChildren(this.empty);
    this.meter.hidden = true;
    // Right from the moment it opens: the last request's gauge, until the next one.
    if (view.context) this.showContext(view.context);
    this.showInstructions(view.instructions);
    this.tray.show(view.attached);
    this.picker.set(view.model);
    this.lastModel = null;
    this.switchedTo = null;
    this.setTitle(view.conversation.title);
    for (const item of view.items) this.addHistory(item);
    this.updateRewind();
    this.empty.hidden = view.items.length > 0;
    this.setRunning(view.busy);
    if (view.policyFlagged) this.notice("Approval policy is “never ask”: code in this conversation runs without asking you first.", true);
    this.stick = true;
    this.collapseOld();
    this.scroll(true);
  }

  private addHistory(item: HistoryItem): void {
    switch (item.type) {
      case "user":
        this.addUser(item.text, item.at, [], item.images, item.id);
        break;
      case "viewed":
        this.viewed(item.path, item.error ?? null, item.image ?? null);
        break;
      case "assistant": {
        const m = this.assistant(item.id);
        m.text = item.text;
        m.render();
        // Who answered, where it changed within the conversation.
        if (item.model && this.lastModel && item.model !== this.lastModel) {
          m.el.prepend(h("p", { testid: "message-model", className: "message-model" }, renderVisible(item.model)));
        }
        if (item.model) this.lastModel = item.model;
        if (item.status === "interrupted") m.el.append(h("p", { className: "message-flag" }, "The reply was cut off."));
        break;
      }
      case "note":
        this.notice(item.text);
        break;
      case "compacted":
        this.compacted(item.summary);
        break;
      case "approval":
        this.addCard(item.request, item.state, item.reason ?? null, item.userEdited);
        break;
      case "fetch": {
        const card = FetchCard.fromHistory(item.report);
        this.fetches.set(item.callId, card);
        this.append(card.el);
        break;
      }
      case "execution": {
        const cell = ExecutionCell.fromHistory(item, {
          stop: () => this.actions.stop(),
          openLog: (id) => this.actions.openLog(id),
          undo: (id, force) => this.actions.undo(id, force),
          redo: (id) => this.actions.redo(id),
          rewind: (id) => this.actions.rewind(id),
          detail: (id, path) => this.actions.changeDetail(id, path),
        });
        this.cells.set(item.executionId, cell);
        this.append(cell.el);
        break;
      }
    }
  }

  private append(node: HTMLElement): void {
    this.empty.hidden = true;
    this.log.insertBefore(node, this.empty);
    this.scroll();
  }

  private scroll(force = false): void {
    if (!force && !this.stick) return;
    inNextFrame(this.scrollJob, true);
  }

  private readonly scrollJob = () => {
    this.log.scrollTop = this.log.scrollHeight;
  };

  /** Copies files into the workspace with the progress shown above the composer. */
  attach(waiting: string, task: AttachTask): Promise<void> {
    return this.tray.run(waiting, task);
  }

  /** Files are dragged over the window. */
  dragHover(over: boolean): void {
    this.tray.hover(over);
  }

  /** `attached`: what this message tells the model about (when sent from here). */
  addUser(text: string, at?: string | number, attached: AttachedItem[] = [], pictures: (Picture | SentImage)[] = [], id?: string): void {
    const { note, typed } = splitNote(text);
    const names = renderVisible(attached.map((a) => (a.isDir ? `${a.name}/` : a.name)).join(", "));
    const line = note !== null ? renderVisible(note) : names ? `Attached: ${names}` : null;
    const noteEl = line ? h("p", { testid: "message-attached", className: "message-attached" }, icon("clip", 13), line) : null;
    const body = h("div", { testid: "message-body", className: "message-body plain" }, typed);
    const shown = pictures.length
      ? h("div", { testid: "message-pictures", className: "message-pictures" }, ...pictures.map((p) => this.pictureOf(p)))
      : null;
    const edit = h("button", { testid: "edit-message", className: "btn btn-quiet btn-icon message-edit", type: "button", title: "Edit: send something else from here, in a branch", "aria-label": "Edit this message", hidden: !id }, icon("pencil", 14));
    const el = h("article", { testid: "message", className: "message user", "data-role": "user" }, edit, noteEl, shown, body, at ? h("time", { className: "message-time" }, formatTime(at)) : null);
    if (id) el.dataset.messageId = id;
    // What the model was told about attached files stays true in the branch: it goes along.
    const told = text.slice(0, text.length - typed.length);
    edit.addEventListener("click", () => this.editMessage(el, typed, pictures, told));
    this.append(el);
  }

  private pictureOf(p: Picture | SentImage): HTMLElement {
    return "input" in p ? thumbnail(p.name, p.dataUrl) : thumbnail(p.name, this.actions.readSentImage(p.messageId, p.ordinal), p);
  }

  /** The person's message just sent has its id now: it can be edited. */
  private userSaved(messageId: string): void {
    const unsaved = [...this.log.querySelectorAll<HTMLElement>('[data-role="user"]:not([data-message-id])')];
    const el = unsaved.at(-1);
    if (!el) return;
    el.dataset.messageId = messageId;
    const edit = el.querySelector<HTMLElement>('[data-testid="edit-message"]');
    if (edit) edit.hidden = false;
  }

  /** An editor in place of the message; sending it branches the conversation there. */
  private editMessage(el: HTMLElement, typed: string, pictures: (Picture | SentImage)[], told = ""): void {
    const id = el.dataset.messageId;
    if (!id || el.querySelector('[data-testid="edit-input"]')) return;
    const input = h("textarea", { testid: "edit-input", className: "edit-input", rows: 3, "aria-label": "Edited message" });
    input.value = typed;
    const send = h("button", { testid: "edit-send", className: "btn btn-primary", type: "button" }, "Send in a branch");
    const cancel = h("button", { testid: "edit-cancel", className: "btn btn-quiet", type: "button" }, "Cancel");
    const hint = h("p", { className: "edit-hint" }, "A new conversation branches here, with everything before this message and the files as they were then; this one stays as it is. The interpreter starts fresh.");
    const editor = h("div", { testid: "message-editor", className: "message-editor" }, input, hint, h("div", { className: "edit-actions" }, cancel, send));
    el.append(editor);
    el.classList.add("editing");
    // The edit button's tooltip would sit over the box being typed in.
    const editBtn = el.querySelector<HTMLElement>('[data-testid="edit-message"]');
    const editTitle = editBtn?.title ?? "";
    editBtn?.removeAttribute("title");
    input.focus();
    const close = () => {
      editor.remove();
      el.classList.remove("editing");
      if (editBtn && editTitle) editBtn.title = editTitle;
    };
    cancel.addEventListener("click", close);
    input.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") {
        ev.stopPropagation();
        close();
      }
    });
    send.addEventListener("click", () => {
      const text = input.value.trim();
      if (!text && pictures.length === 0) return;
      send.disabled = true;
      // The message's pictures go with the edit, as the model was sent them.
      const loaded = Promise.all(
        pictures.map(async (p): Promise<ImageInput> => {
          if ("input" in p) return p.input;
          const url = await this.actions.readSentImage(p.messageId, p.ordinal);
          return { name: p.name, data: url.slice(url.indexOf(",") + 1) };
        }),
      );
      loaded.then((images) => this.actions.branch(id, `${told}${text}`, images)).then(close, (e) => {
        send.disabled = false;
        this.notice(`Could not branch the conversation: ${errorText(e)}`, true);
      });
    });
  }

  private assistant(messageId: string): Message {
    const existing = this.messages.get(messageId);
    if (existing) return existing;
    const body = h("div", { testid: "message-body", className: "message-body markdown" });
    // Hidden while empty: a reply that is only a tool call has no words to show.
    const el = h("article", { testid: "message", className: "message assistant", "data-role": "assistant", "data-message-id": messageId, hidden: true }, body);
    if (this.switchedTo) {
      el.prepend(h("p", { testid: "message-model", className: "message-model" }, renderVisible(this.switchedTo)));
      this.switchedTo = null;
    }
    const m: Message = {
      el,
      body,
      text: "",
      reasoning: "",
      reasoningEl: null,
      render: () => {
        m.el.hidden = m.text.trim() === "" && m.reasoning.trim() === "";
        if (m.reasoning && !m.reasoningEl) {
          const summary = h("summary", {}, "Thinking");
          m.reasoningEl = h("pre", { className: "reasoning-text" });
          m.body.before(h("details", { testid: "reasoning", className: "reasoning" }, summary, m.reasoningEl));
        }
        if (m.reasoningEl) m.reasoningEl.textContent = m.reasoning;
        renderMarkdownInto(m.body, m.text);
        this.scroll();
      },
    };
    this.messages.set(messageId, m);
    this.append(el);
    return m;
  }

  private addCard(req: ApprovalRequest, state: ApprovalState, reason: string | null = null, edited = false): void {
    const stateEl = h("span", { className: "card-state" });
    const review = h("button", { className: "btn btn-small", type: "button" }, "Review");
    review.addEventListener("click", () => this.actions.reviewApproval(req.approvalId));
    const firstLine = req.code.split("\n").find((l) => l.trim() && !l.trim().startsWith("#")) ?? req.code;
    const el = h(
      "div",
      { className: `approval-card risk-${req.risk}`, "data-approval-id": req.approvalId },
      h("span", { className: `risk-dot risk-${req.risk}`, "aria-hidden": "true" }),
      req.language === "mcp"
        ? h("span", { className: "card-text" }, h("strong", {}, "MCP tool"), " ", h("code", {}, /^mcp (\S+)/.exec(req.code)?.[1] ?? firstLine.trim().slice(0, 80)))
        : h("span", { className: "card-text" }, h("strong", {}, req.language), " ", h("code", {}, firstLine.trim().slice(0, 80))),
      h("span", { className: `chip risk-chip risk-${req.risk}` }, RISK_LABEL[req.risk] ?? req.risk),
      stateEl,
      review,
    );
    this.cards.set(req.approvalId, { el, state: stateEl, review });
    this.append(el);
    this.setCardState(req.approvalId, state, reason, edited);
  }

  setCardState(approvalId: string, state: ApprovalState | "approvedAuto", reason: string | null = null, edited = false): void {
    const card = this.cards.get(approvalId);
    if (!card) return;
    const label: Record<string, string> = {
      pending: "Waiting for your approval",
      approved: edited ? "Approved with your edits" : "Approved",
      approvedAuto: "Allowed by your rules",
      denied: reason ? `Denied: ${reason}` : "Denied",
      expired: "Expired",
    };
    card.state.textContent = label[state] ?? state;
    card.el.setAttribute("data-state", state);
    if (edited) card.el.setAttribute("data-edited", "true");
    card.review.hidden = state !== "pending";
  }

  /** Reflects the approval queue: the chip offers to reopen dismissed requests. */
  setPending(count: number, dialogOpen: boolean): void {
    this.chip.hidden = count === 0 || dialogOpen;
    this.chip.textContent = count === 1 ? "1 approval waiting — review" : `${count} approvals waiting — review`;
  }

  setRunning(running: boolean): void {
    this.running = running;
    this.stopBtn.hidden = !running;
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** A bar above the conversation (e.g. Docker not ready) with one action. */
  banner(message: string, label: string, action: () => void): void {
    this.el.querySelector(".chat-banner")?.remove();
    const btn = h("button", { className: "btn btn-small", type: "button" }, label);
    const bar = h("div", { testid: "chat-banner", className: "chat-banner", role: "alert" }, h("span", {}, message), btn);
    btn.addEventListener("click", () => {
      bar.remove();
      action();
    });
    this.log.before(bar);
  }

  /** Where the model's summary began standing in for the messages above it. */
  private compacted(summary: string, before?: number, after?: number): void {
    const sizes = before && after ? ` (about ${before.toLocaleString()} → ${after.toLocaleString()} tokens)` : "";
    this.append(
      h(
        "details",
        { testid: "compacted", className: "chat-compacted" },
        h("summary", {}, `Earlier messages were summarised to fit the model's context window${sizes}. The model now works from this summary.`),
        h("p", { className: "compacted-text" }, summary),
      ),
    );
  }

  /** A line of IronClaw's in the thread. Its words may quote what the sandbox chose (a file
   *  name in an undo note): marked and isolated, as everywhere. */
  notice(message: string, error = false): void {
    const el = h("div", { className: `chat-notice${error ? " error" : ""}`, role: error ? "alert" : "status" }, message);
    markInvisible(el);
    this.append(el);
  }

  cell(executionId: string): ExecutionCell | undefined {
    return this.cells.get(executionId);
  }

  /** The header pill naming the instruction files in force; each one's origin and size on hover. */
  private showInstructions(files: InstructionFile[]): void {
    const read = files.filter((f) => !f.problem);
    this.rules.hidden = files.length === 0;
    this.rules.classList.toggle("full", files.some((f) => f.problem));
    const only = read.length === 1 ? read[0] : undefined;
    this.rules.textContent = only ? `Instructions: ${only.name}` : read.length ? `Instructions: ${read.length}` : "Instructions: not read";
    this.rules.title = files
      .map((f) => {
        const where = f.scope === "user" ? "yours, for every conversation" : "in this workspace; code that runs can change it";
        const state = f.problem ? `not read: ${f.problem}` : f.cut ? `${f.bytes.toLocaleString()} bytes, only the start is read` : `${f.bytes.toLocaleString()} bytes`;
        return `${f.name} (${where}) — ${state}\n${f.path}`;
      })
      .join("\n\n");
  }

  handle(e: AgentEvent): void {
    switch (e.type) {
      case "turnStarted":
        this.setRunning(true);
        break;
      case "textDelta": {
        const m = this.assistant(e.messageId);
        m.text += e.text;
        inNextFrame(m.render);
        break;
      }
      case "reasoningDelta": {
        const m = this.assistant(e.messageId);
        m.reasoning += e.text;
        inNextFrame(m.render);
        break;
      }
      case "note":
        this.notice(e.text);
        break;
      case "contextUsage":
        this.showContext(e);
        break;
      case "compacted":
        this.compacted(e.summary, e.tokensBefore, e.tokensAfter);
        break;
      case "instructions":
        this.showInstructions(e.files);
        break;
      case "modelChanged":
        this.picker.set({ provider: e.provider, model: e.model });
        this.switchedTo = `${e.provider}:${e.model}`;
        this.notice(`Switched to ${renderVisible(`${e.provider}:${e.model}`)}: it answers from your next message.`);
        break;
      case "assistantMessage": {
        const m = this.assistant(e.messageId);
        m.text = e.text;
        inNextFrame(m.render);
        break;
      }
      case "approvalRequested": {
        const { type: _t, ...req } = e;
        if (!this.cards.has(req.approvalId)) this.addCard(req, "pending");
        break;
      }
      case "approvalResolved":
        this.setCardState(e.approvalId, e.approved ? (e.auto ? "approvedAuto" : "approved") : "denied", e.reason, e.userEdited);
        break;
      case "decisionRejected":
        break;
      case "executionStarted": {
        const cell = new ExecutionCell(e.executionId, e.language, e.code, {
          stop: () => this.actions.stop(),
          openLog: (id) => this.actions.openLog(id),
          undo: (id, force) => this.actions.undo(id, force),
          redo: (id) => this.actions.redo(id),
          rewind: (id) => this.actions.rewind(id),
          detail: (id, path) => this.actions.changeDetail(id, path),
        }).numbered(e.number);
        this.cells.set(e.executionId, cell);
        this.append(cell.el);
        this.collapseOld();
        break;
      }
      case "executionOutput":
        this.cells.get(e.executionId)?.output(e.stream, e.text);
        this.scroll();
        break;
      case "executionResources":
        this.cells.get(e.executionId)?.resources(e);
        break;
      case "executionEnded": {
        const cell = this.cells.get(e.executionId);
        cell?.finish(e);
        cell?.showChanges(e.changes, { undoable: !e.notUndoable, undone: false, notUndoable: e.notUndoable, changesUnknown: e.changesUnknown });
        break;
      }
      case "runUndone": {
        const cell = this.cells.get(e.executionId);
        const later = e.alsoUndone.map((id) => this.cells.get(id));
        cell?.strip?.undone(later.length ? `the later ${later.map((c) => c?.label ?? "run").join(", ")}` : undefined);
        for (const c of later) c?.strip?.undone(`${cell?.label ?? "an earlier run"}`);
        break;
      }
      case "undoBlocked":
        this.cells.get(e.executionId)?.strip?.blocked(e.laterRuns.map((id) => this.cells.get(id)?.label ?? "a later run"), e.paths);
        break;
      case "runRedone":
        this.cells.get(e.executionId)?.strip?.redone();
        break;
      case "rewound":
        this.cells.get(e.executionId)?.strip?.rewound(e.undone.length);
        break;
      case "turnEnded":
        this.setRunning(false);
        if (e.status === "failed") this.notice(e.error ?? "The turn failed.", true);
        else if (e.status === "cancelled") this.notice("Stopped.");
        break;
      case "policyChanged":
        if (e.flagged) this.notice("Approval policy is now “never ask”: code runs without asking you first.", true);
        else this.notice(POLICIES.find((p) => p.value === e.policy)?.notice ?? `Approval policy: ${e.policy}.`);
        break;
      case "error":
        this.notice(e.message, true);
        for (const c of this.cells.values()) if (c.strip?.working) c.strip.failed();
        break;
      case "messageNotSaved":
        // No turn started for it: the conversation is idle again, with the reason shown.
        this.setRunning(false);
        this.notice(e.message, true);
        break;
      case "networkBlocked":
        if (!e.alreadyDenied) this.hostPrompt(e.target, e.reason);
        break;
      case "fetchStarted":
        this.fetchCard(e.callId, e.url);
        break;
      case "fetchHostAsked":
        this.fetchHosts.add(e.target);
        this.hostPrompt(e.target, e.reason, this.fetchCard(e.callId, e.url));
        break;
      case "userMessageSaved":
        this.userSaved(e.messageId);
        break;
      case "imageViewed":
        if (e.error) {
          this.viewed(e.path, e.error, null);
        } else {
          const el = this.viewed(e.path, null, null, `${e.width}×${e.height}`);
          // What the model got is that file as it was a moment ago: shown from the workspace.
          this.actions.readImage(e.path).then(
            (url) => el.append(thumbnail(e.path, url)),
            () => {},
          );
        }
        break;
      case "fetchEnded":
        this.fetches.get(e.callId)?.finish(e.report);
        this.scroll();
        break;
      case "executionNetwork":
        this.cells.get(e.executionId)?.network(e.allowed, e.denied);
        break;
      case "networkDecided":
        this.hostDecided(e.target, e.decision);
        break;
    }
    if (e.type === "executionEnded" || e.type === "runUndone" || e.type === "runRedone") this.updateRewind();
  }

  private fetchCard(callId: string, url: string): FetchCard {
    let card = this.fetches.get(callId);
    if (!card) {
      card = new FetchCard(url);
      this.fetches.set(callId, card);
      this.append(card.el);
    }
    return card;
  }

  /** "Rewind files to here" on each run whose changes stand while a later run's do too. */
  private updateRewind(): void {
    let later = 0;
    for (const cell of [...this.cells.values()].reverse()) {
      cell.strip?.rewindable(later);
      if (cell.strip?.standing) later += 1;
    }
  }

  /**
   * The network policy refused a host during a run. The person may let it through (once, for
   * this conversation, or always) or keep it blocked; the code is not retried on its own.
   */
  private hostPrompt(target: string, reason: string, fetchCard?: FetchCard): void {
    const forFetch = fetchCard !== undefined;
    if (this.hostPrompts.has(target)) return;
    const choices: [HostDecision, string][] = [
      ["allow_once", "Allow once"],
      ["allow_for_session", "Allow in this conversation"],
      ["allow_always", "Always allow"],
      ["deny", "Keep blocked"],
    ];
    const buttons = h("div", { className: "network-actions" });
    for (const [decision, label] of choices) {
      const b = h("button", { className: `btn btn-small${decision === "deny" ? "" : " btn-quiet"}`, type: "button", "data-decision": decision, testid: `network-${decision}` }, label);
      b.addEventListener("click", () => {
        buttons.querySelectorAll("button").forEach((x) => ((x as HTMLButtonElement).disabled = true));
        this.actions.decideHost(target, decision);
      });
      buttons.append(b);
    }
    const el = h(
      "div",
      { testid: "network-prompt", className: "network-prompt", role: "alert", "data-target": target },
      h("div", {}, h("strong", {}, forFetch ? "Fetch needs a host not on the list: " : "Network blocked: "), h("code", {}, target)),
      h("div", { className: "network-reason" }, reason),
      buttons,
    );
    this.hostPrompts.set(target, el);
    // A fetch's question sits in its card: the fetch waits on it, and the answer stays with it.
    if (fetchCard) {
      fetchCard.ask(el);
      this.scroll();
    } else this.append(el);
  }

  private hostDecided(target: string, decision: HostDecision): void {
    const el = this.hostPrompts.get(target);
    this.hostPrompts.delete(target);
    const forFetch = this.fetchHosts.delete(target);
    const text: Record<HostDecision, string> = {
      allow_once: forFetch ? `${target} may be reached by this fetch.` : `${target} may be reached by the next run.`,
      allow_for_session: `${target} is allowed in this conversation.`,
      allow_always: `${target} is allowed from now on.`,
      deny: `${target} stays blocked.`,
    };
    if (el) {
      el.querySelector(".network-actions")?.replaceWith(h("div", { className: "network-reason" }, text[decision]));
      el.setAttribute("data-decided", decision);
    } else {
      this.notice(text[decision]);
    }
  }

  /** A picture the model asked to look at (`view_image`), or why it could not. */
  private viewed(path: string, error: string | null, image: SentImage | null, size?: string): HTMLElement {
    const dims = image ? `${image.width}×${image.height}` : size;
    const line = error
      ? `Could not show ${renderVisible(path)} to the model: ${renderVisible(error)}`
      : `The model looked at ${renderVisible(path)}${dims ? ` (${dims})` : ""}`;
    const el = h("div", { testid: "viewed", className: `viewed${error ? " failed" : ""}` }, h("p", { className: "viewed-line" }, icon("picture", 14), h("span", {}, line)));
    if (image) el.append(this.pictureOf(image));
    this.append(el);
    return el;
  }

  /** Older cells keep their (bounded) text but fold their output away to keep the page light. */
  private collapseOld(): void {
    const cells = [...this.cells.values()];
    cells.forEach((c, i) => {
      if (i < cells.length - OPEN_CELLS && c.state !== "running") c.el.setAttribute("data-collapsed", "true");
    });
  }
}
