// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
export type ProfileInfo = {
  name: string;
  description: string;
  memoryBytes: number;
  cpus: number;
  pids: number;
  timeoutMs: number;
  network: string;
};
