// Which backend the page gets: the app's, the fake in builds that carry it, and in production
// outside the app a sentence instead of a fake. (That the production bundle holds none of the fake's
// code is checked on the built bundle by production-bundle-has-no-fake.mjs.)
import { afterEach, describe, expect, it, vi } from "vitest";
import { connect, driveScenario } from "../src/api";
import { FakeBackend } from "../src/api/fake";
import { tauriApi } from "../src/api/tauri";

afterEach(() => {
  vi.unstubAllEnvs();
  delete (window as unknown as Record<string, unknown>)["__TAURI_INTERNALS__"];
  history.replaceState(null, "", "/");
});

/** What a production build sees in `import.meta.env` (Vite writes these in at build time). */
function asProduction(): void {
  vi.stubEnv("DEV", false);
  vi.stubEnv("PROD", true);
  vi.stubEnv("MODE", "production");
}

describe("the backend the page connects to", () => {
  it("is the app's inside Tauri, in every build", async () => {
    (window as unknown as Record<string, unknown>)["__TAURI_INTERNALS__"] = {};
    expect(await connect()).toBe(tauriApi);
    asProduction();
    expect(await connect()).toBe(tauriApi);
  });

  it("is the fake, with the page's scenario, in a development build outside the app", async () => {
    expect(import.meta.env.DEV).toBe(true);
    history.replaceState(null, "", "/?scenario=doctor");
    const api = await connect();
    expect(api).toBeInstanceOf(FakeBackend);
    expect((await api.doctor()).docker.state).toBe("notRunning");
  });

  it("is the fake in a `--mode fake` build (benches, screenshots) outside the app", async () => {
    asProduction();
    vi.stubEnv("MODE", "fake");
    expect(await connect()).toBeInstanceOf(FakeBackend);
  });

  it("is none in a production build outside the app: it says where the window works instead", async () => {
    asProduction();
    await expect(connect()).rejects.toThrow(/only works inside the desktop app.*npm run dev/);
  });

  it("a production build outside the app never drives a scenario", async () => {
    asProduction();
    history.replaceState(null, "", "/?scenario=settings");
    const settings = document.createElement("button");
    settings.dataset["testid"] = "open-settings";
    let clicks = 0;
    settings.addEventListener("click", () => clicks++);
    document.body.append(settings);
    expect(await driveScenario()).toBe(false);
    // The same page in a development build does drive it: a click the test would have seen.
    vi.unstubAllEnvs();
    expect(await driveScenario()).toBe(true);
    await vi.waitFor(() => expect(clicks).toBe(1), { timeout: 3000 });
    settings.remove();
  });
});
