// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { ProviderKindName } from "./ProviderKindName";

/** Where the model is. `hasApiKey` is read-only: keys are never sent to the UI. */
export type ProviderSettings = { kind: ProviderKindName; baseUrl?: string | null; model?: string | null; hasApiKey: boolean };
