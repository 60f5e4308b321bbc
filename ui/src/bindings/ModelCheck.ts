// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
/** `configured`: a provider is saved in Settings (else the environment or a local Ollama is used). */
export type ModelCheck = {
  configured: boolean;
  ollamaModels: Array<string>;
  keyringAvailable: boolean;
  keyringMessage: string;
};
