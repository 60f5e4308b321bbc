// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
export type ConversationSummary = {
  id: string;
  title: string;
  updatedAt: string;
  pendingApprovals: number;
  snippet: string | null;
};
