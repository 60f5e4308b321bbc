// Browser preview only: `?scenario=settings|workspace|log` opens that screen after start, so
// headless screenshots can show every screen against the fake backend.

function click(testid: string): void {
  document.querySelector<HTMLElement>(`[data-testid="${testid}"]`)?.click();
}

export function drive(scenario: string): void {
  const later = (fn: () => void, ms = 200) => setTimeout(fn, ms);
  switch (scenario) {
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
    default:
      break;
  }
}
