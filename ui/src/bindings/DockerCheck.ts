// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { DockerState } from "./DockerState";

/** `fix` says what to do when `state` is not `ok`; null when all is well. */
export type DockerCheck = { state: DockerState; message: string; fix: string | null };
