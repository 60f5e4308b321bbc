// Settings: model/provider, sandbox profile (with its limits), approval policy, saved rules.

import type { ProfileInfo } from "../bindings/ProfileInfo";
import type { Settings } from "../bindings/Settings";
import type { Api } from "../api";
import { errorText } from "../api";
import { formatBytes, formatDuration, h } from "../lib/dom";
import { describeHidden, markInvisible } from "../lib/invisible";
import { appearanceSection } from "./appearance";
import { mcpSection } from "./mcp-settings";
import type { ApprovalPolicy } from "../bindings/ApprovalPolicy";
import { POLICIES } from "./policies";
import { ProviderFields, field } from "./provider";


export interface SettingsActions {
  close(): void;
  runDoctor(): void;
  saved(settings: Settings): void;
}

export function profileLimits(p: ProfileInfo): string {
  const net = p.network === "none" ? "no network" : `network: ${p.network}`;
  const wall = p.runtime === "runsc" ? "gVisor required" : p.runtime === "auto" ? "gVisor where Docker has it" : "runc (no second kernel)";
  return `${formatBytes(Number(p.memoryBytes))} memory · ${p.cpus} CPU · ${p.pids} processes · ${formatDuration(Number(p.timeoutMs))} limit · ${net} · ${wall}`;
}

/** Lines a saved rule shows before "Show all": enough to recognise it, short enough for a list. */
export const RULE_PREVIEW_LINES = 3;

/** A saved "always allow" rule's whole code: every line (collapsed past a few, with a button to
 *  expand), every invisible character shown as a token, as the approval dialog shows it. */
export function ruleCode(code: string): HTMLElement {
  const text = code.replace(/\n+$/, "");
  const lines = text.split("\n").length;
  const pre = h("pre", { testid: "rule-code", className: "rule-code", tabindex: 0, "aria-label": "Code this rule allows" }, h("code", {}, text));
  markInvisible(pre);
  const hidden = describeHidden(code);
  const parts: (HTMLElement | null)[] = [hidden ? h("p", { testid: "rule-hidden-warning", className: "hidden-warning" }, hidden) : null, pre];
  if (lines > RULE_PREVIEW_LINES) {
    pre.classList.add("collapsed");
    pre.style.setProperty("--preview-lines", String(RULE_PREVIEW_LINES));
    const toggle = h("button", { testid: "rule-expand", className: "btn-link rule-expand", type: "button", "aria-expanded": "false" }, `Show all ${lines} lines`);
    toggle.addEventListener("click", () => {
      const collapsed = pre.classList.toggle("collapsed");
      toggle.textContent = collapsed ? `Show all ${lines} lines` : "Show less";
      toggle.setAttribute("aria-expanded", String(!collapsed));
    });
    parts.push(toggle);
  }
  return h("div", { className: "rule-body" }, ...parts);
}

