/** Site-visit statuses (DECISIONS): New on creation, then moved by the operator's workflow only. */
export const VISIT_STATUSES = ['New', 'Scheduled', 'Dispatched', 'Completed'] as const;
export type VisitStatus = (typeof VISIT_STATUSES)[number];

export const INITIAL_STATUS: VisitStatus = 'New';
