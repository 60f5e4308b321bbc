import { afterEach, describe, expect, it } from "vitest";
import { FakeBackend } from "../src/api/fake";
import type { RecoveryOutcome } from "../src/bindings/RecoveryOutcome";
import { recoveryScreen } from "../src/views/recovery";
import { q, settle } from "./helpers";

afterEach(() => document.body.replaceChildren());

async function showDamaged(api = new FakeBackend({ scenario: "damaged" })) {
  const state = await api.startupState();
  expect(state.historyDamage).not.toBeNull();
  const outcomes: RecoveryOutcome[] = [];
  document.body.append(recoveryScreen(api, state.historyDamage!, (o) => outcomes.push(o)));
  return { api, outcomes, damage: state.historyDamage! };
}

describe("recovery screen (damaged history)", () => {
  it("says what is damaged, what SQLite said and where the one copy is", async () => {
    const { damage } = await showDamaged();
    expect(q("recovery-path").textContent).toBe(damage.path);
    expect(q("recovery-problem").textContent).toBe("database disk image is malformed");
    expect(q<HTMLInputElement>("recovery-backup-path").value).toBe(damage.backup);
    expect(q<HTMLInputElement>("recovery-backup-path").readOnly).toBe(true);
  });

  it("Start fresh replaces the history once and hands the outcome on", async () => {
    const { api, outcomes } = await showDamaged();
    q<HTMLButtonElement>("recovery-start-fresh").click();
    expect(q<HTMLButtonElement>("recovery-recover").disabled).toBe(true);
    await settle();
    expect(api.calls.filter((c) => c.name === "startFreshHistory")).toHaveLength(1);
    expect(api.calls.filter((c) => c.name === "recoverHistory")).toHaveLength(0);
    expect(outcomes.map((o) => o.summary)).toEqual(["Started a fresh, empty history."]);
    expect((await api.startupState()).historyDamage).toBeNull();
    expect(await api.listConversations()).toEqual([]);
  });

  it("Recover reports how many conversations and messages came back", async () => {
    const { outcomes } = await showDamaged();
    q<HTMLButtonElement>("recovery-recover").click();
    await settle();
    expect(outcomes).toHaveLength(1);
    expect(q("recovery-status").textContent).toMatch(/^Recovered \d+ conversations and \d+ messages/);
  });

  it("a failed way out says why and lets the person try again", async () => {
    const api = new FakeBackend({ scenario: "damaged" });
    api.startFreshHistory = () => Promise.reject("another IronClaw process has the history open");
    const { outcomes } = await showDamaged(api);
    q<HTMLButtonElement>("recovery-start-fresh").click();
    await settle();
    expect(outcomes).toEqual([]);
    expect(q("recovery-status").textContent).toContain("another IronClaw process");
    expect(q<HTMLButtonElement>("recovery-start-fresh").disabled).toBe(false);
  });

  it("start-up notices are handed out once", async () => {
    const api = new FakeBackend({ scenario: "notices" });
    expect((await api.startupNotices()).map((n) => n.kind)).toEqual(["historyMissing"]);
    expect(await api.startupNotices()).toEqual([]);
  });
});

describe("which way out is offered first", () => {
  it("is Recover for a damaged database, and Start fresh for a file that is no database at all", async () => {
    const api = new FakeBackend({ scenario: "damaged" });
    const state = await api.startupState();
    const damage = state.historyDamage!;
    for (const notADatabase of [false, true]) {
      document.body.replaceChildren(recoveryScreen(api, { ...damage, notADatabase }, () => {}));
      const primary = document.querySelectorAll(".recovery .btn-primary");
      expect(primary).toHaveLength(1);
      expect(primary[0]?.getAttribute("data-testid")).toBe(notADatabase ? "recovery-start-fresh" : "recovery-recover");
      expect(document.querySelector(".recovery .actions button")?.getAttribute("data-testid")).toBe(primary[0]?.getAttribute("data-testid"));
    }
  });
});
