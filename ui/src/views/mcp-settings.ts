// Settings → MCP servers: what mcp.yaml holds, each server switched on or off, removed, added,
// and a check that starts each in its container and lists its tools.

import type { McpOverview } from "../bindings/McpOverview";
import type { McpProbe } from "../bindings/McpProbe";
import type { McpServerEntry } from "../bindings/McpServerEntry";
import type { Api } from "../api";
import { errorText } from "../api";
import { h } from "../lib/dom";
import { field } from "./provider";

/** "python3 -m 'my server'" → ["python3", "-m", "my server"]: spaces split, quotes group. */
export function splitCommand(text: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push(m[1] ?? m[2] ?? m[3] ?? "");
  return out;
}

function quoted(arg: string): string {
  return /\s/.test(arg) ? `"${arg}"` : arg;
}

function confinement(s: McpServerEntry): string {
  if (s.url) return `remote: reached from this computer under the network policy${s.network.length ? `, also ${s.network.join(", ")}` : ""}`;
  const net = s.network.length ? `reaches only ${s.network.join(", ")}` : "no network";
  const parts = [net, s.packages ? "packages read-only" : "no packages folder", s.workspace ? "sees the conversation's files" : "no workspace"];
  if (s.memory) parts.push(`${s.memory} memory`);
  if (s.image) parts.push(`image ${s.image}`);
  return parts.join(" · ");
}

export function mcpSection(api: Api): HTMLElement {
  const list = h("ul", { testid: "mcp-list", className: "rules mcp-list" });
  const status = h("p", { testid: "mcp-status", className: "field-hint", "aria-live": "polite" });
  const fileHint = h("p", { className: "field-hint", testid: "mcp-file" });
  const probes = new Map<string, McpProbe>();

  const say = (text: string, error = false) => {
    status.textContent = text;
    status.classList.toggle("error", error);
  };

  const render = (o: McpOverview) => {
    fileHint.textContent = `Kept in ${o.file}. Conversations started from now on use these; an open one keeps the servers it started with.`;
    if (o.problem) say(o.problem, true);
    list.replaceChildren(
      ...o.servers.map((s) => {
        const on = h("input", { type: "checkbox", testid: "mcp-enabled", "aria-label": `Use ${s.name}` });
        on.checked = s.enabled;
        on.addEventListener("change", () => void apply(() => api.saveMcpServer({ ...s, enabled: on.checked })));
        const remove = h("button", { testid: "mcp-remove", className: "btn btn-small", type: "button" }, "Remove");
        remove.addEventListener("click", () => void apply(() => api.removeMcpServer(s.name)));
        const probe = probes.get(s.name);
        return h(
          "li",
          { testid: "mcp-server", className: "rule mcp-server", "data-name": s.name },
          h("label", { className: "check-line" }, on, h("strong", {}, ` ${s.name}`)),
          h("div", { className: "rule-body" },
            h("code", { className: "mcp-command" }, s.url ?? s.command.map(quoted).join(" ")),
            h("p", { className: "field-hint" }, confinement(s)),
            probe ? h("p", { testid: "mcp-probe", className: `field-hint ${probe.ok ? "" : "error"}` }, probe.message) : null),
          remove,
        );
      }),
    );
    if (o.servers.length === 0) list.append(h("li", { className: "muted" }, "No MCP servers. Add one below."));
  };

  const apply = async (change: () => Promise<McpOverview>) => {
    try {
      render(await change());
      say("Saved.");
    } catch (e) {
      say(errorText(e), true);
    }
  };

  const name = h("input", { testid: "mcp-name", className: "input", placeholder: "time", autocomplete: "off", spellcheck: false });
  const command = h("input", { testid: "mcp-command", className: "input", placeholder: "python3 -m mcp_server_time", autocomplete: "off", spellcheck: false });
  const packages = h("input", { testid: "mcp-packages", className: "input", placeholder: "/home/you/mcp/time", autocomplete: "off", spellcheck: false });
  const network = h("input", { testid: "mcp-network", className: "input", placeholder: "api.example.com, *.example.org:443", autocomplete: "off", spellcheck: false });
  const workspace = h("input", { testid: "mcp-workspace", type: "checkbox" });
  const add = h("button", { testid: "mcp-add", className: "btn", type: "button" }, "Add server");
  add.addEventListener("click", () => {
    const remote = /^https?:\/\//i.test(command.value.trim());
    const server: McpServerEntry = {
      name: name.value.trim(),
      command: remote ? [] : splitCommand(command.value),
      url: remote ? command.value.trim() : null,
      packages: packages.value.trim() || null,
      workspace: workspace.checked,
      network: network.value.split(/[\s,]+/).filter((x) => x !== ""),
      image: null,
      enabled: true,
      memory: null,
    };
    void apply(async () => {
      const o = await api.saveMcpServer(server);
      name.value = command.value = packages.value = network.value = "";
      workspace.checked = false;
      return o;
    });
  });

  const check = h("button", { testid: "mcp-check", className: "btn", type: "button" }, "Check servers");
  check.addEventListener("click", async () => {
    check.disabled = true;
    say("Starting each server in its container…");
    try {
      const found = await api.checkMcpServers();
      probes.clear();
      for (const p of found) probes.set(p.name, p);
      render(await api.mcpServers());
      const bad = found.filter((p) => !p.ok).length;
      say(found.length === 0 ? "No server is switched on." : bad ? `${bad} of ${found.length} server(s) did not start: see below.` : `All ${found.length} server(s) answered.`, bad > 0);
    } catch (e) {
      say(errorText(e), true);
    } finally {
      check.disabled = false;
    }
  });

  api.mcpServers().then(render, (e) => say(errorText(e), true));

  return h(
    "section",
    { testid: "settings-mcp" },
    h("h2", {}, "MCP servers"),
    h("p", { className: "field-hint" }, "Tools from MCP servers. Each server runs in its own sandbox container — no network unless you list hosts for it, its packages folder read-only, the conversation's files only if you allow it — and every call of one of its tools is approved like code."),
    fileHint,
    list,
    h("div", { className: "row-end" }, check),
    h("h3", {}, "Add a server"),
    field("Name", name, "Lower-case letters, digits or -"),
    field("Command or address", command, "The program and its arguments, run inside the server's container — or the https:// address of a remote server"),
    field("Packages folder", packages, "A folder on this computer with the server's code, e.g. made by pip install --target FOLDER PACKAGE"),
    field("Network", network, "Hosts it may reach through IronClaw's proxy, and no others (not even the sandbox allowlist); empty: no network"),
    h("label", { className: "check-line" }, workspace, " Sees the conversation's files (read and write)"),
    h("div", { className: "row-end" }, add),
    status,
  );
}
