// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { RiskLevel } from "./RiskLevel";

export type RiskReason = { level: RiskLevel; message: string; snippet: string; line: number };
