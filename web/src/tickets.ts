/** A ticket as the dashboard shows it, and the values its status and priority take: shared by the tickets screen and its components. */
export interface TicketShape {
  _id: string;
  ticketId: string;
  title: string;
  description: string;
  status: 'open' | 'in_progress' | 'resolved' | 'closed';
  priority: 'low' | 'medium' | 'high' | 'urgent';
  assigneeId: string | null;
  audienceId: string | null;
  resolutionDate: string | null;
  createdAt: string;
  updatedAt: string;
  [k: string]: unknown;
}

export const STATUSES = ['open', 'in_progress', 'resolved', 'closed'] as const;
export const PRIORITIES = ['low', 'medium', 'high', 'urgent'] as const;
