// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { ProviderKind } from "./ProviderKind";

/** Where the model is; the API key is never part of it (it lives in the OS keyring). */
export type ProviderSettings = { kind: ProviderKind; baseUrl: string | null; model: string | null };
