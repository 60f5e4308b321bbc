// Wires the screens together around one open conversation. Agent events for that conversation
// arrive on its Channel; approvals go to the queue (the only place decisions come from).

import type { AgentEvent } from "./bindings/AgentEvent";
import type { ConversationView } from "./bindings/ConversationView";
import type { ApprovalRequest } from "./bindings/ApprovalRequest";
import type { Decision } from "./bindings/Decision";
import type { DoctorReport } from "./bindings/DoctorReport";
import type { ImageInput } from "./bindings/ImageInput";
import type { Api } from "./api";
import { errorKind, errorText } from "./api";
import { h } from "./lib/dom";
import { needsDoctor } from "./lib/readiness";
import { currentPrefs, stepZoom, updatePrefs } from "./lib/prefs";
import type { ShortcutAction } from "./lib/shortcuts";
import { ApprovalQueue } from "./views/approval";
import { ChatView } from "./views/chat";
import { doctorScreen } from "./views/doctor";
import { showHelp } from "./views/help";
import { LogViewer } from "./views/logviewer";
import { openSettings } from "./views/settings";
import { Sidebar } from "./views/sidebar";
import { WorkspacePanel } from "./views/workspace";

interface ToastAction {
  label: string;
  testid: string;
  run: () => void;
}

const DOCTOR_WAIT_MS = 400;


export class App {
  readonly sidebar: Sidebar;
  readonly chat: ChatView;
  readonly queue: ApprovalQueue;
  readonly workspace: WorkspacePanel;
  private readonly shell: HTMLElement;
  private readonly toasts: HTMLElement;
  private currentId: string | null = null;
  private openSeq = 0;
  private overlay: HTMLElement | null = null;
  private listening = false;

  constructor(
    private readonly api: Api,
    private readonly root: HTMLElement,
  ) {
    this.sidebar = new Sidebar(api, {
      select: (id, match) => void this.open(id, match),
      created: (c) => void this.open(c.id),
      deleted: (id) => void this.afterDelete(id),
      openSettings: () => void this.showSettings(),
      reviewPending: () => void this.reviewAnyPending(),
      toast: (m, a) => this.toast(m, a),
    });
    this.chat = new ChatView({
      send: (text, images) => this.send(text, images),
      branch: (messageId, text, images) => this.branch(messageId, text, images),
      readSentImage: (messageId, ordinal) => this.api.readMessageImage(messageId, ordinal),
      readImage: (path) => (this.currentId ? this.api.readWorkspaceImage(this.currentId, path) : Promise.reject("No conversation is open.")),
      fixFor: (e) => this.fixFor(e),
      stop: () => void this.cancel(),
      openLog: (id) => void new LogViewer(api, id, () => this.chat.focusInput()).open(),
      openExternal: (url) => void api.openExternal(url).catch((e) => this.failed(e)),
      reviewApproval: (id) => this.queue.open(id || undefined),
      toggleWorkspace: () => this.workspace.toggle(),
      modelMenu: () => (this.currentId ? this.api.modelMenu(this.currentId) : Promise.reject("No conversation is open.")),
      useModel: (o) => {
        if (!this.currentId) return;
        void this.api.useModel(this.currentId, o.provider, o.model).catch((e) => this.failed(e, "Could not switch the model"));
      },
      attach: (folders) => {
        const id = this.currentId;
        if (!id) return;
        const waiting = `Choose ${folders ? "folders" : "files"} in the dialog; they are copied into this conversation's workspace…`;
        void this.chat.attach(waiting, (p) => this.api.attachPicked(id, folders, p)).then(() => this.filesArrived(id));
      },
      undo: (executionId, force) => {
        if (!this.currentId) return;
        void this.api.undoRun(this.currentId, executionId, force).catch((e) => this.failed(e, "Could not undo"));
      },
      redo: (executionId) => {
        if (!this.currentId) return;
        void this.api.redoRun(this.currentId, executionId).catch((e) => this.failed(e, "Could not redo"));
      },
      rewind: (executionId) => {
        if (!this.currentId) return;
        void this.api.rewindTo(this.currentId, executionId).catch((e) => this.failed(e, "Could not rewind"));
      },
      changeDetail: (executionId, path) => this.api.runChange(executionId, path),
      decideHost: (target, decision) => {
        if (!this.currentId) return;
        void this.api.decideHost(this.currentId, target, decision).catch((e) => this.failed(e));
      },
    });
    this.queue = new ApprovalQueue((req, decision, confirmed, fresh) => this.decide(req, decision, confirmed, fresh), {
      changed: (pending, open) => {
        this.chat.setPending(pending.length, open);
        // A closed dialog leaves focus nowhere; give it back to the composer.
        if (!open && (document.activeElement === document.body || !document.activeElement)) this.chat.focusInput();
      },
      notice: (m) => this.chat.notice(m, true),
    });
    this.workspace = new WorkspacePanel(api, () => this.workspace.toggle(false));
    this.toasts = h("div", { className: "toasts", role: "status", "aria-live": "polite" });
    this.shell = h("div", { className: "shell" }, this.sidebar.el, this.chat.el, this.workspace.el);
  }

