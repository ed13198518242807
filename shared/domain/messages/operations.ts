import { AUTHENTICATED, defineInternalOperation, defineModule, defineOperation } from '../../operations/definition.js';
import { Uuid } from '../../schemas/common.js';
import * as z from '../../schemas/zod.js';
import { Email } from '../subscribers/schema.js';
import { ListMessagesQuery, MessageList, MessageProjectParams } from './schema.js';
import { broadcastOperations } from './broadcast-operations.js';

/**
 * The messages operations (DESIGN D32): the message log of a subscriber and the broadcasts (REST only: the interface
 * fixes the tools), and the internal operations of the bots' `/start` and `/stop` commands, "E-mail me a sign-in link"
 * and the unsubscribe page.
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
    requestSignInLink: defineInternalOperation({
      id: 'requestSignInLink',
      summary:
        '"E-mail me a sign-in link" on the join page or the signed-out portal: queues a one-time portal link (15 minutes) to the project’s subscribers with that address; the same answer for every address.',
      tag: 'Subscribers',
      ability: AUTHENTICATED,
      teamWide: false,
      body: z.strictObject({ project_id: Uuid, email: Email }),
      output: z.object({ requested: z.literal(true) }),
      events: [],
      write: true,
      lockdown: 'exempt',
    }),
    unsubscribeFromMessages: defineInternalOperation({
      id: 'unsubscribeFromMessages',
      summary:
        'Opt out of non-essential messages with the token of an e-mail’s unsubscribe link (the page’s button or an RFC 8058 one-click POST).',
      tag: 'Subscribers',
      ability: null,
      teamWide: false,
      body: z.strictObject({ token: z.string().check(z.maxLength(200)) }),
      output: z.object({ unsubscribed: z.boolean() }),
      events: [],
      write: true,
      lockdown: 'exempt',
    }),
  },
});
