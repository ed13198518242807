import type { PlatformType } from '../../catalogues/platform-types.js';
import { logger } from '../../logger.js';
import { callPlatform, platformAdapterFor, platformAdapters, type PlatformRuntime } from '../../platforms/adapters.js';
import type {
  PlatformAdapter,
  PlatformAdapters,
  PlatformResourceTarget,
  PlatformResult,
  PlatformTarget,
} from '../../platforms/platform-adapter.js';
import type { Item } from '../../store/requests.js';
import type { Store } from '../../store/store.js';
import {
  inviteLinkItem,
  inviteLinkResourceIds,
  readInviteLinkOwner,
  recordInviteLinks,
} from '../../store/subscriptions/invite-links.js';
import type { Transaction, UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { recordPlatformOutcome, type PendingInviteLinkRevocation } from '../members/platform-retry.js';
import type { Member, MemberInviteLink } from '../members/schema.js';
import type { Plan } from '../plans/schema.js';
import type { ProjectResource } from '../projects/schema.js';

/**
 * The platform calls of a subscription's access (DESIGN D15, D17): grants and revocations, invite links, and the calls
 * made after a commit.
 */

/**
 * The platform side of a committed access change (DESIGN D15, D22): a grant's calls were made before the
 * commit (their outcome is `outcome`, to record on the member); a revocation's calls are made after it:
 * the member's removal (`removeMember`) and the revocation of the personal invite links the ended access
 * had (`revokeInviteLinks`), with or without a member.
 */
export interface PlatformAccessFollowUp {
  /** The subscriber's member, or null (never joined: only invite links are revoked). */
  member: Member | null;
  /** The project and the subscription whose access changed (named in logs). */
  projectId: string;
  subscriptionId: string;
  platformType: PlatformType;
  action: 'grant_access' | 'revoke_access';
  /** False when the member is not to be removed (none, or banned: the ban keeps them out; a removal would lift it). */
  removeMember: boolean;
  resources: Pick<ProjectResource, 'id' | 'kind' | 'platform_resource_id'>[];
  /** The outcome of the grant calls already made (grants only). */
  outcome?: PlatformResult;
  /**
   * A revocation's grants made before the commit (a plan change's new roles, `role-access.ts`): their outcome, recorded
   * with the revocation's.
   */
  grantOutcome?: PlatformResult;
  /**
   * The URLs of the personal invite links to revoke (revocations only; bearer secrets, never logged). Their
   * invite-link items were marked `revoked_at` in the transition, so a join through one is not linked.
   */
  revokeInviteLinks: string[];
}

/**
 * The linked resources access through `plans` covers (DESIGN D28): every resource, but of the `role` ones
 * only those a plan names in `platform_role_ids` (a plan that names none covers every linked role).
 */
export function resourcesGrantedBy<T extends { kind: string; platform_resource_id: string }>(
  resources: readonly T[],
  plans: readonly Pick<Plan, 'platform_role_ids'>[],
): T[] {
  if (plans.some((plan) => plan.platform_role_ids === undefined)) return [...resources];
  const roles = new Set(plans.flatMap((plan) => plan.platform_role_ids ?? []));
  return resources.filter((resource) => resource.kind !== 'role' || roles.has(resource.platform_resource_id));
}

/**
 * The outcome of asking the platform for a subscriber's access to the project's resources ({@link grantOnPlatform}).
 */
export interface PlatformGrant {
  /** The personal invite link made per resource id (null: none made, or that resource's call failed). */
  links: Map<string, MemberInviteLink | null>;
  /** The links made, in resource order (what the subscription's `invite_links` holds). */
  inviteLinks: MemberInviteLink[];
  /** The first failure, or ok. */
  outcome: PlatformResult;
  /** Adds the invite-link items (a join through a link then links the member to the subscriber) to a unit of work. */
  record(tx: Transaction): void;
}

/** Who a grant is for: the subscriber (names and owns the links) and the person's platform id, if known. */
export interface PlatformGrantee {
  project_id: string;
  subscriber_id: string;
  platform_user_id: string | null;
}

/**
 * Asks the platform (`adapters`, default the service's) for `grantee`'s access to each resource (DESIGN
 * D22), outside any transaction, each call with the adapter's retries. Never throws: a failure is the
 * outcome (the other resources are still asked). The personal invite links made are returned and, by
 * `record`, written as invite-link items in the caller's unit of work.
 */
export async function grantOnPlatform(
  runtime: PlatformRuntime,
  teamId: string,
  platformType: PlatformType,
  grantee: PlatformGrantee,
  resources: ProjectResource[],
  adapters?: PlatformAdapters,
): Promise<PlatformGrant> {
  const links = new Map<string, MemberInviteLink | null>();
  const items: Item[] = [];
  let outcome: PlatformResult = { ok: true };
  const adapter = platformAdapterFor(platformType, adapters ?? platformAdapters(runtime));
  const target = { team_id: teamId, ...grantee };
  for (const resource of resources) {
    const result = await callPlatform(() =>
      adapter.grantAccess(target, { kind: resource.kind, platform_resource_id: resource.platform_resource_id }),
    );
    if (!result.ok) {
      if (outcome.ok) outcome = result;
      links.set(resource.id, null);
      continue;
    }
    const link = ('invite_link' in result ? result.invite_link : undefined) ?? null;
    links.set(resource.id, link);
    if (link) {
      const made = { projectId: grantee.project_id, subscriberId: grantee.subscriber_id, resourceId: resource.id };
      items.push(inviteLinkItem(teamId, { ...made, url: link.url, expiresAt: link.expires_at }, runtime.clock.nowMs()));
    }
  }
  const inviteLinks = [...links.values()].filter((link): link is MemberInviteLink => link !== null);
  return { links, inviteLinks, outcome, record: (tx) => recordInviteLinks(tx, items) };
}

/**
 * Asks `adapter` to take `target`'s access to each resource away (DESIGN D22; Telegram: banChatMember
 * then unbanChatMember), outside any transaction. Never throws: the first failure is the outcome.
 */
export async function revokeOnPlatform(
  adapter: PlatformAdapter,
  target: PlatformTarget,
  resources: PlatformResourceTarget[],
): Promise<PlatformResult> {
  let outcome: PlatformResult = { ok: true };
  for (const resource of resources) {
    const result = await callPlatform(() => adapter.revokeAccess(target, resource));
    if (!result.ok && outcome.ok) outcome = result;
  }
  return outcome;
}

/**
 * The links of `links` still working at `nowMs` (epoch milliseconds): those without expiry or expiring later, by URL.
 */
export function liveInviteLinks(links: readonly MemberInviteLink[], nowMs: number): string[] {
  return links.filter((link) => isLiveInviteLink(link, nowMs)).map((link) => link.url);
}

/** Whether `link` still works at `nowMs` (epoch milliseconds): no expiry, or expiring later. */
export function isLiveInviteLink(link: MemberInviteLink, nowMs: number): boolean {
  return link.expires_at === null || Date.parse(link.expires_at) > nowMs;
}

/**
 * The subscriber whose personal invite link `url` is (its invite-link item, one strongly consistent
 * GetItem), or undefined: no such item, or the link was revoked when the subscriber's access ended (a join
 * Telegram still let through links no one).
 */
export async function subscriberInvitedBy(
  store: Store,
  teamId: string,
  projectId: string,
  url: string,
): Promise<string | undefined> {
  const invite = await readInviteLinkOwner(store, teamId, projectId, url);
  return invite && !invite.revoked_at ? invite.subscriber_id : undefined;
}

/**
 * The linked resource each invite link of `urls` was made for (its invite-link item's `resource_id`,
 * read in one BatchGetItem), among `resources`; a link whose item names none is taken as the project's
 * only chat when there is one, and left out otherwise.
 */
async function inviteLinkResources(
  store: Store,
  teamId: string,
  projectId: string,
  urls: string[],
  resources: PlatformAccessFollowUp['resources'],
): Promise<PendingInviteLinkRevocation[]> {
  const ids = await inviteLinkResourceIds(store, teamId, projectId, urls);
  const chats = resources.filter((resource) => resource.kind === 'channel' || resource.kind === 'group');
  const found: PendingInviteLinkRevocation[] = [];
  for (const url of urls) {
    const resource =
      resources.find((candidate) => candidate.id === ids.get(url)) ?? (chats.length === 1 ? chats[0] : undefined);
    if (resource)
      found.push({ resource: { kind: resource.kind, platform_resource_id: resource.platform_resource_id }, url });
  }
  return found;
}

/**
 * Revokes each invite link of `revocations` through `adapter` (DESIGN D22; Telegram:
 * revokeChatInviteLink, with the adapter's retries), outside any transaction. Never throws: answers the
 * first failure (or ok) and the revocations that failed.
 */
export async function revokeInviteLinksOnPlatform(
  adapter: PlatformAdapter,
  target: { team_id: string; project_id: string },
  revocations: PendingInviteLinkRevocation[],
): Promise<{ outcome: PlatformResult; failed: PendingInviteLinkRevocation[] }> {
  let outcome: PlatformResult = { ok: true };
  const failed: PendingInviteLinkRevocation[] = [];
  for (const revocation of revocations) {
    const result = await callPlatform(() => adapter.revokeInviteLink(target, revocation.resource, revocation.url));
    if (result.ok) continue;
    failed.push(revocation);
    if (outcome.ok) outcome = result;
  }
  return { outcome, failed };
}

/**
 * Completes a committed access change (D15, D22): a revocation removes the member (unless `removeMember` is false) and
 * revokes the ended invite links; a grant's (pre-commit) outcome is only recorded. On the member ({@link
 * recordPlatformOutcome}; a banned member's error is never cleared), else a failure is logged, never a link. Never
 * throws.
 */
export async function applyPlatformAccess(
  runtime: UnitOfWorkRuntime & PlatformRuntime,
  teamId: string,
  followUp: PlatformAccessFollowUp | null,
  adapters?: PlatformAdapters,
): Promise<void> {
  if (!followUp) return;
  const { member } = followUp;
  try {
    let outcome: PlatformResult = followUp.outcome ?? { ok: true };
    let failedLinks: PendingInviteLinkRevocation[] = [];
    if (!followUp.outcome) {
      const adapter = platformAdapterFor(followUp.platformType, adapters ?? platformAdapters(runtime));
      if (member && followUp.removeMember) {
        outcome = await revokeOnPlatform(
          adapter,
          { team_id: teamId, project_id: member.project_id, platform_user_id: member.platform_user_id },
          followUp.resources,
        );
      }
      if (followUp.revokeInviteLinks.length > 0) {
        const revocations = await inviteLinkResources(
          runtime.store,
          teamId,
          followUp.projectId,
          followUp.revokeInviteLinks,
          followUp.resources,
        );
        const links = await revokeInviteLinksOnPlatform(
          adapter,
          { team_id: teamId, project_id: followUp.projectId },
          revocations,
        );
        failedLinks = links.failed;
        if (!links.outcome.ok && outcome.ok) outcome = links.outcome;
      }
      if (followUp.grantOutcome && !followUp.grantOutcome.ok && outcome.ok) outcome = followUp.grantOutcome;
    }
    if (member && (followUp.removeMember || followUp.action === 'grant_access' || !outcome.ok)) {
      await recordPlatformOutcome(runtime, teamId, member, followUp.action, outcome, failedLinks);
    } else if (!outcome.ok) {
      logger.warn('invite links not revoked; they stop working when they expire', {
        subscription_id: followUp.subscriptionId,
        project_id: followUp.projectId,
        links: failedLinks.length,
        reason: outcome.reason,
      });
    }
  } catch (error) {
    logger.error('platform access not recorded', {
      subscription_id: followUp.subscriptionId,
      member_id: member?.id ?? null,
      error: error as Error,
    });
  }
}
