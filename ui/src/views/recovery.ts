// The recovery screen: shown instead of the app when the history file is damaged. It says what
// is damaged (the file, what SQLite said), the one copy that was kept (path copyable), and
// offers the two ways out. Either one replaces the history and the app goes on without a
// restart; the damaged copy is never touched.

import type { HistoryDamage } from "../bindings/HistoryDamage";
import type { RecoveryOutcome } from "../bindings/RecoveryOutcome";
import type { Api } from "../api";
import { errorText } from "../api";
import { h } from "../lib/dom";

export type WayOut = "startFresh" | "recover";

/** Resolves with the outcome once a way out has worked (the screen stays up until then). */
export function recoveryScreen(api: Api, damage: HistoryDamage, done: (outcome: RecoveryOutcome) => void): HTMLElement {
  const backup = h("input", { testid: "recovery-backup-path", className: "copyable", readonly: true, value: damage.backup, "aria-label": "Copy of the damaged history" });
  backup.value = damage.backup;
  backup.addEventListener("focus", () => backup.select());
  const copy = h("button", { testid: "recovery-copy-path", className: "btn btn-small", type: "button" }, "Copy path");
  copy.addEventListener("click", () => {
    backup.select();
    void navigator.clipboard?.writeText(damage.backup).catch(() => document.execCommand("copy"));
  });
  // The likelier way out is the primary one: when the file is no database at all, there is
  // nothing to read back, and Start fresh is what a person wants.
  const fresh = h("button", { testid: "recovery-start-fresh", className: `btn btn-large${damage.notADatabase ? " btn-primary" : ""}`, type: "button" }, "Start fresh");
  const recover = h("button", { testid: "recovery-recover", className: `btn btn-large${damage.notADatabase ? "" : " btn-primary"}`, type: "button" }, "Recover what can be read");
  const status = h("p", { testid: "recovery-status", className: "check-detail", role: "status" });
  const card = h(
    "div",
    { className: "screen-card" },
    h("h1", {}, "Your history could not be opened"),
    h("p", {}, "IronClaw's conversation history is damaged, so it was not opened. Nothing was deleted."),
    h("dl", { className: "recovery-facts" },
      h("dt", {}, "Damaged file"),
      h("dd", {}, h("code", { testid: "recovery-path" }, damage.path)),
      h("dt", {}, "What SQLite said"),
      h("dd", {}, h("code", { testid: "recovery-problem" }, damage.problem)),
      h("dt", {}, "Copy kept"),
      h("dd", { className: "copy-row" }, backup, copy),
    ),
    h("p", {}, damage.notADatabase
      ? "The file is not a database at all, so there is probably nothing to recover from it."
      : "Recovery copies every conversation and message SQLite can still read into a new history."),
    h("div", { className: "actions" }, ...(damage.notADatabase ? [fresh, recover] : [recover, fresh])),
    h("p", { className: "check-detail" }, "Start fresh begins an empty history. Either way the copy above stays where it is."),
    status,
  );
  const root = h("section", { testid: "recovery-screen", className: "screen recovery", role: "alert" }, card);
  const run = async (way: WayOut) => {
    fresh.disabled = true;
    recover.disabled = true;
    status.textContent = way === "recover" ? "Reading what can be read…" : "Starting a fresh history…";
    try {
      const outcome = way === "recover" ? await api.recoverHistory() : await api.startFreshHistory();
      status.textContent = outcome.summary;
      done(outcome);
    } catch (e) {
      status.textContent = errorText(e);
      fresh.disabled = false;
      recover.disabled = false;
    }
  };
  fresh.addEventListener("click", () => void run("startFresh"));
  recover.addEventListener("click", () => void run("recover"));
  return root;
}
