import { defineModule, defineOperation } from '../../operations/definition.js';
import { ActivityList, ActivityQuery } from './schema.js';

/** The activity-log operations (interface "Tool-server authorization" 3). */
export const activityModule = defineModule({
  folder: 'activity',
  operations: {
    listActivity: defineOperation({
      id: 'listActivity',
      summary: 'Read activity log entries, newest first; each names the invoking token.',
      tag: 'Activity',
      ability: 'activity:read',
      teamWide: true,
      query: ActivityQuery,
      output: ActivityList,
      events: [],
      rest: { method: 'GET', path: '/v1/activity', successStatus: 200 },
      tool: { name: 'get_activity_log', title: 'Get activity log', kind: 'read' },
    }),
  },
});
