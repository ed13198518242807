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

  // Access codes (DESIGN D14, D18): high-volume per-project data, one partition per project holding
  // the codes (sort key grouped by batch, so a batch is one key range) and the batches. Each code also
  // has a lookup item keyed by a SHA-256 of its normalized code, never the code itself (uniqueness per
  // project and, later, redemption by code) and a reference item keyed by its id (a read by id alone
  // finds its project and batch); both are only ever read by key, so each has a partition of its own
  // and a batch's writes do not all land on the project's partition.
  accessCodePartition: (teamId: string, projectId: string) => `TEAM#${teamId}#PROJECT#${projectId}#ACCESS_CODE`,
  accessCode: (teamId: string, projectId: string, batchId: string, codeId: string) => ({ pk: `TEAM#${teamId}#PROJECT#${projectId}#ACCESS_CODE`, sk: `ACCESS_CODE#${batchId}#${codeId}` }),
  accessCodeBatch: (teamId: string, projectId: string, batchId: string) => ({ pk: `TEAM#${teamId}#PROJECT#${projectId}#ACCESS_CODE`, sk: `ACCESS_CODE_BATCH#${batchId}` }),
  accessCodeLookup: (teamId: string, projectId: string, codeSha256: string) => ({ pk: `TEAM#${teamId}#PROJECT#${projectId}#ACCESS_CODE_LOOKUP#${codeSha256}`, sk: 'ACCESS_CODE_LOOKUP' }),
  accessCodeRef: (teamId: string, codeId: string) => ({ pk: `TEAM#${teamId}#ACCESS_CODE#${codeId}`, sk: 'ACCESS_CODE_REF' }),

  // Deadlines (DESIGN D14, D15): one item per (team, kind, subject) in a partition of its own, found by
  // the worker through the sparse GSI: partition = one of the shards, sort key = due time first.
  deadline: (teamId: string, kind: string, subjectId: string) => ({ pk: `TEAM#${teamId}#DEADLINE#${kind}#${subjectId}`, sk: 'DEADLINE' }),
  /** GSI partition of deadline shard `shard` (0-based). */
  deadlineIndex: (shard: number) => `DEADLINE#${String(shard).padStart(2, '0')}`,
  /** GSI sort key of a deadline: its due time (ISO 8601, so it sorts by time) then its identity. */
  deadlineIndexSortKey: (dueAtIso: string, teamId: string, kind: string, subjectId: string) => `${dueAtIso}#${teamId}#${kind}#${subjectId}`,

  // Plans (DESIGN D14): few per project, so team-level items (`TEAM#<team>`, `PLAN#<uuid>`), read by
  // id alone with one GetItem; a project's plans are found through the sparse GSI, partition
  // `TEAM#<team>#PROJECT#<project>#PLANS`, sort key = creation time then id (creation order).
  plan: (teamId: string, planId: string) => ({ pk: `TEAM#${teamId}`, sk: `PLAN#${planId}` }),
  /** GSI partition of a project's plans. */
  projectPlansIndex: (teamId: string, projectId: string) => `TEAM#${teamId}#PROJECT#${projectId}#PLANS`,
  /** GSI sort key of a plan: its creation time (ISO 8601) then its id. */
  projectPlansIndexSortKey: (createdAtIso: string, planId: string) => `${createdAtIso}#${planId}`,

  // Team members, invitations, roles and groups (DESIGN D14, D19): team-level items in the team's
  // partition (`TEAM#<team>`), plus claim items that keep a member's e-mail (keyed by a SHA-256 of the
  // normalized address, never the address) and role and group names unique per team. An invitation lives
  // in a partition of its own, found by the id inside the invitation token: the public accept route knows
  // no team until it has read it.
  teamMember: (teamId: string, memberId: string) => ({ pk: `TEAM#${teamId}`, sk: `TEAM_MEMBER#${memberId}` }),
  teamMemberEmail: (teamId: string, emailSha256: string) => ({ pk: `TEAM#${teamId}`, sk: `TEAM_MEMBER_EMAIL#${emailSha256}` }),
  teamInvitation: (invitationId: string) => ({ pk: `INVITATION#${invitationId}`, sk: 'INVITATION' }),
  role: (teamId: string, roleId: string) => ({ pk: `TEAM#${teamId}`, sk: `ROLE#${roleId}` }),
  roleName: (teamId: string, normalizedName: string) => ({ pk: `TEAM#${teamId}`, sk: `ROLE_NAME#${normalizedName}` }),
  group: (teamId: string, groupId: string) => ({ pk: `TEAM#${teamId}`, sk: `GROUP#${groupId}` }),
  groupName: (teamId: string, normalizedName: string) => ({ pk: `TEAM#${teamId}`, sk: `GROUP_NAME#${normalizedName}` }),
} as const;

/** Sort-key prefixes for `begins_with` list queries. */
export const sortKeyPrefix = {
  project: 'PROJECT#',
  webhookEndpoint: 'WEBHOOK_ENDPOINT#',
  delivery: 'DELIVERY#',
  deadLetter: 'DEAD#',
  activity: 'act_',
  /** Codes of a project (`accessCodeInBatch` narrows to one batch). */
  accessCode: 'ACCESS_CODE#',
  accessCodeInBatch: (batchId: string) => `ACCESS_CODE#${batchId}#`,
  plan: 'PLAN#',
  teamMember: 'TEAM_MEMBER#',
  role: 'ROLE#',
  group: 'GROUP#',
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
  accessCode: 'access_code',
  accessCodeBatch: 'access_code_batch',
  accessCodeLookup: 'access_code_lookup',
  accessCodeRef: 'access_code_ref',
  deadline: 'deadline',
  plan: 'plan',
  teamMember: 'team_member',
  teamMemberEmail: 'team_member_email',
  teamInvitation: 'team_invitation',
  role: 'role',
  roleName: 'role_name',
  group: 'group',
  groupName: 'group_name',
} as const;
