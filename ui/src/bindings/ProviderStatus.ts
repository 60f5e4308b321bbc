// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
import type { OllamaDetection } from "./OllamaDetection";
import type { ProviderKind } from "./ProviderKind";

export type ProviderStatus = {
  configured: boolean;
  kind: ProviderKind | null;
  baseUrl: string | null;
  model: string | null;
  apiKeyStored: boolean;
  message: string;
  ollama: OllamaDetection | null;
};
