import { defineOperation } from '../../operations/definition.js';
import { ListQuery } from '../../schemas/common.js';
import {
  Broadcast,
  BroadcastIdParams,
  BroadcastList,
  BroadcastProjectParams,
  CreateBroadcastRequest,
} from './broadcast-schema.js';

/**
 * The broadcast operations (DESIGN D32), part of the messages module: REST only (the interface fixes the tools) and on
 * the subscriber abilities (it fixes the abilities too): sending needs `project-user:update`, reading
 * `project-user:view-any`.
 */
export const broadcastOperations = {
  createBroadcast: defineOperation({
    id: 'createBroadcast',
    summary:
      'Send a broadcast to the consenting subscribers whose subscriptions match the audience (plans and/or statuses); answers 202 with the job, which queues the messages in the background.',
    tag: 'Subscribers',
    ability: 'project-user:update',
    teamWide: false,
    params: BroadcastProjectParams,
    body: CreateBroadcastRequest,
    output: Broadcast,
    events: [],
    rest: { method: 'POST', path: '/v1/projects/{project_id}/broadcasts', successStatus: 202 },
  }),
  listBroadcasts: defineOperation({
    id: 'listBroadcasts',
    summary: 'List the broadcasts of a project, newest first, with their counts.',
    tag: 'Subscribers',
    ability: 'project-user:view-any',
    teamWide: false,
    params: BroadcastProjectParams,
    query: ListQuery,
    output: BroadcastList,
    events: [],
    rest: { method: 'GET', path: '/v1/projects/{project_id}/broadcasts', successStatus: 200 },
  }),
  getBroadcast: defineOperation({
    id: 'getBroadcast',
    summary: 'Get a broadcast: its audience, status and counts (queued, sent, failed, skipped).',
    tag: 'Subscribers',
    ability: 'project-user:view-any',
    teamWide: false,
    params: BroadcastIdParams,
    output: Broadcast,
    events: [],
    rest: { method: 'GET', path: '/v1/projects/{project_id}/broadcasts/{id}', successStatus: 200 },
  }),
};
