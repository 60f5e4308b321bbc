// The provider fields shared by the first-run screen and Settings. The API key goes from its
// field straight to `set_api_key` (the OS keyring): the field is cleared before the call and
// the key is never kept in any JS state.

import type { ProviderCheck } from "../bindings/ProviderCheck";
import type { ProviderKindName as ProviderKind } from "../bindings/ProviderKindName";
import type { Settings } from "../bindings/Settings";
import type { ToolModeName } from "../bindings/ToolModeName";
import type { Api } from "../api";
import { h } from "../lib/dom";

export interface ProviderTestIds {
  kind: string;
  baseUrl: string;
  model: string;
  apiKey: string;
  /** Settings only: the other models the chat's menu offers. */
  moreModels?: string;
}

const KINDS: { value: ProviderKind; label: string }[] = [
  { value: "ollama", label: "Ollama (on this computer)" },
  { value: "openai", label: "OpenAI-compatible endpoint" },
  { value: "anthropic", label: "Anthropic" },
];

const PLACEHOLDER_MODEL: Record<ProviderKind, string> = {
  ollama: "e.g. qwen2.5-coder:7b",
  openai: "e.g. gpt-4o-mini",
  anthropic: "e.g. claude-sonnet-4-5",
};

// Short enough to be read whole in the first run's two-column form; what an empty field means
// goes in the hint under it, which wraps.
const PLACEHOLDER_URL: Record<ProviderKind, string> = {
  ollama: "http://127.0.0.1:11434",
  openai: "e.g. http://localhost:8000/v1",
  anthropic: "Leave empty for the official API",
};

const URL_HINT: Record<ProviderKind, string> = {
  ollama: "",
  openai: "Leave empty for OpenAI itself.",
  anthropic: "",
};

export class ProviderFields {
  readonly el: HTMLElement;
  readonly kind: HTMLSelectElement;
  readonly baseUrl: HTMLInputElement;
  readonly model: HTMLInputElement;
  readonly apiKey: HTMLInputElement;
  readonly window: HTMLInputElement;
  readonly toolMode: HTMLSelectElement;
  readonly images: HTMLSelectElement;
  readonly moreModels: HTMLTextAreaElement | null;
  private readonly keyRow: HTMLElement;

  private readonly keyHint: HTMLElement;
  private readonly urlHint: HTMLElement;

  constructor(ids: ProviderTestIds, private readonly settings: Settings) {
    const keyStored = settings.provider?.hasApiKey ?? false;
    this.kind = h("select", { testid: ids.kind, className: "input", "aria-label": "Provider" });
    for (const k of KINDS) this.kind.append(h("option", { value: k.value }, k.label));
    this.baseUrl = h("input", { testid: ids.baseUrl, className: "input", type: "url", autocomplete: "off", spellcheck: "false" });
    this.model = h("input", { testid: ids.model, className: "input", type: "text", autocomplete: "off", spellcheck: "false" });
    this.apiKey = h("input", {
      testid: ids.apiKey, className: "input", type: "password", autocomplete: "off", spellcheck: "false",
      placeholder: keyStored ? "A key is stored — type to replace it" : "Paste your API key",
    });
    this.window = h("input", { testid: "provider-context-window", className: "input", type: "number", min: "1024", step: "1024", placeholder: "Known for the model", autocomplete: "off" });
    this.toolMode = h("select", { testid: "provider-tool-mode", className: "input", "aria-label": "How the model runs code" });
    for (const [value, label] of [["auto", "Find out (recommended)"], ["native", "Tool calls"], ["codeBlocks", "Code blocks (models without tool calling)"]]) {
      this.toolMode.append(h("option", { value }, label));
    }
    this.images = h("select", { testid: "provider-images", className: "input", "aria-label": "Whether the model reads pictures" });
    for (const [value, label] of [["auto", "Find out (recommended)"], ["yes", "Yes"], ["no", "No"]]) {
      this.images.append(h("option", { value }, label));
    }
    this.moreModels = ids.moreModels
      ? h("textarea", { testid: ids.moreModels, className: "input", rows: 3, spellcheck: "false", placeholder: "gpt-4o-mini\nanthropic:claude-sonnet-4-5" })
      : null;
    this.keyRow = field("API key", this.apiKey, "Stored in your system keyring, never in a file.");
    this.keyHint = this.keyRow.querySelector(".field-hint") ?? h("span");
    const urlRow = field("Endpoint", this.baseUrl, " ");
    this.urlHint = urlRow.querySelector<HTMLElement>(".field-hint") ?? h("span");
    this.el = h(
      "div",
      { className: "fields" },
      field("Provider", this.kind),
      urlRow,
      field("Model", this.model),
      this.keyRow,
      field("Runs code through", this.toolMode, "Models without tool calling write ```python or ```bash blocks instead; each block then asks for your approval like any run."),
      field("Reads pictures", this.images, "Pictures you paste go only to a model that reads them; otherwise it is told one was left out. Found out from Ollama, else from the model's name."),
      field("Context window", this.window, "Tokens the model reads at once. Leave empty to use what the provider or IronClaw knows of the model; set it when a local server runs with a smaller window."),
      this.moreModels
        ? field("More models", this.moreModels, "One per line, offered in the chat's model menu: a model of this provider, or provider:model for another (openai:, anthropic:, ollama:; its key from its usual variable or the keyring).")
        : null,
    );
    const p = settings.provider;
    this.kind.value = p?.kind ?? "ollama";
    this.baseUrl.value = p?.baseUrl ?? "";
    this.model.value = p?.model ?? "";
    this.window.value = p?.contextWindow ? String(p.contextWindow) : "";
    this.toolMode.value = p?.toolMode ?? "auto";
    this.images.value = p?.images == null ? "auto" : p.images ? "yes" : "no";
    if (this.moreModels) this.moreModels.value = (p?.moreModels ?? []).join("\n");
    this.kind.addEventListener("change", () => this.sync());
    this.sync();
  }

