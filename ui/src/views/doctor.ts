// First run / system check: Docker (with the fix for each failure), the sandbox image (prepared
// here with a real progress bar), and the model provider.

import type { DoctorReport } from "../bindings/DoctorReport";
import type { DockerState } from "../bindings/DockerState";
import type { ImageProgress } from "../bindings/ImageProgress";
import type { ProviderCheck } from "../bindings/ProviderCheck";
import type { Settings } from "../bindings/Settings";
import type { Api } from "../api";
import { errorText } from "../api";
import { h } from "../lib/dom";
import { withCode } from "../lib/icons";
import { ProviderFields } from "./provider";
import { needsDoctor } from "../lib/readiness";

const OLLAMA_URL = "http://127.0.0.1:11434";

const DOCKER_TITLE: Record<DockerState, string> = {
  ok: "Docker is running",
  notInstalled: "Docker is not installed",
  notRunning: "Docker is not running",
  noPermission: "No permission to use Docker",
  error: "Docker did not answer",
};

const DEFAULT_FIX: Record<DockerState, string> = {
  ok: "",
  notInstalled: "Install Docker Engine (Debian/Ubuntu: `sudo apt install docker.io`), then press Check again.",
  notRunning: "Start it with `sudo systemctl start docker` (or open Docker Desktop), then press Check again.",
  noPermission: "Add yourself to the docker group: `sudo usermod -aG docker $USER`, log out and back in, then press Check again.",
  error: "See the message above, fix it, then press Check again.",
};

/** Image preparation progress: a fraction while a step can measure itself, else indeterminate. */
export function applyProgress(bar: HTMLProgressElement, label: HTMLElement, p: ImageProgress): void {
  if (p.done) bar.value = 1;
  else if (p.fraction === null || p.fraction === undefined) bar.removeAttribute("value");
  else bar.value = Math.min(1, Math.max(0, Number(p.fraction)));
  label.textContent = p.message;
}

/** The Model card's mark: neutral until a test ran, then whether the model answered. */
export type ModelMark = "untested" | "passed" | "failed";

export function applyModelMark(mark: HTMLElement, state: ModelMark): void {
  mark.dataset["state"] = state;
  mark.textContent = state === "passed" ? "✓" : state === "failed" ? "!" : "◎";
  mark.classList.toggle("ok", state === "passed");
  mark.classList.toggle("bad", state === "failed");
}

/** The status line after "Save and test", in words (the core's message says where the server
 *  is, what it offers and which model is used). */
export function providerCheckText(check: ProviderCheck): string {
  return check.ok ? check.message : `The model did not answer: ${check.message}`;
}

export interface DoctorActions {
  continue(): void;
}

