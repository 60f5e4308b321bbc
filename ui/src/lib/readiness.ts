import type { DoctorReport } from "../bindings/DoctorReport";

/** Code cannot run (Docker, image), or there is no model at all: saved, or a local Ollama. */
export function needsDoctor(r: DoctorReport): boolean {
  return !r.ready || (!r.model.configured && r.model.ollamaModels.length === 0);
}
