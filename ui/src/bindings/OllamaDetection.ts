// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
/** A local Ollama that answered, with the models it serves. */
export type OllamaDetection = { baseUrl: string; models: Array<string> };