  /**
   * First screen: the doctor when Docker or the image is missing or no model can be found, else
   * the chat. The doctor's checks can be slow (Docker pings, Ollama detection), so the chat does
   * not wait for them longer than DOCTOR_WAIT_MS. A late "not ready" still takes the person to
   * the doctor if they have not started using the chat yet, else it becomes a banner.
   */
  async start(): Promise<void> {
    let touched = false;
    const touch = () => {
      touched = true;
    };
    document.addEventListener("pointerdown", touch, { once: true, capture: true });
    document.addEventListener("keydown", touch, { once: true, capture: true });
    const doctor = this.api.doctor().catch(() => null);
    const early = await Promise.race([doctor, new Promise<"late">((r) => setTimeout(() => r("late"), DOCTOR_WAIT_MS))]);
    if (early !== "late" && early && needsDoctor(early)) {
      await this.showDoctor(early);
      return;
    }
    await this.showShell();
    if (early === "late") {
      void doctor.then((r) => {
        if (!r || !needsDoctor(r)) return;
        if (!touched) {
          void this.showDoctor(r);
          return;
        }
        const why = r.docker.state !== "ok" ? "Docker is not ready, so code cannot run yet." : r.image.state !== "ready" ? "The sandbox image is not prepared yet." : "No model is set up yet.";
        this.chat.banner(why, "Open system check", () => void this.showDoctor());
      });
    }
  }

  async showDoctor(report?: DoctorReport): Promise<void> {
    const screen = await doctorScreen(this.api, { continue: () => void this.showShell() }, report);
    this.root.replaceChildren(screen, this.toasts);
  }

  async showShell(): Promise<void> {
    this.root.replaceChildren(this.shell, this.toasts);
    if (!this.listening) await this.listen();
    await this.sidebar.refresh("");
    const pending = await this.api.pendingApprovals().catch(() => []);
    this.sidebar.setPendingTotal(pending.length);
    if (this.currentId && this.sidebar.conversations.some((c) => c.id === this.currentId)) return;
    const first = this.sidebar.conversations[0];
    if (first) await this.open(first.id);
    else {
      const c = await this.api.createConversation();
      await this.sidebar.refresh("");
      await this.open(c.id);
    }
  }

  /** App-wide events, subscribed once for the life of the window. */
  private async listen(): Promise<void> {
    this.listening = true;
    await Promise.all([
      this.api.onPendingApprovals((e) => {
        this.sidebar.setPendingTotal(e.count);
        void this.sidebar.refresh(); // per-conversation counts
      }),
      this.api.onFocusApproval((e) => void this.focusApproval(e.conversationId, e.approvalId)),
      this.api.onExecutionFiles((e) => {
        if (e.conversationId !== this.currentId) return;
        void this.showImages(e.conversationId, e.executionId, e.files.filter((f) => f.kind === "image").map((f) => f.path));
        if (this.workspace.visible) void this.workspace.refresh();
      }),
      this.api.onDragHover((over) => this.chat.dragHover(over && this.currentId !== null)),
      this.api.onFilesDropped((e) => {
        const id = this.currentId;
        if (!id) return;
        const what = e.names.length === 1 ? (e.names[0] ?? "1 item") : `${e.names.length} items`;
        void this.chat.attach(`Copying ${what}…`, (p) => this.api.attachDropped(id, e.dropId, p)).then(() => this.filesArrived(id));
      }),
      this.api.onConversationUpdated((c) => {
        this.sidebar.upsert(c);
        if (c.id === this.currentId) this.chat.setTitle(c.title);
      }),
    ]);
  }


  private filesArrived(id: string): void {
    if (id === this.currentId && this.workspace.visible) void this.workspace.refresh();
  }

  get conversationId(): string | null {
    return this.currentId;
  }

