import { AUTHENTICATED, defineInternalOperation, defineModule, defineOperation } from '../../operations/definition.js';
import { Uuid } from '../../schemas/common.js';
import * as z from '../../schemas/zod.js';
import { ListMessagesQuery, MessageList, MessageProjectParams } from './schema.js';
import { broadcastOperations } from './broadcast-operations.js';

/**
 * The messages operations (DESIGN D32): the message log of a subscriber and the broadcasts (REST only: the interface
 * fixes the tools), and the internal operation of the bots' `/start` and `/stop` commands.
 */
export const messagesModule = defineModule({
  folder: 'messages',
  operations: {
    listMessages: defineOperation({
      id: 'listMessages',
      summary:
        'List the messages sent to one subscriber of a project, newest first: kind, channel, status and times (never a text or a link).',
      tag: 'Subscribers',
      ability: 'project-user:view-any',
      teamWide: false,
      params: MessageProjectParams,
      query: ListMessagesQuery,
      output: MessageList,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/messages', successStatus: 200 },
    }),
    ...broadcastOperations,
  },
  internal: {
    recordBotCommand: defineInternalOperation({
      id: 'recordBotCommand',
      summary:
        'A platform user started the project’s bot (`/start`: bot messages may reach them) or stopped it (`/stop`: opted out of non-essential messages).',
      tag: 'Subscribers',
      ability: AUTHENTICATED,
      teamWide: false,
      body: z.strictObject({
        project_id: Uuid,
        platform_user_id: z.string().check(z.minLength(1), z.maxLength(64)),
        command: z.enum(['start', 'stop']),
      }),
      output: z.object({ found: z.boolean() }),
      events: [],
      write: true,
      lockdown: 'exempt',
    }),
  },
});
