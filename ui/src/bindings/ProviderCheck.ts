// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
export type ProviderCheck = { ok: boolean; model: string | null; message: string };