  async open(id: string, match?: string): Promise<void> {
    const seq = ++this.openSeq;
    this.currentId = id;
    this.sidebar.setCurrent(id);
    // Live events may overtake the view itself; hold them until the view is on screen.
    let early: AgentEvent[] | null = [];
    try {
      const view = await this.api.openConversation(id, (e) => {
        if (seq !== this.openSeq) return;
        if (early) early.push(e);
        else this.onEvent(e);
      });
      if (seq !== this.openSeq) return;
      this.chat.load(view);
      void this.restoreImages(id, view.items);
      this.queue.reset(view.pendingApprovals);
      const held = early;
      early = null;
      for (const e of held) this.onEvent(e);
      this.workspace.setConversation(id);
      if (match) this.chat.showMatch(match);
      if (!this.queue.openId) this.chat.focusInput();
    } catch (e) {
      this.failed(e, "Could not open the conversation");
    }
  }

  private onEvent(e: AgentEvent): void {
    this.chat.handle(e);
    switch (e.type) {
      case "approvalRequested": {
        const { type: _t, ...req } = e;
        this.queue.add(req satisfies ApprovalRequest);
        break;
      }
      case "approvalResolved":
        this.queue.resolved(e.approvalId);
        break;
      case "decisionRejected":
        this.queue.rejected(e.approvalId, e.message, e.stillPending);
        break;
      case "executionEnded":
      case "runUndone":
      case "runRedone":
      case "rewound":
        if (this.workspace.visible) void this.workspace.refresh();
        break;
      case "approvalExpired":
        this.queue.resolved(e.approvalId);
        this.chat.setCardState(e.approvalId, "expired");
        break;
      default:
        break;
    }
  }

  /** Edit → a branch at that message, opened, with the edited message sent to it. */
  private async branch(messageId: string, text: string, images: ImageInput[]): Promise<void> {
    if (!this.currentId) return;
    const branch = await this.api.branchConversation(this.currentId, messageId);
    await this.sidebar.refresh("");
    await this.open(branch.id);
    this.chat.addUser(text, undefined, [], images.map((i) => ({ name: i.name, dataUrl: `data:image/png;base64,${i.data}`, input: i })));
    await this.api.sendMessage(branch.id, text, images.length ? images : null);
  }

  private async send(text: string, images: ImageInput[]): Promise<void> {
    if (!this.currentId) return;
    await this.api.sendMessage(this.currentId, text, images.length ? images : null);
  }

  private decide(req: ApprovalRequest, decision: Decision, confirmed: boolean, fresh = false): Promise<void> {
    const id = this.currentId;
    if (!id) return Promise.reject("No conversation is open.");
    return this.api.decide(id, req.approvalId, req.codeHash, decision, confirmed, fresh);
  }

  private async cancel(): Promise<void> {
    if (!this.currentId) return;
    try {
      await this.api.cancel(this.currentId);
    } catch (e) {
      this.failed(e);
    }
  }

  private async showImages(conversationId: string, executionId: string, paths: string[]): Promise<void> {
    for (const path of paths) {
      try {
        const url = await this.api.readWorkspaceImage(conversationId, path);
        if (conversationId === this.currentId) this.chat.cell(executionId)?.addImage(path, url);
      } catch (e) {
        this.chat.notice(`Could not show ${path}: ${errorText(e)}`);
      }
    }
  }

  /** Images earlier runs wrote, as the history recorded them; a deleted one gets a placeholder. */
  private async restoreImages(conversationId: string, items: ConversationView["items"]): Promise<void> {
    for (const item of items) {
      if (item.type !== "execution") continue;
      for (const path of item.images) {
        if (conversationId !== this.currentId) return;
        try {
          const image = await this.api.readRunImage(item.executionId, path);
          const cell = conversationId === this.currentId ? this.chat.cell(item.executionId) : undefined;
          if (image.state === "shown") cell?.addImage(path, image.dataUrl);
          else if (image.state === "gone") cell?.addMissingImage(path, "No longer in the workspace");
          else cell?.addMissingImage(path, `Not shown: ${image.reason}`);
        } catch (e) {
          this.chat.cell(item.executionId)?.addMissingImage(path, `Not shown: ${errorText(e)}`);
        }
      }
    }
  }

  /** A notification body was clicked: open that conversation and its dialog. */
  async focusApproval(conversationId: string, approvalId: string): Promise<void> {
    this.closeOverlay();
    if (conversationId !== this.currentId) await this.open(conversationId);
    this.queue.open(approvalId);
  }

