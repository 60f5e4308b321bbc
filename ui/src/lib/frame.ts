// One render pass per animation frame: streams mark their views dirty and the work happens once
// per frame, however many events arrived in between.

type Job = () => void;

const queued = new Set<Job>();
let scheduled = false;

function run(): void {
  scheduled = false;
  const jobs = [...queued];
  queued.clear();
  for (const job of jobs) {
    try {
      job();
    } catch (e) {
      console.error("render job failed", e);
    }
  }
}

/** Runs `job` once in the next frame; scheduling the same function twice runs it once. */
export function inNextFrame(job: Job): void {
  queued.add(job);
  if (scheduled) return;
  scheduled = true;
  if (typeof requestAnimationFrame === "function" && !document.hidden) requestAnimationFrame(run);
  // A hidden window gets no frames; still drain, just less often.
  else setTimeout(run, 50);
}

/** Runs every queued job now (tests, and before reading rendered state). */
export function flushFrames(): void {
  if (queued.size > 0) run();
}
