import { AUTHENTICATED, defineInternalOperation } from '../../operations/definition.js';
import * as z from '../../schemas/zod.js';

/**
 * A team member's own dashboard sessions (DESIGN D21, D35): internal operations of the member's principal (surface
 * `dashboard`), exempt from the billing lockdown (D20: signing out never waits for an invoice).
 */
export const teamMembersInternalOperations = {
  revokeDashboardSession: defineInternalOperation({
    id: 'revokeDashboardSession',
    summary: 'Sign out one of the member’s own dashboard sessions (the current one: sign-out).',
    tag: 'Team members',
    ability: AUTHENTICATED,
    teamWide: false,
    body: z.strictObject({ session_id: z.string().check(z.minLength(1), z.maxLength(64)) }),
    output: z.object({ revoked: z.literal(true) }),
    events: [],
    write: true,
    lockdown: 'exempt',
  }),
};
