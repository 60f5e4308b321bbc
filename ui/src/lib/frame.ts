// One render pass per animation frame: streams mark their views dirty and the work happens once
// per frame, however many events arrived in between.

type Job = () => void;

const queued = new Set<Job>();
/** Jobs that read layout (scrolling to the end) run after every write of the frame. */
const late = new Set<Job>();
let scheduled = false;

function drain(set: Set<Job>): void {
  const jobs = [...set];
  set.clear();
  for (const job of jobs) {
    try {
      job();
    } catch (e) {
      console.error("render job failed", e);
    }
  }
}

function run(): void {
  scheduled = false;
  drain(queued);
  drain(late);
}

/**
 * Runs `job` once in the next frame; scheduling the same function twice runs it once. `after`
 * jobs run once all the frame's other jobs have written the DOM.
 */
export function inNextFrame(job: Job, after = false): void {
  (after ? late : queued).add(job);
  if (scheduled) return;
  scheduled = true;
  if (typeof requestAnimationFrame === "function" && !document.hidden) requestAnimationFrame(run);
  // A hidden window gets no frames; still drain, just less often.
  else setTimeout(run, 50);
}

/** Runs every queued job now (tests, and before reading rendered state). */
export function flushFrames(): void {
  if (queued.size > 0 || late.size > 0) run();
}
