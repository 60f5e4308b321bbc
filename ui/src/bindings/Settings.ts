// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { ApprovalPolicy } from "./ApprovalPolicy";
import type { ProviderSettings } from "./ProviderSettings";

export type Settings = { provider: ProviderSettings | null; profile: string; policy: ApprovalPolicy };