  /** Says why keys cannot be stored here (no keyring), or restores the usual hint. */
  keyringNote(problem: string | null): void {
    this.keyHint.textContent = problem ?? "Stored in your system keyring, never in a file.";
    this.keyHint.classList.toggle("error", problem !== null);
  }

  /** Picks a kind when nothing is saved yet (e.g. no Ollama here: an endpoint is likelier). */
  preferKind(kind: ProviderKind): void {
    if (this.settings.provider) return;
    this.kind.value = kind;
    this.sync();
  }

  /** Prefills a detected local Ollama. */
  useOllama(baseUrl: string, model: string | undefined): void {
    if (this.settings.provider) return;
    this.kind.value = "ollama";
    this.baseUrl.value = baseUrl;
    if (model && !this.model.value) this.model.value = model;
    this.sync();
  }

  private sync(): void {
    const kind = this.kind.value as ProviderKind;
    this.baseUrl.placeholder = PLACEHOLDER_URL[kind];
    this.urlHint.textContent = URL_HINT[kind];
    this.urlHint.hidden = URL_HINT[kind] === "";
    this.model.placeholder = PLACEHOLDER_MODEL[kind];
    this.keyRow.hidden = kind === "ollama";
  }

  private hasKeyFor(kind: ProviderKind): boolean {
    return this.settings.provider?.kind === kind && this.settings.provider.hasApiKey;
  }

  /** Saves provider settings, hands a typed key to the keyring, then asks the model. */
  async save(api: Api, base: Settings): Promise<{ settings: Settings; check: ProviderCheck }> {
    const kind = this.kind.value as ProviderKind;
    const settings = await api.saveSettings({
      ...base,
      provider: {
        kind,
        baseUrl: this.baseUrl.value.trim() || null,
        model: this.model.value.trim() || null,
        hasApiKey: this.hasKeyFor(kind),
        contextWindow: Number.parseInt(this.window.value, 10) || null,
        toolMode: this.toolMode.value as ToolModeName,
        images: this.images.value === "auto" ? null : this.images.value === "yes",
        // First run shows no list: what the file has is kept.
        moreModels: this.moreModels
          ? this.moreModels.value.split("\n").map((l) => l.trim()).filter(Boolean)
          : (base.provider?.moreModels ?? []),
      },
    });
    if (kind !== "ollama" && this.apiKey.value) {
      const key = this.apiKey.value;
      this.apiKey.value = "";
      this.apiKey.placeholder = "A key is stored — type to replace it";
      await api.setApiKey(kind, key);
    }
    const check = await api.checkProvider();
    return { settings, check };
  }
}

export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  return h("label", { className: "field" }, h("span", { className: "field-label" }, label), control, hint ? h("span", { className: "field-hint" }, hint) : null);
}
