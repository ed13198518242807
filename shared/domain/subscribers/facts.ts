import { defineFacts } from '../define-facts.js';

/**
 * Subscribers' abilities and keys (DESIGN D14, D17): one partition per project
 * (`TEAM#<team>#PROJECT#<project>#SUBSCRIBERS`, sort key = the id); `/v1/subscribers/{id}` knows no
 * project, so a reference item keyed by the id (a partition of its own, read by key only) names it; a
 * subscriber's e-mail address has a lookup item (`…#SUBSCRIBER_EMAIL#<sha256>`, sort key = the id), so "e-mail me a
 * sign-in link" finds the address's subscribers with one bounded Query.
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
    /** Partition of a project's subscribers with one e-mail address (the SHA-256 hex of the lower-cased address). */
    subscriberEmailPartition: (teamId: string, projectId: string, emailSha256: string) =>
      `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBER_EMAIL#${emailSha256}`,
    /** One subscriber with that address: written and removed with the subscriber's address (D32 sign-in links). */
    subscriberEmail: (teamId: string, projectId: string, emailSha256: string, subscriberId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBER_EMAIL#${emailSha256}`,
      sk: `SUBSCRIBER#${subscriberId}`,
    }),
  },
  sortKeyPrefix: { subscriber: 'SUBSCRIBER#' },
  entity: { subscriber: 'subscriber', subscriberRef: 'subscriber_ref', subscriberEmail: 'subscriber_email' },
});
