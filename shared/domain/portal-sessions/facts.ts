import { defineFacts } from '../define-facts.js';

/**
 * The subscriber portal's keys (DESIGN D27): a one-time portal link and a portal session are each one item
 * in a partition of its own (so is a free join's one-time confirmation link), keyed by the SHA-256 (hex) of the
 * credential the subscriber holds, so the
 * credential itself is never stored and a lookup is one GetItem. No abilities: the operation uses
 * `project-user:update`.
 */
export const portalSessionsFacts = defineFacts({
  keys: {
    portalLink: (tokenSha256Hex: string) => ({ pk: `PORTAL_LINK#${tokenSha256Hex}`, sk: 'PORTAL_LINK' }),
    portalSession: (cookieSha256Hex: string) => ({ pk: `PORTAL_SESSION#${cookieSha256Hex}`, sk: 'PORTAL_SESSION' }),
    joinConfirmation: (tokenSha256Hex: string) => ({
      pk: `JOIN_CONFIRMATION#${tokenSha256Hex}`,
      sk: 'JOIN_CONFIRMATION',
    }),
  },
  entity: { portalLink: 'portal_link', portalSession: 'portal_session', joinConfirmation: 'join_confirmation' },
});
