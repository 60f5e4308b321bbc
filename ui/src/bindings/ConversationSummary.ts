// Hand-written to the shared contract until ts-rs generates this file (CORE overwrites it).
/** Times are milliseconds since the Unix epoch. `snippet`: search results only. */
export type ConversationSummary = {
  id: string;
  title: string;
  updatedAt: number;
  pendingApprovals: number;
  snippet?: string;
};
