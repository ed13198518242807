import { createHash } from 'node:crypto';
import { isoTime } from '../../clock.js';
import * as z from '../../schemas/zod.js';
import { entity, keys } from '../keys.js';
import { recordParser } from '../records.js';
import type { Item } from '../requests.js';
import { itemWithKey, type Store } from '../store.js';
import type { Transaction } from '../unit-of-work.js';
import { ttlAttribute } from '../ttl.js';

/**
 * Invite-link items (DESIGN D22): one per personal invite link, keyed by the SHA-256 of its URL (a bearer
 * secret never stands in a key), naming the subscriber and the resource it was made for.
 */

/** How long an invite-link item is kept after the link expires (housekeeping TTL), in seconds. */
const INVITE_LINK_RETENTION_SECONDS = 30 * 24 * 3600;

/** The SHA-256 (hex) of an invite link's URL: the key of its item (never the URL itself in a key). */
function inviteLinkHash(url: string): string {
  return createHash('sha256').update(url, 'utf8').digest('hex');
}

const inviteLinkKey = (teamId: string, projectId: string, url: string) =>
  keys.inviteLink(teamId, projectId, inviteLinkHash(url));

/** A link made for `resourceId` of a subscriber of a project: what its item records. */
export interface MadeInviteLink {
  projectId: string;
  subscriberId: string;
  resourceId: string;
  url: string;
  /** ISO 8601, or null for a link without expiry. */
  expiresAt: string | null;
}

/**
 * The item of a made invite link, to put with {@link recordInviteLinks}; kept for the retention after the link
 * expires (`nowMs`, epoch ms, standing in for a link without expiry).
 */
export function inviteLinkItem(teamId: string, link: MadeInviteLink, nowMs: number): Item {
  const expiresMs = link.expiresAt ? Date.parse(link.expiresAt) : nowMs;
  return {
    ...inviteLinkKey(teamId, link.projectId, link.url),
    entity: entity.inviteLink,
    team_id: teamId,
    project_id: link.projectId,
    subscriber_id: link.subscriberId,
    resource_id: link.resourceId,
    link_expires_at: link.expiresAt,
    expires_at: ttlAttribute(expiresMs, INVITE_LINK_RETENTION_SECONDS),
  };
}

/** Adds the puts of invite-link items ({@link inviteLinkItem}) to a unit of work (unconditional). */
export function recordInviteLinks(tx: Transaction, items: readonly Item[]): void {
  for (const item of items) tx.put(item);
}

/**
 * Adds to `tx` the marking of the invite-link items of `urls` as revoked (`revoked_at` = `nowMs`, ISO 8601).
 * Unconditional: an item gone meanwhile comes back as a bare marker that expires with the retention.
 */
export function markInviteLinksRevoked(
  tx: Transaction,
  teamId: string,
  projectId: string,
  urls: readonly string[],
  nowMs: number,
): void {
  for (const url of urls) {
    tx.update(inviteLinkKey(teamId, projectId, url), {
      expression: 'SET revoked_at = :now, expires_at = if_not_exists(expires_at, :expires)',
      values: { ':now': isoTime(nowMs), ':expires': ttlAttribute(nowMs, INVITE_LINK_RETENTION_SECONDS) },
    });
  }
}

/** What a join reads of an invite-link item: whose link it is, and whether it was revoked (ISO 8601). */
const parseInviteLinkOwner = recordParser(
  entity.inviteLink,
  z.object({ subscriber_id: z.string(), revoked_at: z.optional(z.string()) }),
);

/**
 * The owner of the invite link `url` (one strongly consistent GetItem): its subscriber id and revocation time, or
 * undefined.
 */
export async function readInviteLinkOwner(
  store: Store,
  teamId: string,
  projectId: string,
  url: string,
): Promise<{ subscriber_id: string; revoked_at?: string } | undefined> {
  const item = await store.get(inviteLinkKey(teamId, projectId, url));
  return item ? parseInviteLinkOwner(item) : undefined;
}

/**
 * The linked resource id each invite link of `urls` was made for, by URL: its item's `resource_id` (one
 * BatchGetItem; none without URLs), absent for a link whose item is gone or names none.
 */
export async function inviteLinkResourceIds(
  store: Store,
  teamId: string,
  projectId: string,
  urls: readonly string[],
): Promise<Map<string, string>> {
  if (urls.length === 0) return new Map();
  const items = await store.batchGet(urls.map((url) => inviteLinkKey(teamId, projectId, url)));
  const ids = new Map<string, string>();
  for (const url of urls) {
    const resourceId = itemWithKey(items, inviteLinkKey(teamId, projectId, url))?.resource_id;
    if (typeof resourceId === 'string') ids.set(url, resourceId);
  }
  return ids;
}
