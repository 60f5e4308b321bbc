import { FakeBackend } from "../src/api/fake";
import { App } from "../src/app";
import { flushFrames } from "../src/lib/frame";

/** Lets pending promises and zero-delay timers run, then paints queued frames. */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await new Promise((r) => setTimeout(r, 0));
    flushFrames();
  }
}

export function q<T extends HTMLElement = HTMLElement>(id: string, root: ParentNode = document): T {
  const el = root.querySelector<T>(`[data-testid="${id}"]`);
  if (!el) throw new Error(`no element with data-testid=${id}`);
  return el;
}

export function all(id: string, root: ParentNode = document): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(`[data-testid="${id}"]`)];
}

export function key(target: EventTarget, k: string): KeyboardEvent {
  const ev = new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true });
  target.dispatchEvent(ev);
  return ev;
}

/** The app on the fake backend, started in `root` and settled. */
export async function startFakeApp(root: HTMLElement, scenario = ""): Promise<{ api: FakeBackend; app: App }> {
  const api = new FakeBackend({ scenario });
  const app = new App(api, root);
  await app.start();
  await settle();
  return { api, app };
}
