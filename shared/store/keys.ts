/**
 * Key composition for the single table (one place for every key shape; see table-definition.ts).
 * Team data: `pk = TEAM#<team uuid>`, `sk = <TYPE>#<id>`. Activity gets its own partition per team
 * (`TEAM#<team>#ACTIVITY`) so the hot write path does not share the team's partition.
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
} as const;
