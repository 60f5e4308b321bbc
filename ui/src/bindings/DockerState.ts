// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
export type DockerState = "ok" | "notInstalled" | "notRunning" | "noPermission" | "error";
