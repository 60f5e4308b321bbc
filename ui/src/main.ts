import "./styles.css";
import { connect, inTauri } from "./api";
import { App } from "./app";
import { recoveryScreen } from "./views/recovery";
import { loadHighlighter } from "./lib/highlight";

async function boot(): Promise<void> {
  const root = document.getElementById("app");
  if (!root) return;
  const api = await connect();
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
  // Ctrl/Cmd+K: search conversations; Ctrl/Cmd+N: new conversation.
  document.addEventListener("keydown", (ev) => {
    if (!(ev.ctrlKey || ev.metaKey) || ev.altKey || document.querySelector("dialog[open]")) return;
    const k = ev.key.toLowerCase();
    if (k === "k") document.querySelector<HTMLElement>('[data-testid="conversation-search"]')?.focus();
    else if (k === "n") document.querySelector<HTMLElement>('[data-testid="new-conversation"]')?.click();
    else return;
    ev.preventDefault();
  });
  if (!inTauri()) {
    const scenario = new URLSearchParams(location.search).get("scenario");
    if (scenario) void import("./api/fake-demo").then((m) => m.drive(scenario));
  }
  void api.appReady().catch(() => {});
  // Warm the highlighter after first paint so the first code block doesn't wait for it.
  setTimeout(() => void loadHighlighter().catch(() => {}), 300);
}

void boot();
