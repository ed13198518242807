import { defineFacts } from '../define-facts.js';

/**
 * Message templates' abilities and keys (DESIGN D14, D32): one item per project and message kind in the team's
 * partition (`MESSAGE_TEMPLATE#<project>#<kind>`), present only when the creator changed the default.
 */
export const messageTemplatesFacts = defineFacts({
  abilities: {
    category: 'message_template',
    label: 'Message templates',
    entries: [
      {
        value: 'project-message-template:view',
        description: 'Read and preview the templates of the messages a project sends to its subscribers.',
        roles: ['developer', 'analyst', 'support', 'viewer'],
      },
      {
        value: 'project-message-template:update',
        description: 'Change a project\u2019s message templates or reset them to the defaults.',
        roles: ['developer'],
      },
    ],
  },
  keys: {
    messageTemplate: (teamId: string, projectId: string, kind: string) => ({
      pk: `TEAM#${teamId}`,
      sk: `MESSAGE_TEMPLATE#${projectId}#${kind}`,
    }),
  },
  entity: { messageTemplate: 'message_template' },
});
