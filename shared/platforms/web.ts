import type { PlatformType } from '../catalogues/platform-types.js';
import type { PlatformAdapter } from './platform-adapter.js';

/**
 * The `web` platform adapter (DESIGN D22): a creator's own site gates access through the API itself,
 * so there is no external system to call. Every action succeeds at once and records nothing; the
 * member's status in the service is the whole truth. `platform` lets the same behaviour stand in for
 * platforms whose adapters do not exist yet (see `platformAdapterFor`).
 */
export function webPlatformAdapter(platform: PlatformType = 'web'): PlatformAdapter {
  const done = async () => ({ ok: true }) as const;
  // No invite link: the creator's site lets the subscriber in itself.
  return {
    platform,
    grantAccess: done,
    revokeInviteLink: done,
    revokeAccess: done,
    kick: done,
    ban: done,
    unban: done,
  };
}
