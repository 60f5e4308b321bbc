// The keyboard shortcuts overlay (F1, or "?" when not typing): a modal dialog listing
// lib/shortcuts.ts's table. It only shows text; nothing in it acts on the app.

import { h } from "../lib/dom";
import { SHORTCUT_LIST } from "../lib/shortcuts";

let open: HTMLDialogElement | null = null;

/** Opens the overlay (once); Escape or Close ends it and focus returns where it was. */
export function showHelp(onClosed?: () => void): HTMLDialogElement {
  if (open) return open;
  const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  const close = h("button", { testid: "help-close", className: "btn", type: "button" }, "Close");
  const rows = SHORTCUT_LIST.map((s) =>
    h(
      "tr",
      {},
      h("td", { className: "help-keys" }, ...s.keys.flatMap((k, i) => [i > 0 ? " + " : null, h("kbd", {}, k)])),
      h("td", {}, s.label),
    ),
  );
  const dlg = h(
    "dialog",
    { testid: "help-overlay", className: "help-overlay", "aria-labelledby": "help-title" },
    h("header", { className: "log-head" }, h("h2", { id: "help-title" }, "Keyboard shortcuts"), h("span", { className: "spacer" }), close),
    h("table", { className: "help-table" }, h("caption", { className: "visually-hidden" }, "Keys and what they do"), h("tbody", {}, ...rows)),
    h("p", { className: "field-hint" }, "No key approves code: a waiting request always needs a click (or Tab to its button and Enter) in its own dialog."),
  );
  const finish = () => {
    if (open !== dlg) return;
    if (dlg.open && typeof dlg.close === "function") dlg.close();
    open = null;
    dlg.remove();
    before?.focus();
    onClosed?.();
  };
  close.addEventListener("click", finish);
  dlg.addEventListener("close", finish);
  // jsdom has no native dialog: Escape by hand there; the real webview sends `cancel` + `close`.
  dlg.addEventListener("keydown", (ev) => {
    if (ev.key !== "Escape") return;
    ev.preventDefault();
    finish();
  });
  document.body.append(dlg);
  open = dlg;
  if (typeof dlg.showModal === "function") {
    try {
      dlg.showModal();
    } catch {
      dlg.setAttribute("open", "");
    }
  } else dlg.setAttribute("open", "");
  close.focus();
  return dlg;
}
