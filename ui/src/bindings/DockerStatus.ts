// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { DockerState } from "./DockerState";

/** `fix` says what to do when `state` is not `ok`. */
export type DockerStatus = { state: DockerState; message: string; fix: string | null; version: string | null };
