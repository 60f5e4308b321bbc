// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { DockerCheck } from "./DockerCheck";
import type { ImageCheck } from "./ImageCheck";
import type { ModelCheck } from "./ModelCheck";

/** `ready`: Docker and the image are ready, so code can run. */
export type DoctorReport = { docker: DockerCheck; image: ImageCheck; model: ModelCheck; dataDir: string; ready: boolean };
