/**
 * The member events a subscription's transition can add when access starts or ends (DESIGN D15, D17;
 * see `member-access.ts`), written once for the operation definitions of every use case that moves a
 * subscription (subscriptions, payments). Metadata only: operation definitions import it without
 * pulling in runtime code.
 */
export const ACCESS_EVENTS = [
  'member.access_granted',
  'member.access_revoked',
  'member.converted',
  'member.churned',
] as const;
