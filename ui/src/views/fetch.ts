// A page the model fetched (`fetch_url`): the address, what came back, and, above all, any
// text in it addressed to an AI. The page itself is never shown or rendered here: it went to
// the model as untrusted text, and this card is the person's view of that hand-over.

import type { FetchReport } from "../bindings/FetchReport";
import { h } from "../lib/dom";
import { renderVisible } from "../lib/invisible";

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

export class FetchCard {
  readonly el: HTMLElement;
  private readonly status: HTMLElement;
  private readonly body: HTMLElement;

  constructor(url: string) {
    this.status = h("span", { testid: "fetch-status", className: "fetch-status" }, "Fetching…");
    this.body = h("div", { className: "fetch-body" });
    this.el = h(
      "div",
      { testid: "fetch-card", className: "fetch-card", "data-state": "running" },
      h(
        "div",
        { className: "fetch-head" },
        h("strong", {}, "Fetch "),
        h("code", { testid: "fetch-url", className: "fetch-url" }, renderVisible(url)),
        this.status,
      ),
      this.body,
    );
  }

  static fromHistory(report: FetchReport): FetchCard {
    const card = new FetchCard(report.url);
    card.finish(report);
    return card;
  }

  /** Shows the question about a host this fetch waits on. */
  ask(prompt: HTMLElement): void {
    this.status.textContent = "Waiting for your answer";
    this.el.append(prompt);
  }

  finish(report: FetchReport): void {
    this.body.replaceChildren();
    if (report.error) {
      this.el.setAttribute("data-state", "failed");
      this.status.textContent = "Not fetched";
      this.body.append(h("div", { testid: "fetch-error", className: "fetch-error" }, renderVisible(report.error)));
      return;
    }
    this.el.setAttribute("data-state", report.warnings.length ? "warned" : "done");
    this.status.textContent = `HTTP ${report.status ?? "?"} · ${size(report.bytes)}${report.cut ? " · cut" : ""}`;
    const final = report.finalUrl && report.finalUrl !== report.url ? report.finalUrl : null;
    if (report.title) this.body.append(h("div", { testid: "fetch-title", className: "fetch-title" }, renderVisible(report.title)));
    if (final) this.body.append(h("div", { className: "fetch-note" }, "Redirected to ", h("code", {}, renderVisible(final))));
    this.body.append(
      h(
        "div",
        { className: "fetch-note" },
        "Given to the model as untrusted text: it was told not to follow instructions in it, and any code it writes still waits for you.",
      ),
    );
    if (report.warnings.length) {
      const list = h("ul", {});
      for (const w of report.warnings) list.append(h("li", {}, h("q", {}, renderVisible(w))));
      this.body.append(
        h(
          "div",
          { testid: "fetch-warning", className: "fetch-warning", role: "alert" },
          h("strong", {}, "This page contains text addressed to an AI. "),
          "It may try to steer the model: read its next steps with care.",
          list,
        ),
      );
    }
  }
}
