import { createHash } from 'node:crypto';
import { mergeFacts } from '../domain/define-facts.js';
import { FACTS } from '../domain/facts.js';
import { TOKEN_PARTITION_PREFIX } from '../domain/tokens/facts.js';
import { TABLE_DEFINITION } from './table-definition.js';

/** Shards of the delivery pipeline's worker indexes, the outbox and the pending deliveries (DESIGN D14). */
export const WORKER_INDEX_SHARDS = 16;

/** The worker-index shard (0 … {@link WORKER_INDEX_SHARDS} − 1) of an event or delivery id: a stable hash of it. */
export function workerIndexShard(id: string): number {
  return createHash('sha256').update(id).digest()[0] % WORKER_INDEX_SHARDS;
}

/**
 * Partition-key prefix of every rate-limit counter item (`keys.rateCounter`): the read routes' IAM policy
 * allows `UpdateItem` only on items whose partition key starts with it (`dynamodb:LeadingKeys`, DESIGN D23).
 */
export const RATE_COUNTER_PARTITION_PREFIX = 'RATE#';
/**
 * The partition-key prefix of token items (`keys.token`); read routes may update only their `last_used_at`
 * (lib/route-stack.ts).
 */
export { TOKEN_PARTITION_PREFIX };

/**
 * Key composition for the single table: every key shape, index name and marker is written here or in
 * its object's `facts.ts` (DESIGN §2, D14), never as string literals elsewhere. Team data:
 * `pk = TEAM#<team uuid>`, `sk = <TYPE>#<id>`. Below: the keys of no domain object (limits, sessions,
 * worker indexes, deadlines, dashboard sign-in, integrations); the objects' keys are merged in.
 */
