import { defineFacts } from '../define-facts.js';

/**
 * Message templates' keys (DESIGN D14, D32; reading them needs `project:view`, changing them `project:update`: the
 * interface fixes the ability catalogue): one item per project and message kind in the team's partition
 * (`MESSAGE_TEMPLATE#<project>#<kind>`), present only when the creator changed the default.
 */
export const messageTemplatesFacts = defineFacts({
  keys: {
    messageTemplate: (teamId: string, projectId: string, kind: string) => ({
      pk: `TEAM#${teamId}`,
      sk: `MESSAGE_TEMPLATE#${projectId}#${kind}`,
    }),
  },
  entity: { messageTemplate: 'message_template' },
});
