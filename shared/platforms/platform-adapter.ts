import type { PlatformType } from '../catalogues/platform-types.js';
import { ProjectResource } from '../domain/projects/schema.js';
import * as z from '../schemas/zod.js';
import { entity } from '../store/keys.js';
import { recordParser } from '../store/records.js';

/**
 * The `PlatformAdapter` port (DESIGN §2, D17, D22): what the domain asks of a community platform for one person of one
 * project (grant, revoke, invite-link revocation, kick, ban). Called OUTSIDE any transaction after the commit: a
 * failure is recorded on the member (`platform_error`), never rolled back. Never returns credentials (bot tokens).
 */

/** Who a platform call is about. */
export interface PlatformTarget {
  team_id: string;
  project_id: string;
  /** The person's id on the project's platform. */
  platform_user_id: string;
}

/** Who an access grant is for: the person's platform id may be unknown yet (a subscriber who never joined). */
interface PlatformGrantTarget {
  team_id: string;
  project_id: string;
  /** The person's id on the platform, or null when they have not joined yet. */
  platform_user_id: string | null;
  /** The subscriber the grant is for (names a personal invite link). */
  subscriber_id: string;
}

/** A personal, single-use invite link to a linked resource (Telegram), made when access is granted. */
interface PlatformInviteLink {
  /** The link the subscriber follows to join (single use). */
  url: string;
  /** When the link stops working (ISO 8601), or null when it does not expire. */
  expires_at: string | null;
}

/** Whose project a call is about, without a person (an invite link is the project's, not a platform user's). */
export interface PlatformProjectTarget {
  team_id: string;
  project_id: string;
}

/** A linked platform resource a grant or revoke is about (`ProjectResource` essentials). */
export const PlatformResourceTarget = z.pick(ProjectResource, { kind: true, platform_resource_id: true });
/** A linked platform resource (see {@link PlatformResourceTarget}). */
export type PlatformResourceTarget = z.infer<typeof PlatformResourceTarget>;

/**
 * Parses a project item read for its linked resources (projection `resources`; absent: none). Throws StoredRecordError
 * naming its key when they do not match.
 */
export const parseProjectResources = recordParser(
  entity.project,
  z.object({ resources: z.optional(z.array(PlatformResourceTarget)) }),
);

/**
 * The outcome of a platform call: done, or why not (`reason` is shown on the member: no credentials,
 * no platform internals). Adapters may also throw for an unexpected failure, which the caller records
 * with a generic reason.
 */
export type PlatformResult = { ok: true } | { ok: false; reason: string };

/** The outcome of an access grant: done (with the personal invite link the platform made, if any), or why not. */
export type PlatformGrantResult = { ok: true; invite_link?: PlatformInviteLink } | { ok: false; reason: string };

/** Where a person is in the project's community (an access audit's check, DESIGN D34), or why it is not known. */
export type PlatformPresenceResult =
  { ok: true; presence: 'present' | 'left' | 'kicked' | 'unknown' } | { ok: false; reason: string };

/** One page of a community's members with the roles they hold (DESIGN D34), and the cursor of the next (null: last). */
export type PlatformMemberPage =
  | { ok: true; members: { platform_user_id: string; role_ids: string[] }[]; next: string | null }
  | { ok: false; reason: string };

/** One platform's adapter. */
export interface PlatformAdapter {
  /** The platform this adapter talks to. */
  readonly platform: PlatformType;
  /**
   * Gives the person access to a linked resource (invite, role, membership); may answer with a personal
   * single-use invite link (Telegram), which the caller records and sends in `member.access_granted`.
   */
  grantAccess(target: PlatformGrantTarget, resource: PlatformResourceTarget): Promise<PlatformGrantResult>;
  /**
   * Makes a personal invite link that `grantAccess` answered for `resource` stop working (Telegram:
   * `revokeChatInviteLink`), when the access it was made for ends: an unused link must not let anyone
   * join. `url` is a bearer secret: never put it in the result's `reason`. Platforms without links: ok.
   */
  revokeInviteLink(
    target: PlatformProjectTarget,
    resource: PlatformResourceTarget,
    url: string,
  ): Promise<PlatformResult>;
  /** Takes the person's access to a linked resource away. */
  revokeAccess(target: PlatformTarget, resource: PlatformResourceTarget): Promise<PlatformResult>;
  /** Removes the person from the community without a ban (they may come back). */
  kick(target: PlatformTarget): Promise<PlatformResult>;
  /** Removes the person and keeps them out; `reason` (or null) may be passed to the platform. */
  ban(target: PlatformTarget, reason: string | null): Promise<PlatformResult>;
  /** Lifts a ban (the person is not re-added; they may join again). */
  unban(target: PlatformTarget): Promise<PlatformResult>;
  /** Where the person is in the community now (platforms that can tell: Discord, Telegram's `getChatMember`). */
  presenceOf?(target: PlatformTarget): Promise<PlatformPresenceResult>;
  /** A page of the community's members after `after` (a platform user id; null: the first), where it can be listed. */
  listMembers?(target: PlatformProjectTarget, after: string | null): Promise<PlatformMemberPage>;
}

/**
 * Adapters by platform type; a platform without its own adapter gets the `web` behaviour (see `platformAdapterFor`).
 */
export type PlatformAdapters = Partial<Record<PlatformType, PlatformAdapter>>;