export const keys = mergeFacts(FACTS, 'keys', {
  idempotency: (teamId: string, key: string) => ({ pk: `TEAM#${teamId}`, sk: `IDEMPOTENCY#${key}` }),
  /**
   * MCP sessions live in their token's partition: one BatchGet reads both, and a session is bound to its token by its
   * key.
   */
  session: (tokenId: string, sessionId: string) => ({
    pk: `${TOKEN_PARTITION_PREFIX}${tokenId}`,
    sk: `MCP_SESSION#${sessionId}`,
  }),
  rateCounter: (bucket: string, subject: string, windowStartSeconds: number) => ({
    pk: `${RATE_COUNTER_PARTITION_PREFIX}${bucket}#${subject}`,
    sk: String(windowStartSeconds),
  }),
  /** The tool server's confirmation key (wrapped by the credentials key), one item for the service (DESIGN D5). */
  mcpConfirmationKey: () => ({ pk: 'MCP_CONFIRMATION_KEY', sk: 'MCP_CONFIRMATION_KEY' }),
  /** The one-off marker item that says the local demo team was seeded. */
  demoSeedMarker: () => ({ pk: 'SEED', sk: 'demo' }),
  /**
   * Sparse GSI partition of events not yet fanned out (local relay and the sweeper find them), shard
   * `shard` of {@link WORKER_INDEX_SHARDS} (see {@link workerIndexShard}). Sort key: {@link keys.timeIndexSortKey}
   * of the event's creation time and id, so "created at or before T" is one key range (DESIGN D6, D14).
   */
  outboxIndex: (shard: number) => `OUTBOX#${String(shard).padStart(2, '0')}`,
  /**
   * Sparse GSI partition of deliveries that wait for an attempt (the sweeper finds lost timers), shard
   * `shard`. Sort key: {@link keys.timeIndexSortKey} of the due time and the delivery id.
   */
  pendingDeliveriesIndex: (shard: number) => `DELIVERY_PENDING#${String(shard).padStart(2, '0')}`,
  /**
   * GSI sort key of the worker indexes (outbox, pending deliveries; DESIGN D14): a time in epoch
   * MILLISECONDS (floored, negative taken as 0) zero-padded to 15 digits, `#`, then an id, so keys sort
   * by time, then id. With `id` = '' it sorts before every key of time `timeMs` and after every key of an
   * earlier time (the padding keeps every time the same width): the exclusive upper bound of the keys
   * whose time is before `timeMs`.
   */
  timeIndexSortKey: (timeMs: number, id: string) =>
    `${String(Math.max(0, Math.floor(timeMs))).padStart(15, '0')}#${id}`,
  // Deadlines (DESIGN D14, D15): one item per (team, kind, subject) in a partition of its own, found by
  // the worker through the sparse GSI: partition = one of the shards, sort key = due time first.
  deadline: (teamId: string, kind: string, subjectId: string) => ({
    pk: `TEAM#${teamId}#DEADLINE#${kind}#${subjectId}`,
    sk: 'DEADLINE',
  }),
  /** GSI partition of deadline shard `shard` (0-based). */
  deadlineIndex: (shard: number) => `DEADLINE#${String(shard).padStart(2, '0')}`,
  /** GSI sort key of a deadline: its due time (ISO 8601, so it sorts by time) then its identity. */
  deadlineIndexSortKey: (dueAtIso: string, teamId: string, kind: string, subjectId: string) =>
    `${dueAtIso}#${teamId}#${kind}#${subjectId}`,

  // Dashboard sign-in (DESIGN D21): one-time sign-in links, sessions, passkeys and WebAuthn challenges,
  // each in a partition of its own, found by the id inside the credential the browser presents (read
  // before any team is known, like tokens). A member's sessions and passkeys are listed through the
  // sparse GSI, partition per member, sort key = the session id (a ULID) or the passkey's creation time.
  signInLink: (linkId: string) => ({ pk: `SIGN_IN_LINK#${linkId}`, sk: 'SIGN_IN_LINK' }),
  dashboardSession: (sessionId: string) => ({ pk: `DASHBOARD_SESSION#${sessionId}`, sk: 'DASHBOARD_SESSION' }),
  /** GSI partition of a team member's dashboard sessions. */
  memberSessionsIndex: (teamId: string, memberId: string) =>
    `TEAM#${teamId}#TEAM_MEMBER#${memberId}#DASHBOARD_SESSIONS`,
  passkey: (credentialId: string) => ({ pk: `PASSKEY#${credentialId}`, sk: 'PASSKEY' }),
  /** GSI partition of a team member's passkeys. */
  memberPasskeysIndex: (teamId: string, memberId: string) => `TEAM#${teamId}#TEAM_MEMBER#${memberId}#PASSKEYS`,
  webauthnChallenge: (challengeId: string) => ({ pk: `WEBAUTHN_CHALLENGE#${challengeId}`, sk: 'WEBAUTHN_CHALLENGE' }),
  // The tool server's OAuth authorization server (DESIGN D30): registered clients (before any team is
  // known), pending authorization requests, authorization codes, grants (one refresh family each) and
  // refresh tokens, each in a partition of its own, found by the id the client presents.
  oauthClient: (clientId: string) => ({ pk: `OAUTH_CLIENT#${clientId}`, sk: 'OAUTH_CLIENT' }),
  oauthRequest: (requestId: string) => ({ pk: `OAUTH_REQUEST#${requestId}`, sk: 'OAUTH_REQUEST' }),
  oauthCode: (codeId: string) => ({ pk: `OAUTH_CODE#${codeId}`, sk: 'OAUTH_CODE' }),
  oauthGrant: (grantId: string) => ({ pk: `OAUTH_GRANT#${grantId}`, sk: 'OAUTH_GRANT' }),
  oauthRefresh: (refreshId: string) => ({ pk: `OAUTH_REFRESH#${refreshId}`, sk: 'OAUTH_REFRESH' }),
  // Credentials and inbound hooks (DESIGN D16, D22). A project's stored credential of one kind is an item
  // in a partition of its own keyed by the project id (an inbound hook knows only the project id; the item
  // names its team). A processed inbound update or provider event leaves a receipt (idempotency on the
  // provider's id, written in the transaction of its effect). A personal invite link is found by a SHA-256
  // of its URL (never the URL itself in a key), naming the subscriber it was made for.
  credential: (projectId: string, kind: string) => ({
    pk: `PROJECT#${projectId}#CREDENTIAL`,
    sk: `CREDENTIAL#${kind}`,
  }),
  hookReceipt: (teamId: string, source: string, projectId: string, providerEventId: string) => ({
    pk: `TEAM#${teamId}#HOOK#${source}#${projectId}#${providerEventId}`,
    sk: 'HOOK_RECEIPT',
  }),
  inviteLink: (teamId: string, projectId: string, linkSha256: string) => ({
    pk: `TEAM#${teamId}#PROJECT#${projectId}#INVITE_LINK#${linkSha256}`,
    sk: 'INVITE_LINK',
  }),
  // The `state` of a Discord account-linking flow (DESIGN D28), found by its SHA-256 (the state itself is never
  // stored).
  discordLinkState: (stateSha256: string) => ({ pk: `DISCORD_LINK_STATE#${stateSha256}`, sk: 'DISCORD_LINK_STATE' }),
  // A payment provider's ids of a project's objects (DESIGN D16, D22): small lookup items, each in a
  // partition of its own, written in the transaction that creates the object they point at, so an inbound
  // provider event finds our object by the provider's id with one GetItem. `provider` is the catalogue's
  // provider name (`stripe`); the ids are the provider's (`cus_...`, `sub_...`, `pi_...`).
  /** A provider customer → our subscriber id (`subscriber_id`). */
  providerCustomer: (teamId: string, projectId: string, provider: string, customerId: string) => ({
    pk: `TEAM#${teamId}#PROJECT#${projectId}#PROVIDER_CUSTOMER#${provider}#${customerId}`,
    sk: 'PROVIDER_CUSTOMER',
  }),
  /**
   * A provider subscription → our subscription id (`subscription_id`) and, per event family, the `created` (unix
   * SECONDS) of the last provider event applied to it (`last_subscription_event_created`,
   * `last_invoice_event_created`).
   */
  providerSubscription: (teamId: string, projectId: string, provider: string, subscriptionId: string) => ({
    pk: `TEAM#${teamId}#PROJECT#${projectId}#PROVIDER_SUBSCRIPTION#${provider}#${subscriptionId}`,
    sk: 'PROVIDER_SUBSCRIPTION',
  }),
  /**
   * A provider payment (Stripe: the PaymentIntent) → our payment id (`payment_id`) and its subscription
   * (`subscription_id`).
   */
  providerPayment: (teamId: string, projectId: string, provider: string, paymentId: string) => ({
    pk: `TEAM#${teamId}#PROJECT#${projectId}#PROVIDER_PAYMENT#${provider}#${paymentId}`,
    sk: 'PROVIDER_PAYMENT',
  }),
  // Public pages (DESIGN D26): the join page knows only the project id, so a small item in a partition of
  // the project's own names its team (written with the project); a completed Stripe Checkout Session names
  // the subscription it created (written with it, read by the welcome page); a welcome link of a free or
  // code join is a random token stored only as its SHA-256, naming the subscription it shows.
  projectTeam: (projectId: string) => ({ pk: `PROJECT#${projectId}#TEAM`, sk: 'PROJECT_TEAM' }),
  checkoutSession: (projectId: string, sessionId: string) => ({
    pk: `PROJECT#${projectId}#CHECKOUT_SESSION#${sessionId}`,
    sk: 'CHECKOUT_SESSION',
  }),
  welcomeLink: (tokenSha256: string) => ({ pk: `WELCOME_LINK#${tokenSha256}`, sk: 'WELCOME_LINK' }),
});

