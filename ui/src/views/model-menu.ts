// The chat header's model menu: which model answers the next message, and the other configured
// models to switch to (provider.yaml's model, its more_models, and what the server lists).

import type { ModelMenu } from "../bindings/ModelMenu";
import type { ModelOption } from "../bindings/ModelOption";
import { errorText } from "../api/types";
import { h } from "../lib/dom";
import { renderVisible } from "../lib/invisible";

export interface ModelActions {
  load(): Promise<ModelMenu>;
  choose(option: ModelOption): void;
}

const label = (o: ModelOption) => `${o.provider}:${o.model}`;

export class ModelPicker {
  readonly el: HTMLElement;
  private readonly button: HTMLButtonElement;
  private readonly list: HTMLElement;
  private current: ModelOption | null = null;

  constructor(private readonly actions: ModelActions) {
    this.button = h("button", { testid: "model-button", className: "btn btn-quiet model-button", type: "button", "aria-haspopup": "listbox", "aria-expanded": "false", title: "The model that answers your next message" }, "");
    this.list = h("ul", { testid: "model-list", className: "model-list", role: "listbox", "aria-label": "Models", hidden: true });
    this.button.addEventListener("click", () => void this.toggle());
    this.list.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") {
        ev.stopPropagation();
        this.close();
        this.button.focus();
      }
    });
    this.el = h("div", { className: "model-picker" }, this.button, this.list);
    this.set(null);
  }

  set(current: ModelOption | null): void {
    this.current = current;
    this.button.textContent = current ? renderVisible(current.model) : "Model";
    const title = current ? `Answers come from ${renderVisible(label(current))}; click to switch` : "The model that answers your next message";
    // No tooltip over the open menu: it would cover its first item.
    if (this.list.hidden) this.button.title = title;
    else this.shelvedTitle = title;
  }

  /** The button's tooltip while the menu is open (see `set`). */
  private shelvedTitle = "";

  private close(): void {
    this.list.hidden = true;
    this.button.setAttribute("aria-expanded", "false");
    if (this.shelvedTitle) this.button.title = this.shelvedTitle;
  }

  private async toggle(): Promise<void> {
    if (!this.list.hidden) return this.close();
    this.shelvedTitle = this.button.title;
    this.button.removeAttribute("title");
    this.list.hidden = false;
    this.button.setAttribute("aria-expanded", "true");
    this.list.replaceChildren(h("li", { className: "model-empty" }, "Asking the provider for its models…"));
    try {
      const menu = await this.actions.load();
      if (menu.current) this.set(menu.current);
      this.list.replaceChildren(
        ...menu.options.map((o) => {
          const selected = !!this.current && label(o) === label(this.current);
          const item = h("li", { testid: "model-option", role: "option", tabindex: 0, "aria-selected": String(selected), "data-model": label(o) }, h("span", { className: "model-name" }, renderVisible(o.model)), h("span", { className: "model-provider" }, renderVisible(o.provider)));
          const pick = () => {
            this.close();
            if (!selected) this.actions.choose(o);
          };
          item.addEventListener("click", pick);
          item.addEventListener("keydown", (ev) => {
            if (ev.key === "Enter" || ev.key === " ") {
              ev.preventDefault();
              pick();
            }
          });
          return item;
        }),
      );
      (this.list.querySelector("[aria-selected=true]") as HTMLElement | null ?? this.list.firstElementChild as HTMLElement | null)?.focus();
    } catch (e) {
      this.list.replaceChildren(h("li", { className: "model-empty error" }, `No models: ${errorText(e)}`));
    }
  }
}
