import { TABLE_DEFINITION } from './table-definition.js';

/**
 * Key composition for the single table: every key shape, index name and marker is written here and
 * nowhere else (DESIGN §2, D14). Team data: `pk = TEAM#<team uuid>`, `sk = <TYPE>#<id>`. Activity has
 * its own partition per team (`TEAM#<team>#ACTIVITY`) so the hot write path does not share the team's
 * partition.
 */
export const keys = {
  team: (teamId: string) => ({ pk: `TEAM#${teamId}`, sk: 'TEAM' }),
  teamPartition: (teamId: string) => `TEAM#${teamId}`,
  token: (tokenId: string) => ({ pk: `TOKEN#${tokenId}`, sk: 'TOKEN' }),
  teamTokensIndex: (teamId: string) => `TEAM#${teamId}#TOKENS`,
  project: (teamId: string, projectId: string) => ({ pk: `TEAM#${teamId}`, sk: `PROJECT#${projectId}` }),
  webhookEndpoint: (teamId: string, endpointId: string) => ({ pk: `TEAM#${teamId}`, sk: `WEBHOOK_ENDPOINT#${endpointId}` }),
  event: (teamId: string, eventId: string) => ({ pk: `TEAM#${teamId}`, sk: `EVENT#${eventId}` }),
  delivery: (teamId: string, deliveryId: string) => ({ pk: `TEAM#${teamId}`, sk: `DELIVERY#${deliveryId}` }),
  idempotency: (teamId: string, key: string) => ({ pk: `TEAM#${teamId}`, sk: `IDEMPOTENCY#${key}` }),
  /** MCP sessions live in their token's partition: one BatchGet reads both, and a session is bound to its token by its key. */
  session: (tokenId: string, sessionId: string) => ({ pk: `TOKEN#${tokenId}`, sk: `MCP_SESSION#${sessionId}` }),
  activityPartition: (teamId: string) => `TEAM#${teamId}#ACTIVITY`,
  rateCounter: (bucket: string, subject: string, windowStartSeconds: number) => ({ pk: `RATE#${bucket}#${subject}`, sk: String(windowStartSeconds) }),
  deadLetter: (teamId: string, deadLetteredAtIso: string, deliveryId: string) => ({ pk: `TEAM#${teamId}`, sk: `DEAD#${deadLetteredAtIso}#${deliveryId}` }),
  /** The one-off marker item that says the local demo team was seeded. */
  demoSeedMarker: () => ({ pk: 'SEED', sk: 'demo' }),
  /** Sparse GSI partition of events not yet fanned out (local relay and the sweeper find them). */
  outboxIndex: 'OUTBOX',
  /** Sparse GSI partition of deliveries that wait for an attempt (the sweeper finds lost timers). */
  pendingDeliveriesIndex: 'DELIVERY_PENDING',
} as const;

/** Sort-key prefixes for `begins_with` list queries. */
export const sortKeyPrefix = {
  project: 'PROJECT#',
  webhookEndpoint: 'WEBHOOK_ENDPOINT#',
  delivery: 'DELIVERY#',
  deadLetter: 'DEAD#',
  activity: 'act_',
} as const;

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
export const entity = {
  team: 'team',
  token: 'token',
  project: 'project',
  webhookEndpoint: 'webhook_endpoint',
  event: 'event',
  delivery: 'delivery',
  deadDelivery: 'dead_delivery',
  activity: 'activity',
  idempotency: 'idempotency',
  mcpSession: 'mcp_session',
} as const;
