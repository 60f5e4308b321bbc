// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { DockerStatus } from "./DockerStatus";
import type { ImageStatus } from "./ImageStatus";
import type { ProviderStatus } from "./ProviderStatus";

/** `ready`: Docker answers, the sandbox image exists and a provider is configured. */
export type DoctorReport = { docker: DockerStatus; image: ImageStatus; provider: ProviderStatus; ready: boolean };
