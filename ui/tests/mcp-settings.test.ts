import { afterEach, describe, expect, it } from "vitest";
import { FakeBackend } from "../src/api/fake";
import { mcpSection, splitCommand } from "../src/views/mcp-settings";
import { all, q, settle } from "./helpers";

afterEach(() => document.body.replaceChildren());

describe("Settings → MCP servers", () => {
  it("splits a command the way a person types it", () => {
    expect(splitCommand("python3 -m mcp_server_time")).toEqual(["python3", "-m", "mcp_server_time"]);
    expect(splitCommand(`node "my server.js"  --x 'a b'`)).toEqual(["node", "my server.js", "--x", "a b"]);
    expect(splitCommand("   ")).toEqual([]);
  });

  it("adds, checks, switches off and removes a server, and says why a bad one was refused", async () => {
    const api = new FakeBackend();
    document.body.append(mcpSection(api));
    await settle();
    expect(q("mcp-list").textContent).toContain("No MCP servers");

    q<HTMLInputElement>("mcp-name").value = "Bad Name";
    q<HTMLInputElement>("mcp-command").value = "python3";
    q<HTMLButtonElement>("mcp-add").click();
    await settle();
    expect(q("mcp-status").textContent).toContain("lower-case");
    expect(all("mcp-server")).toHaveLength(0);

    q<HTMLInputElement>("mcp-name").value = "time";
    q<HTMLInputElement>("mcp-command").value = "python3 -m mcp_server_time";
    q<HTMLInputElement>("mcp-packages").value = "/opt/mcp/time";
    q<HTMLButtonElement>("mcp-add").click();
    await settle();
    const saved = api.calls.filter((c) => c.name === "saveMcpServer").at(-1)?.args[0];
    expect(saved).toMatchObject({ name: "time", command: ["python3", "-m", "mcp_server_time"], packages: "/opt/mcp/time", workspace: false, enabled: true });
    const row = all("mcp-server")[0]!;
    expect(row.dataset.name).toBe("time");
    expect(row.textContent).toContain("no network");
    expect(row.textContent).toContain("packages read-only");

    q<HTMLButtonElement>("mcp-check").click();
    await settle();
    expect(q("mcp-probe").textContent).toContain("get_current_time");
    expect(q("mcp-status").textContent).toContain("answered");

    const on = q<HTMLInputElement>("mcp-enabled");
    on.checked = false;
    on.dispatchEvent(new Event("change"));
    await settle();
    expect(api.mcp[0]?.enabled).toBe(false);

    q<HTMLButtonElement>("mcp-remove").click();
    await settle();
    expect(api.mcp).toHaveLength(0);
    expect(all("mcp-server")).toHaveLength(0);

    // An address instead of a command: a remote server.
    q<HTMLInputElement>("mcp-name").value = "docs";
    q<HTMLInputElement>("mcp-command").value = "https://mcp.example.com/mcp";
    q<HTMLButtonElement>("mcp-add").click();
    await settle();
    expect(api.mcp[0]).toMatchObject({ name: "docs", command: [], url: "https://mcp.example.com/mcp" });
    expect(all("mcp-server")[0]!.textContent).toContain("remote: reached from this computer under the network policy");
  });
});
