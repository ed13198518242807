import { defineFacts } from '../define-facts.js';

/**
 * The activity log's abilities and keys (DESIGN D14): its own partition per team (`TEAM#<team>#ACTIVITY`), so the hot
 * write path does not share the team's partition.
 */
export const activityFacts = defineFacts({
  abilities: {
    category: 'activity',
    label: 'Activity log',
    entries: [
      {
        value: 'activity:read',
        description: 'Read the activity log, including every tool invocation and the token behind it.',
        roles: ['developer', 'analyst'],
      },
      { value: 'activity:export', description: 'Export the activity log.', roles: ['analyst'] },
    ],
  },
  keys: {
    activityPartition: (teamId: string) => `TEAM#${teamId}#ACTIVITY`,
  },
  sortKeyPrefix: { activity: 'act_' },
  entity: { activity: 'activity' },
});
