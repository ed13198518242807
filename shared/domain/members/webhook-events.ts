import * as z from '../../schemas/zod.js';
import { defineEvent } from '../define-facts.js';
import { ProjectResource } from '../projects/schema.js';
import { Subscriber } from '../subscribers/schema.js';
import { Subscription } from '../subscriptions/schema.js';
import { Member, MemberInviteLink } from './schema.js';

const memberData = z.object({
  member: Member,
  subscriber: z
    .nullable(Subscriber)
    .check(z.describe('The member\u2019s linked subscriber, or null for a free member.')),
});
const memberUnbanData = z.object({
  member: z
    .nullable(Member)
    .check(
      z.describe('The member (now `left`), or null when the subscriber was banned before ever joining the community.'),
    ),
  subscriber: Subscriber.check(z.describe('The subscriber, active again.')),
});
const memberRemovalData = z.object({
  member: z.nullable(Member).check(z.describe('The member, or null when the subscriber never joined the community.')),
  subscriber: z.nullable(Subscriber).check(z.describe('The banned or kicked subscriber, or null for a free member.')),
  reason: z.nullable(z.string()),
});
const memberAccessData = z.object({
  member: z
    .nullable(Member)
    .check(z.describe('The subscriber\u2019s member, or null when they have not joined the community.')),
  subscriber: Subscriber,
  resource: ProjectResource,
  invite_link: z
    .optional(z.nullable(MemberInviteLink))
    .check(
      z.describe(
        'access_granted on Telegram: the subscriber\u2019s personal single-use invite link to the resource, or null when none was made (no bot, the platform refused).',
      ),
    ),
});

/**
 * Members' webhook events (`member.*`, DESIGN D17): joined, converted, churned, banned, kicked and related community
 * changes.
 */
export const membersEvents = [
  defineEvent(
    'member.joined',
    'project-user:view-any',
    true,
    memberData,
    'A person joined the project\u2019s community.',
  ),
  defineEvent(
    'member.left',
    'project-user:view-any',
    true,
    memberData,
    'A member left the project\u2019s community of their own accord.',
  ),
  defineEvent(
    'member.updated',
    'project-user:view-any',
    true,
    memberData,
    'A member\u2019s display name or profile changed.',
  ),
  defineEvent(
    'member.converted',
    'project-user:view-any',
    true,
    z.object({
      member: z
        .nullable(Member)
        .check(z.describe('The subscriber\u2019s member, or null when they have not joined the community.')),
      subscriber: Subscriber,
      subscription: Subscription,
    }),
    'A free member became a paying subscriber.',
  ),
  defineEvent(
    'member.churned',
    'project-user:view-any',
    true,
    z.object({
      member: z
        .nullable(Member)
        .check(z.describe('The subscriber\u2019s member, or null when they have not joined the community.')),
      subscriber: Subscriber,
      subscription: z.nullable(Subscription),
    }),
    'A paying member has no live subscription any more.',
  ),
  defineEvent(
    'member.banned',
    'project-user:view-any',
    true,
    memberRemovalData,
    'A member was banned from the project\u2019s community.',
  ),
  defineEvent(
    'member.unbanned',
    'project-user:view-any',
    true,
    memberUnbanData,
    'A member\u2019s (or a subscriber\u2019s) ban was lifted.',
  ),
  defineEvent(
    'member.kicked',
    'project-user:view-any',
    true,
    memberRemovalData,
    'A member was removed from the project\u2019s community without a ban.',
  ),
  defineEvent(
    'member.access_granted',
    'project-user:view-any',
    true,
    memberAccessData,
    'A member was given access to a linked resource.',
  ),
  defineEvent(
    'member.access_revoked',
    'project-user:view-any',
    true,
    memberAccessData,
    'A member\u2019s access to a linked resource was removed.',
  ),
] as const;