/** Sort-key prefixes for `begins_with` list queries (each object's, from its `facts.ts`). */
export const sortKeyPrefix = mergeFacts(FACTS, 'sortKeyPrefix');

/** The sparse secondary index (tokens of a team, the outbox, pending deliveries) and its key attributes. */
export const secondaryIndex = {
  name: TABLE_DEFINITION.globalSecondaryIndexes[0].indexName,
  partitionKey: TABLE_DEFINITION.globalSecondaryIndexes[0].partitionKey.name,
  sortKey: TABLE_DEFINITION.globalSecondaryIndexes[0].sortKey.name,
  /** Every attribute of a LastEvaluatedKey of an index query (index keys and table keys). */
  cursorAttributes: [
    TABLE_DEFINITION.globalSecondaryIndexes[0].partitionKey.name,
    TABLE_DEFINITION.globalSecondaryIndexes[0].sortKey.name,
    TABLE_DEFINITION.partitionKey.name,
    TABLE_DEFINITION.sortKey.name,
  ],
} as const;

/**
 * The `entity` attribute of each item type. The CDK stream filter of the fan-out Lambda matches
 * inserted items whose `entity` is {@link entity.event} (the outbox).
 */
export const entity = mergeFacts(FACTS, 'entity', {
  idempotency: 'idempotency',
  mcpSession: 'mcp_session',
  mcpConfirmationKey: 'mcp_confirmation_key',
  deadline: 'deadline',
  signInLink: 'sign_in_link',
  dashboardSession: 'dashboard_session',
  passkey: 'passkey',
  webauthnChallenge: 'webauthn_challenge',
  oauthClient: 'oauth_client',
  oauthRequest: 'oauth_request',
  oauthCode: 'oauth_code',
  oauthGrant: 'oauth_grant',
  oauthRefresh: 'oauth_refresh',
  credential: 'credential',
  hookReceipt: 'hook_receipt',
  inviteLink: 'invite_link',
  discordLinkState: 'discord_link_state',
  providerCustomer: 'provider_customer',
  providerSubscription: 'provider_subscription',
  providerPayment: 'provider_payment',
  projectTeam: 'project_team',
  checkoutSession: 'checkout_session',
  welcomeLink: 'welcome_link',
});