export async function doctorScreen(api: Api, actions: DoctorActions, known?: DoctorReport): Promise<HTMLElement> {
  const root = h("section", { testid: "doctor-screen", className: "screen doctor" });
  let settings: Settings = await api.getSettings();
  let report: DoctorReport = known ?? (await api.doctor());

  const dockerCard = h("div", { className: "check" });
  const imageCard = h("div", { className: "check" });
  const wallCard = h("div", { testid: "doctor-wall", className: "check", hidden: true });
  const provider = new ProviderFields({ kind: "provider-kind", baseUrl: "provider-base-url", model: "provider-model", apiKey: "provider-api-key" }, settings);
  const providerStatus = h("p", { testid: "provider-status", className: "check-detail", role: "status" });
  const saveProvider = h("button", { testid: "save-provider", className: "btn btn-primary", type: "button" }, "Save and test");
  const ollamaNote = h("p", { testid: "ollama-note", className: "check-detail" });
  const modelMark = h("span", { testid: "model-mark", className: "check-mark", "aria-hidden": "true" });
  applyModelMark(modelMark, "untested");
  const continueBtn = h("button", { testid: "doctor-continue", className: "btn btn-primary btn-large", type: "button" }, "Continue");
  const recheck = h("button", { className: "btn", type: "button" }, "Check again");
  continueBtn.addEventListener("click", () => actions.continue());

  const progress = h("progress", { testid: "image-progress", className: "progress", max: 1, hidden: true, "aria-label": "Preparing the sandbox image" });
  const progressLabel = h("p", { className: "check-detail" });
  const prepare = h("button", { testid: "prepare-image", className: "btn btn-primary", type: "button" }, "Prepare sandbox image");

  function renderDocker(): void {
    const d = report.docker;
    const ok = d.state === "ok";
    dockerCard.replaceChildren(
      h("span", { className: `check-mark ${ok ? "ok" : "bad"}`, "aria-hidden": "true" }, ok ? "✓" : "!"),
      h(
        "div",
        { className: "check-body" },
        h("h2", { testid: "docker-status", "data-state": d.state }, DOCKER_TITLE[d.state] ?? d.state),
        h("p", { className: "check-detail" }, d.message),
        ok ? null : h("p", { testid: "docker-fix", className: "fix" }, withCode(d.fix ?? DEFAULT_FIX[d.state])),
      ),
    );
  }

  function renderImage(): void {
    const i = report.image;
    const ready = i.state === "ready";
    const dockerOk = report.docker.state === "ok";
    prepare.hidden = ready;
    prepare.disabled = !dockerOk;
    imageCard.replaceChildren(
      h("span", { className: `check-mark ${ready ? "ok" : "bad"}`, "aria-hidden": "true" }, ready ? "✓" : "…"),
      h(
        "div",
        { className: "check-body" },
        h("h2", { testid: "image-status", "data-state": i.state, "data-ready": String(ready) }, ready ? "Sandbox image is ready" : "Sandbox image needed"),
        h("p", { className: "check-detail" }, ready ? `Built on this computer as ${i.tag}.` : i.message),
        progress,
        progressLabel,
        h("div", { className: "row" }, prepare),
      ),
    );
  }

  // Which wall the code meets: gVisor (a second kernel) where the engine has it, else runc.
  function renderWall(): void {
    const w = report.wall;
    wallCard.hidden = !w;
    if (!w) return;
    const title = w.gvisor ? "Second kernel: gVisor" : w.blocked ? "gVisor required, not found" : "One wall: this computer’s kernel";
    wallCard.dataset.gvisor = String(w.gvisor);
    wallCard.replaceChildren(
      h("span", { className: `check-mark ${w.gvisor ? "ok" : w.blocked ? "bad" : ""}`, "aria-hidden": "true" }, w.gvisor ? "✓" : w.blocked ? "!" : "i"),
      h(
        "div",
        { className: "check-body" },
        h("h2", { testid: "wall-status" }, title),
        h("p", { className: "check-detail" }, w.summary.charAt(0).toUpperCase() + w.summary.slice(1) + "."),
        w.fix ? h("p", { testid: "wall-fix", className: w.blocked ? "fix" : "check-detail" }, withCode(w.fix.charAt(0).toUpperCase() + w.fix.slice(1) + ".")) : null,
      ),
    );
  }

  function renderProvider(): void {
    const m = report.model;
    const models = m.ollamaModels;
    ollamaNote.textContent = models.length
      ? `Ollama is running on this computer with ${models.length} model${models.length === 1 ? "" : "s"}: ${models.slice(0, 4).join(", ")}`
      : "No Ollama is running on this computer. Connect to an OpenAI-compatible server or to Anthropic instead.";
    if (firstRender) {
      if (models.length) provider.useOllama(OLLAMA_URL, models[0]);
      else provider.preferKind("openai");
    }
    provider.keyringNote(m.keyringAvailable ? null : m.keyringMessage);
    // Once a model is set up, where else one could come from is no longer news.
    ollamaNote.hidden = m.configured && models.length === 0;
    // Nothing has gone wrong before the person tried anything: a hint, never a red error.
    providerStatus.textContent = m.configured
      ? "A model is set up."
      : models.length
        ? "Not saved yet: IronClaw will use the local Ollama until you save a choice."
        : "Choose where your model runs, then save: no model is set up yet.";
    providerStatus.classList.remove("error");
  }

  // MCP servers: a line per server of mcp.yaml, each started in its container and asked for
  // its tools (shown only when there are servers; never holds up the rest of the check).
  const mcpCard = h("div", { testid: "doctor-mcp", className: "check", hidden: true });
  async function checkMcp(): Promise<void> {
    const overview = await api.mcpServers().catch(() => null);
    if (!overview || (overview.servers.length === 0 && !overview.problem)) {
      mcpCard.hidden = true;
      return;
    }
    mcpCard.hidden = false;
    const mark = h("span", { className: "check-mark", "aria-hidden": "true" }, "…");
    const lines = h("ul", { className: "check-detail mcp-lines" });
    const line = (name: string, text: string, ok: boolean | null) =>
      h("li", { testid: "doctor-mcp-line", "data-name": name, "data-ok": ok === null ? "" : String(ok), className: ok === false ? "error" : "" }, h("strong", {}, name), `: ${text}`);
    mcpCard.replaceChildren(
      mark,
      h("div", { className: "check-body" }, h("h2", {}, "MCP servers"), overview.problem ? h("p", { className: "fix" }, overview.problem) : null, lines),
    );
    const enabled = overview.servers.filter((s) => s.enabled);
    const ready = report.docker.state === "ok" && report.image.state === "ready";
    lines.replaceChildren(...overview.servers.map((s) => line(s.name, !s.enabled ? "switched off in Settings" : ready ? "starting in its container…" : "checked once Docker and the sandbox image are ready", null)));
    if (!ready || enabled.length === 0) return;
    try {
      const probes = await api.checkMcpServers();
      lines.replaceChildren(
        ...overview.servers.map((s) => {
          const p = probes.find((x) => x.name === s.name);
          return p ? line(s.name, p.message, p.ok) : line(s.name, "switched off in Settings", null);
        }),
      );
      const bad = probes.some((p) => !p.ok);
      mark.textContent = bad ? "!" : "✓";
      mark.className = `check-mark ${bad ? "bad" : "ok"}`;
    } catch (e) {
      lines.replaceChildren(line("mcp.yaml", errorText(e), false));
      mark.textContent = "!";
      mark.className = "check-mark bad";
    }
  }

  let firstRender = true;
  function renderAll(): void {
    renderDocker();
    renderImage();
    renderWall();
    renderProvider();
    firstRender = false;
    const good = !needsDoctor(report);
    continueBtn.textContent = good ? "Start chatting" : "Continue anyway";
    continueBtn.classList.toggle("btn-primary", good);
  }

  recheck.addEventListener("click", async () => {
    recheck.disabled = true;
    try {
      report = await api.doctor();
      renderAll();
      void checkMcp();
    } finally {
      recheck.disabled = false;
    }
  });

  prepare.addEventListener("click", async () => {
    prepare.disabled = true;
    progress.hidden = false;
    progress.removeAttribute("value"); // indeterminate until sizes are known
    progressLabel.textContent = "Starting…";
    try {
      await api.prepareImage((p) => applyProgress(progress, progressLabel, p));
      progress.value = 1;
      report = await api.doctor();
      renderAll();
      void checkMcp();
      // The image was the step in the way: on to the model.
      modelMark.scrollIntoView?.({ block: "start", behavior: "smooth" });
    } catch (e) {
      progressLabel.textContent = `Could not prepare the image: ${errorText(e)}`;
      progressLabel.classList.add("error");
      prepare.disabled = false;
    }
  });

  saveProvider.addEventListener("click", async () => {
    saveProvider.disabled = true;
    providerStatus.textContent = "Saving, then asking the server which models it offers…";
    providerStatus.classList.remove("error");
    applyModelMark(modelMark, "untested");
    try {
      const { settings: saved, check } = await provider.save(api, settings);
      settings = saved;
      report = await api.doctor();
      renderAll();
      providerStatus.textContent = providerCheckText(check);
      providerStatus.classList.toggle("error", !check.ok);
      applyModelMark(modelMark, check.ok ? "passed" : "failed");
      // The next step is starting the chat: bring its button into view and give it focus.
      if (check.ok && !needsDoctor(report)) {
        continueBtn.scrollIntoView?.({ block: "nearest" });
        continueBtn.focus();
      }
    } catch (e) {
      providerStatus.textContent = errorText(e);
      providerStatus.classList.add("error");
      applyModelMark(modelMark, "failed");
    } finally {
      saveProvider.disabled = false;
    }
  });

  root.append(
    h(
      "div",
      { className: "screen-card" },
      h("header", { className: "screen-head" }, h("div", {}, h("h1", {}, "Welcome to IronClaw"), h("p", { className: "muted" }, "Code the assistant writes runs only in a locked-down container on this computer, and only after you approve it. Three things to check:"))),
      dockerCard,
      imageCard,
      wallCard,
      h(
        "div",
        { className: "check" },
        modelMark,
        h("div", { testid: "provider-form", className: "check-body" }, h("h2", {}, "Model"), ollamaNote, provider.el, h("div", { className: "row" }, saveProvider), providerStatus),
      ),
      mcpCard,
      // Sticky, like Settings: the way on stays in view in a small window.
      h("footer", { className: "row-end doctor-foot" }, recheck, continueBtn),
    ),
  );
  renderAll();
  void checkMcp();
  return root;
}