  private async reviewAnyPending(): Promise<void> {
    if (this.queue.requests.length > 0) {
      this.queue.open();
      return;
    }
    const all = await this.api.pendingApprovals().catch(() => []);
    const first = all[0];
    if (first) await this.focusApproval(first.conversationId, first.request.approvalId);
  }

  private async afterDelete(id: string): Promise<void> {
    if (id !== this.currentId) return;
    this.currentId = null;
    this.queue.destroy();
    const next = this.sidebar.conversations[0];
    if (next) await this.open(next.id);
    else {
      const c = await this.api.createConversation();
      await this.sidebar.refresh("");
      await this.open(c.id);
    }
  }

  private async showSettings(): Promise<void> {
    try {
      const screen = await openSettings(this.api, this.currentId, {
        close: () => this.closeOverlay(),
        runDoctor: () => {
          this.closeOverlay();
          void this.showDoctor();
        },
        saved: () => {},
      });
      this.closeOverlay();
      this.overlay = screen;
      this.root.append(screen);
      screen.querySelector<HTMLElement>("select, input")?.focus();
    } catch (e) {
      this.failed(e, "Could not open settings");
    }
  }

  /** A keyboard shortcut (lib/shortcuts.ts). None of them decides an approval. */
  shortcut(action: ShortcutAction): void {
    const zoom = currentPrefs().zoom;
    switch (action) {
      case "help":
        showHelp();
        return;
      case "zoomIn":
        updatePrefs({ zoom: stepZoom(zoom, 1) });
        return;
      case "zoomOut":
        updatePrefs({ zoom: stepZoom(zoom, -1) });
        return;
      case "zoomReset":
        updatePrefs({ zoom: 1 });
        return;
      case "quit":
        void this.api.quitApp().catch((e) => this.failed(e, "Could not quit"));
        return;
      case "newConversation":
      case "search":
      case "settings":
      case "pendingApproval":
        break;
    }
    // The rest act on the chat; the first-run screen has none of it yet.
    if (!this.shell.isConnected) return;
    switch (action) {
      case "newConversation":
        this.closeOverlay();
        this.sidebar.el.querySelector<HTMLElement>('[data-testid="new-conversation"]')?.click();
        return;
      case "search": {
        this.closeOverlay();
        const search = this.sidebar.el.querySelector<HTMLInputElement>('[data-testid="conversation-search"]');
        search?.focus();
        search?.select();
        return;
      }
      case "settings":
        if (!this.overlay) void this.showSettings();
        return;
      case "pendingApproval":
        // Opens the dialog with focus on the code; deciding still takes its own button.
        this.closeOverlay();
        void this.reviewAnyPending();
        return;
    }
  }

  private closeOverlay(): void {
    const overlay = this.overlay;
    const active = document.activeElement;
    const hadFocus = !!overlay && !!active && overlay.contains(active);
    overlay?.remove();
    this.overlay = null;
    // Focus inside what closed would go with it, and keys typed next would go nowhere.
    if (overlay && (hadFocus || !document.activeElement || document.activeElement === document.body) && this.shell.isConnected) {
      this.chat.focusInput();
    }
  }

  /** Where a failed command points, by its kind: the system check for Docker and the image,
   * Settings for the model, the conversation again for an agent that stopped. */
  fixFor(e: unknown): ToastAction | undefined {
    switch (errorKind(e)) {
      case "docker":
      case "image":
        return { label: "Open system check", testid: "fix-doctor", run: () => void this.showDoctor() };
      case "model":
        return { label: "Model settings", testid: "fix-settings", run: () => void this.showSettings() };
      case "session_closed": {
        const id = this.currentId;
        return id ? { label: "Reopen", testid: "fix-reopen", run: () => void this.open(id) } : undefined;
      }
      default:
        return undefined;
    }
  }

  /** A failed command as a toast: what failed, the core's words, and the fix when there is one. */
  failed(e: unknown, what?: string): void {
    this.toast(what ? `${what}: ${errorText(e)}` : errorText(e), this.fixFor(e));
  }

  toast(message: string, action?: ToastAction): void {
    const btn = action ? h("button", { testid: action.testid, className: "btn-link", type: "button" }, action.label) : null;
    const t = h("div", { testid: "toast", className: "toast" }, h("span", {}, message), btn);
    btn?.addEventListener("click", () => {
      t.remove();
      action?.run();
    });
    this.toasts.append(t);
    setTimeout(() => t.remove(), 8000);
  }
}
