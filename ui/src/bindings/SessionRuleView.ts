// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
export type SessionRuleView = { codeHash: string; language: string; code: string; createdAt: string };
