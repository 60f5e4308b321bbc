import "./styles.css";
import { connect, driveScenario, type Api } from "./api";
import { App } from "./app";
import { recoveryScreen } from "./views/recovery";
import { loadHighlighter } from "./lib/highlight";
import { rehearseApprovalDialog } from "./views/approval";
import { applyPrefs, currentPrefs } from "./lib/prefs";
import { installShortcuts } from "./lib/shortcuts";

// Theme and text size before anything is drawn, so a dark choice never flashes light.
applyPrefs(currentPrefs());

async function boot(): Promise<void> {
  const root = document.getElementById("app");
  if (!root) return;
  let api: Api;
  try {
    api = await connect();
  } catch (e) {
    root.textContent = `IronClaw could not start: ${e instanceof Error ? e.message : String(e)}`;
    document.body.dataset["ready"] = "true";
    return;
  }
  // A damaged history: the recovery screen first; the app starts once a way out has worked.
  let recovered: string | null = null;
  const state = await api.startupState().catch(() => ({ historyDamage: null }));
  if (state.historyDamage) {
    const damage = state.historyDamage;
    await new Promise<void>((resolve) => {
      root.replaceChildren(recoveryScreen(api, damage, (outcome) => {
        recovered = outcome.summary;
        resolve();
      }));
      document.body.dataset["ready"] = "true";
    });
  }
  const app = new App(api, root);
  installShortcuts((action) => app.shortcut(action));
  try {
    await app.start();
  } catch (e) {
    root.textContent = `IronClaw could not start: ${String(e)}`;
  }
  // What was found wrong at start (a vanished history, a tampered audit log), shown once.
  const notices = await api.startupNotices().catch(() => []);
  const said = [recovered, ...notices.map((n) => n.message)].filter((m): m is string => !!m);
  if (said.length > 0) app.chat.banner(said.join(" · "), "Dismiss", () => {});
  document.body.dataset["ready"] = "true";
  performance.mark("ironclaw-ready"); // for startup measurements (ms since navigation start)
  void driveScenario();
  void api.appReady().catch(() => {});
  // Warm the highlighter after first paint so the first code block doesn't wait for it; then
  // lay out an unseen approval dialog, so the first real one doesn't pay for first-time work.
  setTimeout(() => {
    loadHighlighter()
      .then(rehearseApprovalDialog)
      .catch((e: unknown) => console.warn("highlighter or approval dialog rehearsal failed", e));
  }, 300);
}

void boot();