export async function openSettings(api: Api, conversationId: string | null, actions: SettingsActions): Promise<HTMLElement> {
  const [settings, profiles, rules] = await Promise.all([
    api.getSettings(),
    api.listProfiles().catch(() => [] as ProfileInfo[]),
    conversationId ? api.listRules(conversationId).catch(() => []) : Promise.resolve([]),
  ]);
  const provider = new ProviderFields({ kind: "settings-provider-kind", baseUrl: "settings-base-url", model: "settings-model", apiKey: "settings-api-key", moreModels: "settings-more-models" }, settings);

  const profile = h("select", { testid: "settings-profile", className: "input" });
  // The name only: the limits are spelled out under the list, where they can wrap (a long
  // option label was cut off by the control's width).
  for (const p of profiles) profile.append(h("option", { value: p.name }, `${p.name}${p.isDefault ? " (default)" : ""}`));
  profile.value = settings.defaultProfile ?? profiles.find((p) => p.isDefault)?.name ?? profiles[0]?.name ?? "";
  const limits = h("p", { className: "field-hint", testid: "settings-profile-limits" });
  const showLimits = () => {
    const p = profiles.find((x) => x.name === profile.value);
    limits.textContent = p ? profileLimits(p) : "";
  };
  profile.addEventListener("change", showLimits);
  showLimits();

  // Quitting stops them (see src-tauri/src/quit.rs): said here so it is never a surprise.
  // Filled in when Docker answers; Settings does not wait for it.
  const sandboxes = h("p", { className: "field-hint", testid: "settings-sandboxes-running" });
  api.runningSandboxes().then(
    (n) => (sandboxes.textContent = `Sandboxes running now: ${n} (stopped when you quit)`),
    () => (sandboxes.textContent = "Sandboxes running now: unknown (Docker did not answer); all are stopped when you quit"),
  );

  // Undo history: empty means sandbox.yaml's cap, shown as the placeholder. In GiB, the unit
  // the caps are sized in.
  const GIB = 1024 ** 3;
  const gib = (bytes: number) => String(Math.round((bytes / GIB) * 100) / 100);
  const undoInput = (testid: string, value: number | null) => {
    const input = h("input", { testid, className: "input", type: "number", min: "0.01", step: "0.5", inputmode: "decimal" });
    if (value != null) input.value = gib(value);
    return input;
  };
  const undoKeep = undoInput("settings-undo-keep", settings.undoKeepBytes);
  const undoTotal = undoInput("settings-undo-keep-total", settings.undoKeepTotalBytes);
  const undoHint = h("p", { className: "field-hint", testid: "settings-undo-usage" }, "Undo history: …");
  const showUsage = () =>
    api.undoUsage().then(
      (u) => {
        undoKeep.placeholder = `${gib(u.policyKeepBytes)} (sandbox.yaml)`;
        undoTotal.placeholder = `${gib(u.policyKeepTotalBytes)} (sandbox.yaml)`;
        undoHint.textContent = `Undo keeps ${formatBytes(u.keptBytes)} of file copies now, at most ${formatBytes(u.keepBytes)} per conversation and ${formatBytes(u.keepTotalBytes)} in all. Past either, the oldest runs stop being undoable first. Empty: sandbox.yaml's value.`;
      },
      (e) => (undoHint.textContent = `Undo history: ${errorText(e)}`),
    );
  void showUsage();
  /** GiB typed → bytes; empty → null (sandbox.yaml's). */
  const undoBytes = (input: HTMLInputElement): number | null => {
    const text = input.value.trim();
    if (text === "") return null;
    const n = Number(text);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${input === undoKeep ? "Per conversation" : "All conversations"}: enter a size in GiB (e.g. 2), or leave it empty for sandbox.yaml's.`);
    return Math.round(n * GIB);
  };

  const policy = h("select", { testid: "settings-policy", className: "input" });
  for (const p of POLICIES) policy.append(h("option", { value: p.value }, p.label));
  policy.value = settings.defaultPolicy;

  const notify = h("input", { testid: "settings-notifications", type: "checkbox" });
  notify.checked = settings.notifications;

  const ruleList = h("ul", { className: "rules" });
  const renderRules = (list: typeof rules) => {
    ruleList.replaceChildren(
      ...list.map((r) => {
        const revoke = h("button", { testid: "rule-revoke", className: "btn btn-small", type: "button" }, "Revoke");
        revoke.addEventListener("click", async () => {
          if (!conversationId) return;
          try {
            await api.revokeRule(conversationId, r.codeHash);
            renderRules(await api.listRules(conversationId));
          } catch (e) {
            status.textContent = errorText(e);
          }
        });
        return h("li", { testid: "rule-item", className: "rule", "data-code-hash": r.codeHash }, h("span", { className: "chip" }, r.language), ruleCode(r.code), revoke);
      }),
    );
    if (list.length === 0) ruleList.append(h("li", { className: "muted" }, conversationId ? "No “always allow” rules in this conversation." : "Open a conversation to see its rules."));
  };
  renderRules(rules);

  const status = h("p", { className: "settings-status", role: "status" });
  const save = h("button", { testid: "settings-save", className: "btn btn-primary", type: "button" }, "Save");
  const close = h("button", { testid: "settings-close", className: "btn", type: "button" }, "Close");
  const doctor = h("button", { testid: "run-doctor", className: "btn btn-quiet", type: "button" }, "Run system check…");
  doctor.addEventListener("click", () => actions.runDoctor());
  close.addEventListener("click", () => actions.close());
  save.addEventListener("click", async () => {
    save.disabled = true;
    status.textContent = "Saving…";
    status.classList.remove("error");
    try {
      const base: Settings = {
        ...settings,
        defaultProfile: profile.value || settings.defaultProfile,
        defaultPolicy: policy.value as ApprovalPolicy,
        notifications: notify.checked,
        undoKeepBytes: undoBytes(undoKeep),
        undoKeepTotalBytes: undoBytes(undoTotal),
      };
      const { settings: saved, check } = await provider.save(api, base);
      // The policy applies to new conversations and, from now on, to the open one.
      if (conversationId && saved.defaultPolicy !== settings.defaultPolicy) await api.setPolicy(conversationId, saved.defaultPolicy);
      Object.assign(settings, saved);
      status.textContent = check.ok ? `Saved. ${check.message}` : `Saved, but the model did not answer: ${check.message}`;
      status.classList.toggle("error", !check.ok);
      actions.saved(saved);
      void showUsage();
    } catch (e) {
      status.textContent = errorText(e);
      status.classList.add("error");
    } finally {
      save.disabled = false;
      // Disabling the focused button dropped focus to the page; put it back so keys (Escape,
      // Tab) keep working inside Settings.
      if (!el.contains(document.activeElement)) save.focus();
    }
  });

  const el = h(
    "section",
    { testid: "settings-screen", className: "screen settings", role: "dialog", "aria-modal": "true", "aria-label": "Settings" },
    h(
      "div",
      { className: "screen-card" },
      h("header", { className: "screen-head settings-head" }, h("h1", {}, "Settings"), h("span", { className: "spacer" }), doctor),
      h("section", {}, h("h2", {}, "Model"), provider.el),
      h("section", {}, h("h2", {}, "Sandbox"), field("Profile", profile), limits, sandboxes),
      h("section", {}, h("h2", {}, "Undo history"), field("Per conversation (GiB)", undoKeep), field("All conversations (GiB)", undoTotal), undoHint),
      h("section", {}, h("h2", {}, "Approvals"), field("Policy for new conversations and this one", policy), h("label", { className: "check-line" }, notify, " Desktop notifications for approvals and long runs while IronClaw is in the background"), h("h3", {}, "Always-allow rules"), ruleList),
      mcpSection(api),
      appearanceSection(),
      // Sticky: Save, Close and what saving said stay in view however far the form scrolls.
      h("footer", { className: "settings-foot" }, status, close, save),
    ),
  );
  // On the document, not the screen: wherever focus went (a disabled button drops it to the
  // page), Escape closes Settings. An approval dialog above it handles its own Escape first.
  let shown = false;
  const onKey = (ev: KeyboardEvent) => {
    if (!el.isConnected) {
      if (shown) document.removeEventListener("keydown", onKey);
      return;
    }
    shown = true;
    if (ev.key !== "Escape" || ev.defaultPrevented) return;
    if (ev.target instanceof Element && ev.target.closest("dialog[open]")) return;
    document.removeEventListener("keydown", onKey);
    actions.close();
  };
  document.addEventListener("keydown", onKey);
  return el;
}
