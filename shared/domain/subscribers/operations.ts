import { defineModule, defineOperation } from '../../operations/definition.js';
import {
  CreateSubscriberRequest,
  ExportSubscribersQuery,
  ListSubscribersQuery,
  RemoveSubscriberRequest,
  Subscriber,
  SubscriberExportPage,
  SubscriberIdParams,
  SubscriberList,
  SubscriberModeration,
  SubscriberProjectParams,
  UpdateSubscriberRequest,
} from './schema.js';

/**
 * The subscriber operations (DESIGN D10, D13, D17, D22). A project's subscribers are listed, created and
 * exported under the project; one subscriber is addressed by its id alone (`/v1/subscribers/{id}`)
 * within the team. Ban, unban and kick act on the subscriber's member through the platform adapter.
 */
export const subscribersModule = defineModule({
  folder: 'subscribers',
  operations: {
    listSubscribers: defineOperation({
      id: 'listSubscribers',
      summary:
        'List a project’s subscribers (identifiers only, no contact details), optionally by status, plan or e-mail prefix.',
      tag: 'Subscribers',
      ability: 'project-user:view-any',
      teamWide: false,
      params: SubscriberProjectParams,
      query: ListSubscribersQuery,
      output: SubscriberList,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/subscribers', successStatus: 200 },
      tool: {
        name: 'list_subscribers',
        title: 'List subscribers',
        kind: 'read',
        description:
          'List a project\u2019s subscribers (identifiers only, no contact details); filter by status, plan_id or email_prefix.',
      },
    }),
    createSubscriber: defineOperation({
      id: 'createSubscriber',
      summary:
        'Create a subscriber in a project (a creator’s own import or site); with a platform user id it is linked to that member (emits member.updated then).',
      tag: 'Subscribers',
      ability: 'project-user:update',
      teamWide: false,
      params: SubscriberProjectParams,
      body: CreateSubscriberRequest,
      output: Subscriber,
      events: ['member.updated'],
      rest: { method: 'POST', path: '/v1/projects/{project_id}/subscribers', successStatus: 201 },
      tierLimit: 'subscribers',
    }),
    exportSubscribers: defineOperation({
      id: 'exportSubscribers',
      summary:
        'Export a project’s subscribers, one page at a time, as NDJSON lines (one Subscriber per line; e-mail and phone only for consented subscribers and callers holding project-user:view).',
      tag: 'Subscribers',
      ability: 'project-user:export',
      teamWide: false,
      params: SubscriberProjectParams,
      query: ExportSubscribersQuery,
      output: SubscriberExportPage,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/subscribers/export', successStatus: 200 },
    }),
    getSubscriber: defineOperation({
      id: 'getSubscriber',
      summary: 'Read one subscriber, including e-mail and phone when the subscriber consented.',
      tag: 'Subscribers',
      ability: 'project-user:view',
      teamWide: false,
      params: SubscriberIdParams,
      output: Subscriber,
      events: [],
      rest: { method: 'GET', path: '/v1/subscribers/{id}', successStatus: 200 },
      tool: {
        name: 'get_subscriber',
        title: 'Get subscriber',
        kind: 'read',
        description: 'Read one subscriber, including e-mail and phone when the subscriber consented.',
      },
    }),
    updateSubscriber: defineOperation({
      id: 'updateSubscriber',
      summary:
        'Change a subscriber’s name, contact data, consent, platform user id or provider customer id (emits member.updated when they have a member).',
      tag: 'Subscribers',
      ability: 'project-user:update',
      teamWide: false,
      params: SubscriberIdParams,
      body: UpdateSubscriberRequest,
      output: Subscriber,
      events: ['member.updated'],
      rest: { method: 'POST', path: '/v1/subscribers/{id}', successStatus: 200 },
    }),
    banSubscriber: defineOperation({
      id: 'banSubscriber',
      summary:
        'Ban a subscriber from the project’s community through its platform and suspend their live subscriptions (emits member.banned and subscription.suspended; a platform failure is recorded on the member).',
      tag: 'Subscribers',
      ability: 'project-user:ban',
      teamWide: false,
      params: SubscriberIdParams,
      body: RemoveSubscriberRequest,
      output: SubscriberModeration,
      events: ['member.banned', 'subscription.suspended'],
      rest: { method: 'POST', path: '/v1/subscribers/{id}/ban', successStatus: 200 },
      tool: {
        name: 'ban_subscriber',
        title: 'Ban subscriber',
        kind: 'destructive',
        description: 'Ban a subscriber from the project\u2019s community and suspend their live subscriptions.',
      },
    }),
    unbanSubscriber: defineOperation({
      id: 'unbanSubscriber',
      summary:
        'Lift a subscriber’s ban (emits member.unbanned); suspended subscriptions stay suspended until unsuspended.',
      tag: 'Subscribers',
      ability: 'project-user:ban',
      teamWide: false,
      params: SubscriberIdParams,
      output: SubscriberModeration,
      events: ['member.unbanned'],
      rest: { method: 'POST', path: '/v1/subscribers/{id}/unban', successStatus: 200 },
    }),
    kickSubscriber: defineOperation({
      id: 'kickSubscriber',
      summary:
        'Remove a subscriber from the project’s community without banning them; subscriptions are unchanged (emits member.kicked).',
      tag: 'Subscribers',
      ability: 'project-user:kick',
      teamWide: false,
      params: SubscriberIdParams,
      body: RemoveSubscriberRequest,
      output: SubscriberModeration,
      events: ['member.kicked'],
      rest: { method: 'POST', path: '/v1/subscribers/{id}/kick', successStatus: 200 },
      tool: {
        name: 'kick_subscriber',
        title: 'Kick subscriber',
        kind: 'destructive',
        description: 'Remove a subscriber from the project\u2019s community without banning them.',
      },
    }),
  },
});
