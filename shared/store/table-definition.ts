/**
 * The one definition of the DynamoDB tables, for the CDK stack and the local server / tests. Main table (single-table):
 * team data lives under `TEAM#<team uuid>`, except items found before the team is known (`TOKEN#<id>`,
 * `PROJECT#<id>#...` lookups and credentials, sessions, sign-in/portal/welcome links, OAuth and WebAuthn items) and
 * rate-limit counters (`RATE#...`, possibly keyed by client IP); key shapes in `keys.ts`. Dead letters: `pk =
 * TEAM#<team>`, `sk = DEAD#<dead_lettered_at ISO>#<delivery id>`, so `replay-dead` reads a window with one key-range
 * query.
 */
export const TABLE_DEFINITION = {
  /** Logical id used in CDK and the default table name locally. */
  logicalName: 'MembershipTable',
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  globalSecondaryIndexes: [
    /** Sparse index: `gsi1pk` is only set on items that some list or worker needs to find. */
    { indexName: 'gsi1', partitionKey: { name: 'gsi1pk', type: 'S' }, sortKey: { name: 'gsi1sk', type: 'S' } },
  ],
  /** Epoch seconds. Housekeeping only: code always checks expiry itself (DESIGN §3). */
  timeToLiveAttribute: 'expires_at',
  /** Streams drive the outbox → fan-out Lambda on AWS. */
  streamViewType: 'NEW_IMAGE',
} as const;

/** See {@link TABLE_DEFINITION}: the table that keeps a copy of every dead delivery. */
export const DEAD_LETTER_TABLE_DEFINITION = {
  logicalName: 'DeadLetterTable',
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  globalSecondaryIndexes: [],
  timeToLiveAttribute: 'expires_at',
  streamViewType: null,
} as const;

/** Shape shared by both table definitions. */
export type TableDefinition = typeof TABLE_DEFINITION | typeof DEAD_LETTER_TABLE_DEFINITION;
