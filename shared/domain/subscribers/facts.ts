import { defineFacts } from '../define-facts.js';

/**
 * Subscribers' abilities and keys (DESIGN D14, D17): one partition per project
 * (`TEAM#<team>#PROJECT#<project>#SUBSCRIBERS`, sort key = the id); `/v1/subscribers/{id}` knows no
 * project, so a reference item keyed by the id (a partition of its own, read by key only) names it.
 */
export const subscribersFacts = defineFacts({
  abilities: {
    category: 'subscriber',
    label: 'Subscribers',
    entries: [
      {
        value: 'project-user:view-any',
        description: 'List the subscribers of a project (identifiers only, no contact details).',
        roles: ['developer', 'analyst', 'support', 'viewer'],
      },
      {
        value: 'project-user:view',
        description: 'Read one subscriber, including e-mail and phone when the subscriber consented.',
        roles: ['support'],
      },
      {
        value: 'project-user:update',
        description: 'Change a subscriber\u2019s display name, notes and tags.',
        roles: ['support'],
      },
      {
        value: 'project-user:ban',
        description: 'Ban or unban a subscriber from a project\u2019s community.',
        roles: ['support'],
      },
      {
        value: 'project-user:kick',
        description: 'Remove a subscriber from a project\u2019s community without banning them.',
        roles: ['support'],
      },
      { value: 'project-user:export', description: 'Export the subscriber list of a project.', roles: ['analyst'] },
    ],
  },
  keys: {
    subscriberPartition: (teamId: string, projectId: string) => `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBERS`,
    subscriber: (teamId: string, projectId: string, subscriberId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBERS`,
      sk: `SUBSCRIBER#${subscriberId}`,
    }),
    subscriberRef: (teamId: string, subscriberId: string) => ({
      pk: `TEAM#${teamId}#SUBSCRIBER#${subscriberId}`,
      sk: 'SUBSCRIBER_REF',
    }),
  },
  sortKeyPrefix: { subscriber: 'SUBSCRIBER#' },
  entity: { subscriber: 'subscriber', subscriberRef: 'subscriber_ref' },
});
