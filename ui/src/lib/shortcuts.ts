// Keyboard shortcuts: one table, used both to dispatch keys and to list them in the help
// overlay (views/help.ts), so the two cannot disagree.
//
// None of them decides an approval, and none is active while a modal dialog (the approval
// dialog above all) is open: the dialog owns the keyboard then, and its own rules apply
// (focus starts on the code, Enter outside a focused button does nothing, Escape closes
// without deciding). "Focus the pending approval" only opens that dialog.

export type ShortcutAction = "newConversation" | "search" | "settings" | "pendingApproval" | "help" | "zoomIn" | "zoomOut" | "zoomReset" | "quit";

export interface KeyLike {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
}

interface Binding {
  action: ShortcutAction;
  /** Ctrl (Cmd on macOS) must be held. */
  mod: boolean;
  shift?: boolean;
  /** `KeyboardEvent.key` values, lower-cased. */
  keys: readonly string[];
}

const BINDINGS: readonly Binding[] = [
  { action: "newConversation", mod: true, keys: ["n"] },
  { action: "search", mod: true, keys: ["k", "f"] },
  { action: "settings", mod: true, keys: [","] },
  { action: "pendingApproval", mod: true, shift: true, keys: ["a"] },
  // "+" is Shift+= on most layouts; both mean zoom in, as in browsers.
  { action: "zoomIn", mod: true, keys: ["=", "+"] },
  { action: "zoomOut", mod: true, keys: ["-", "_"] },
  { action: "zoomReset", mod: true, keys: ["0"] },
  { action: "quit", mod: true, keys: ["q"] },
  { action: "help", mod: false, keys: ["f1"] },
  { action: "help", mod: false, keys: ["?"] },
];

/** What the help overlay lists, in order. */
export const SHORTCUT_LIST: readonly { keys: string[]; label: string }[] = [
  { keys: ["Ctrl", "N"], label: "New conversation" },
  { keys: ["Ctrl", "K"], label: "Search conversations (Ctrl+F works too)" },
  { keys: ["Ctrl", ","], label: "Settings" },
  { keys: ["Ctrl", "Shift", "A"], label: "Show the approval that is waiting (it still needs your click)" },
  { keys: ["Ctrl", "="], label: "Larger text" },
  { keys: ["Ctrl", "-"], label: "Smaller text" },
  { keys: ["Ctrl", "0"], label: "Text at the system size" },
  { keys: ["Ctrl", "Q"], label: "Quit (the sandboxes are stopped)" },
  { keys: ["F1"], label: "This list (or ? when not typing)" },
  { keys: ["Esc"], label: "Close a dialog or panel without deciding anything" },
];

/** Whether `el` takes typed text, so a bare "?" belongs to it and is not a shortcut. */
export function isTyping(el: Element | null): boolean {
  if (!el) return false;
  if (el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) return true;
  if (el instanceof HTMLInputElement) return !["button", "checkbox", "radio", "submit", "reset", "range", "color", "file", "image"].includes(el.type);
  return el instanceof HTMLElement && el.isContentEditable === true;
}

/** The action `ev` asks for, or null. `typing`: focus is in a text field. */
export function matchShortcut(ev: KeyLike, typing: boolean): ShortcutAction | null {
  if (ev.altKey) return null;
  const key = ev.key.toLowerCase();
  const mod = ev.ctrlKey || ev.metaKey;
  for (const b of BINDINGS) {
    if (!b.keys.includes(key) || b.mod !== mod) continue;
    // "?" is typed with Shift on most layouts, and "+" too: Shift only matters where named.
    if (b.shift !== undefined && b.shift !== ev.shiftKey) continue;
    if (b.shift === undefined && b.mod && ev.shiftKey && !["+", "_"].includes(key)) continue;
    if (!b.mod && key === "?" && typing) return null;
    return b.action;
  }
  return null;
}

/** Whether a modal dialog (approval, log, image, help) has the keyboard now. */
export function modalOpen(doc: Document = document): boolean {
  return doc.querySelector("dialog[open]") !== null;
}

/**
 * Listens for the shortcuts on `doc` and calls `run` with the action. Returns the unsubscribe.
 * A key is taken (default prevented) only when it maps to an action and no dialog is open.
 */
export function installShortcuts(run: (action: ShortcutAction) => void, doc: Document = document): () => void {
  const onKey = (ev: KeyboardEvent) => {
    if (ev.defaultPrevented || ev.isComposing) return;
    const action = matchShortcut(ev, isTyping(doc.activeElement));
    if (!action || modalOpen(doc)) return;
    ev.preventDefault();
    run(action);
  };
  doc.addEventListener("keydown", onKey);
  return () => doc.removeEventListener("keydown", onKey);
}
