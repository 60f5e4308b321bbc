// Builds with the fake backend only (`npm run dev`, `npm run build:fake`):
// `?scenario=settings|workspace|log` opens that screen after start, so headless screenshots can
// show every screen against the fake.

function click(testid: string): void {
  document.querySelector<HTMLElement>(`[data-testid="${testid}"]`)?.click();
}

/**
 * Watches the page while 100 MB stream into one cell: the longest stall of the main thread
 * (a 10 ms heartbeat's worst gap — how long the window was frozen at worst) and the rendered
 * text size, written to `<body data-flood="…">` for a headless browser to read.
 */
function measureFlood(): void {
  const t0 = performance.now();
  let last = t0;
  let worst = 0;
  let beats = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
    beats++;
    const flood = [...document.querySelectorAll<HTMLElement>('[data-testid="execution-cell"]')].find((c) => c.querySelector("code")?.textContent?.includes("1_638_400"));
    if (flood?.dataset["state"] !== "ok") return;
    clearInterval(timer);
    const stdout = flood.querySelector<HTMLElement>('[data-testid="cell-stdout"]');
    document.body.dataset["flood"] = JSON.stringify({
      totalMs: Math.round(now - t0),
      beats,
      worstStallMs: Math.round(worst),
      renderedChars: stdout?.textContent?.length ?? 0,
      domNodes: document.getElementsByTagName("*").length,
      note: flood.querySelector('[data-testid="cell-collapsed-note"]')?.textContent ?? "",
    });
  }, 10);
}

export function drive(scenario: string): void {
  const later = (fn: () => void, ms = 200) => setTimeout(fn, ms);
  switch (scenario) {
    case "run":
      later(() => {
        const input = document.querySelector<HTMLTextAreaElement>('[data-testid="message-input"]');
        if (!input) return;
        input.value = "Which region sold the most?";
        click("send-button");
        setTimeout(() => click("approve-button"), 800);
      });
      break;
    case "think":
      later(() => {
        const input = document.querySelector<HTMLTextAreaElement>('[data-testid="message-input"]');
        if (!input) return;
        input.value = "Think it through: which region sold the most?";
        click("send-button");
        setTimeout(() => {
          click("approve-button");
          document.querySelector<HTMLDetailsElement>('[data-testid="reasoning"]')?.setAttribute("open", "");
        }, 800);
      });
      break;
    case "new":
      later(() => click("new-conversation"));
      break;
    case "settings":
      later(() => click("open-settings"));
      break;
    case "workspace":
      later(() => click("open-workspace-panel"));
      break;
    case "log":
      later(() => click("cell-full-log"), 300);
      break;
    case "search":
      later(() => {
        const input = document.querySelector<HTMLInputElement>('[data-testid="conversation-search"]');
        if (!input) return;
        input.value = "region";
        input.dispatchEvent(new Event("input"));
      });
      break;
    case "flood":
      measureFlood();
      break;
    default:
      break;
  }
}
