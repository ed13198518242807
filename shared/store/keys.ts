import { createHash } from 'node:crypto';
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
/** The partition-key prefix of token items (`keys.token`); read routes may update only their `last_used_at` (lib/route-stack.ts). */
export const TOKEN_PARTITION_PREFIX = 'TOKEN#';

/**
 * Key composition for the single table: every key shape, index name and marker is written here and
 * nowhere else (DESIGN §2, D14). Team data: `pk = TEAM#<team uuid>`, `sk = <TYPE>#<id>`. Activity has
 * its own partition per team (`TEAM#<team>#ACTIVITY`) so the hot write path does not share the team's
 * partition.
 */
export const keys = {
  team: (teamId: string) => ({ pk: `TEAM#${teamId}`, sk: 'TEAM' }),
  teamPartition: (teamId: string) => `TEAM#${teamId}`,
  token: (tokenId: string) => ({ pk: `${TOKEN_PARTITION_PREFIX}${tokenId}`, sk: 'TOKEN' }),
  teamTokensIndex: (teamId: string) => `TEAM#${teamId}#TOKENS`,
  project: (teamId: string, projectId: string) => ({ pk: `TEAM#${teamId}`, sk: `PROJECT#${projectId}` }),
  webhookEndpoint: (teamId: string, endpointId: string) => ({ pk: `TEAM#${teamId}`, sk: `WEBHOOK_ENDPOINT#${endpointId}` }),
  event: (teamId: string, eventId: string) => ({ pk: `TEAM#${teamId}`, sk: `EVENT#${eventId}` }),
  delivery: (teamId: string, deliveryId: string) => ({ pk: `TEAM#${teamId}`, sk: `DELIVERY#${deliveryId}` }),
  idempotency: (teamId: string, key: string) => ({ pk: `TEAM#${teamId}`, sk: `IDEMPOTENCY#${key}` }),
  /** MCP sessions live in their token's partition: one BatchGet reads both, and a session is bound to its token by its key. */
  session: (tokenId: string, sessionId: string) => ({ pk: `${TOKEN_PARTITION_PREFIX}${tokenId}`, sk: `MCP_SESSION#${sessionId}` }),
  activityPartition: (teamId: string) => `TEAM#${teamId}#ACTIVITY`,
  rateCounter: (bucket: string, subject: string, windowStartSeconds: number) => ({ pk: `${RATE_COUNTER_PARTITION_PREFIX}${bucket}#${subject}`, sk: String(windowStartSeconds) }),
  deadLetter: (teamId: string, deadLetteredAtIso: string, deliveryId: string) => ({ pk: `TEAM#${teamId}`, sk: `DEAD#${deadLetteredAtIso}#${deliveryId}` }),
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
  timeIndexSortKey: (timeMs: number, id: string) => `${String(Math.max(0, Math.floor(timeMs))).padStart(15, '0')}#${id}`,
  /** Sparse GSI partition of replay jobs still running (the sweeper restarts a stalled one). */
  runningReplaysIndex: 'WEBHOOK_REPLAY_RUNNING',
  /** A replay job of dead or skipped deliveries (DESIGN D25), in its team's partition. */
  webhookReplay: (teamId: string, replayId: string) => ({ pk: `TEAM#${teamId}`, sk: `WEBHOOK_REPLAY#${replayId}` }),
  /**
   * Sparse GSI partition of a team's skipped deliveries (DESIGN D6), sort key `<skipped_at ISO>#<delivery
   * id>`, where a replay job (D25) finds them by time.
   */
  skippedDeliveriesIndex: (teamId: string) => `TEAM#${teamId}#SKIPPED_DELIVERIES`,

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
  /**
   * A redemption of a code by a subscriber, beside the code's reference item (the code's own small
   * partition): its conditional put keeps a code to one redemption per subscriber (D18).
   */
  accessCodeRedemption: (teamId: string, codeId: string, subscriberId: string) => ({ pk: `TEAM#${teamId}#ACCESS_CODE#${codeId}`, sk: `REDEMPTION#${subscriberId}` }),

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

  // Subscribers and members (DESIGN D14, D17): high-volume per-project data, one partition per project
  // and type (`TEAM#<team>#PROJECT#<project>#SUBSCRIBERS`, `...#MEMBERS`; sort key = the object id, so a
  // list is one key range in id order). `/v1/subscribers/{id}` and `/v1/members/{id}` know no project: a
  // reference item keyed by the id (a partition of its own, read by key only) names it. A platform user
  // is claimed once per project by an item keyed by a SHA-256 of its platform user id, holding the ids
  // of its subscriber and member (uniqueness and the subscriber-member link).
  subscriberPartition: (teamId: string, projectId: string) => `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBERS`,
  subscriber: (teamId: string, projectId: string, subscriberId: string) => ({ pk: `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBERS`, sk: `SUBSCRIBER#${subscriberId}` }),
  subscriberRef: (teamId: string, subscriberId: string) => ({ pk: `TEAM#${teamId}#SUBSCRIBER#${subscriberId}`, sk: 'SUBSCRIBER_REF' }),
  memberPartition: (teamId: string, projectId: string) => `TEAM#${teamId}#PROJECT#${projectId}#MEMBERS`,
  member: (teamId: string, projectId: string, memberId: string) => ({ pk: `TEAM#${teamId}#PROJECT#${projectId}#MEMBERS`, sk: `MEMBER#${memberId}` }),
  memberRef: (teamId: string, memberId: string) => ({ pk: `TEAM#${teamId}#MEMBER#${memberId}`, sk: 'MEMBER_REF' }),
  platformUser: (teamId: string, projectId: string, platformUserIdSha256: string) => ({ pk: `TEAM#${teamId}#PROJECT#${projectId}#PLATFORM_USER#${platformUserIdSha256}`, sk: 'PLATFORM_USER' }),

  // Subscriptions (DESIGN D14, D15): each subscription is one item in a partition of its own
  // (`TEAM#<team>#SUBSCRIPTION#<uuid>`), so `/v1/subscriptions/{id}` and every transition read it by key
  // with one GetItem; a project's subscriptions are listed through the sparse GSI, partition
  // `TEAM#<team>#PROJECT#<project>#SUBSCRIPTIONS`, sort key = creation time then id. A subscriber's
  // subscriptions are found through small index items in the subscriber's per-project partition
  // (`...#PROJECT#<project>#SUBSCRIBER_SUBSCRIPTIONS#<subscriber>`), written with the subscription. That
  // partition is also the subscriber's access summary, so the web access check (issue 10 §3) is ONE
  // Query: each index item carries what the check needs of its subscription (`status`, `ends_at`,
  // `current_period_end`, `plan_id`, `status_changed_at`, rewritten in every transition's transaction),
  // and the `SUBSCRIBER` item carries the subscriber's `status` and `member_id` (written with the
  // subscriber, its ban and unban, and every change of its member link).
  subscription: (teamId: string, subscriptionId: string) => ({ pk: `TEAM#${teamId}#SUBSCRIPTION#${subscriptionId}`, sk: 'SUBSCRIPTION' }),
  /** GSI partition of a project's subscriptions. */
  projectSubscriptionsIndex: (teamId: string, projectId: string) => `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIPTIONS`,
  /** GSI sort key of a subscription: its creation time (ISO 8601) then its id. */
  projectSubscriptionsIndexSortKey: (createdAtIso: string, subscriptionId: string) => `${createdAtIso}#${subscriptionId}`,
  /** Partition of a subscriber's subscription index items. */
  subscriberSubscriptionsPartition: (teamId: string, projectId: string, subscriberId: string) => `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBER_SUBSCRIPTIONS#${subscriberId}`,
  /** One index item of a subscriber's subscription (creation order). */
  subscriberSubscription: (teamId: string, projectId: string, subscriberId: string, createdAtIso: string, subscriptionId: string) => ({
    pk: `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBER_SUBSCRIPTIONS#${subscriberId}`,
    sk: `SUBSCRIPTION#${createdAtIso}#${subscriptionId}`,
  }),
  /**
   * The subscriber's access summary item in its subscription partition (sort key `SUBSCRIBER`, apart
   * from `SUBSCRIPTION#…` and `CONVERTED`): the subscriber's `status` and `member_id`, kept equal to the
   * subscriber item's by the same transactions, and the sets of its subscriptions granting (paid) access
   * (`subscriberAccessAttribute` in subscribers/repository.ts, issue 9).
   */
  subscriberAccess: (teamId: string, projectId: string, subscriberId: string) => ({
    pk: `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBER_SUBSCRIPTIONS#${subscriberId}`,
    sk: 'SUBSCRIBER',
  }),
  // The creator's own billing (DESIGN D20): the team's tier and usage counters live on the team item
  // (`keys.team`), so a create's counter update tests the tier limit without a read; the billing
  // account (status, grace period, period anchor) is one item beside it, which the lockdown check of
  // every creator write reads (a ConditionCheck in the write's transaction) and which only billing's own
  // use cases write. Invoices are team-level items read by id, listed newest first through the sparse
  // GSI: partition `TEAM#<team>#BILLING_INVOICES`, sort key = creation time then id.
  billingAccount: (teamId: string) => ({ pk: `TEAM#${teamId}`, sk: 'BILLING' }),
  billingInvoice: (teamId: string, invoiceId: string) => ({ pk: `TEAM#${teamId}`, sk: `BILLING_INVOICE#${invoiceId}` }),
  /** GSI partition of a team's invoices. */
  teamInvoicesIndex: (teamId: string) => `TEAM#${teamId}#BILLING_INVOICES`,
  /** GSI sort key of an invoice: its creation time (ISO 8601) then its id. */
  teamInvoicesIndexSortKey: (createdAtIso: string, invoiceId: string) => `${createdAtIso}#${invoiceId}`,

  /** The marker that a subscriber gained paid access once (`member.converted` is emitted once). */
  subscriberConversion: (teamId: string, projectId: string, subscriberId: string) => ({
    pk: `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBER_SUBSCRIPTIONS#${subscriberId}`,
    sk: 'CONVERTED',
  }),

  // Payments (DESIGN D14, D16): like subscriptions, each payment is one item in a partition of its own
  // (`TEAM#<team>#PAYMENT#<uuid>`), so `/v1/payments/{id}`, a settlement and a refund read it by key; a
  // project's payments are listed through the sparse GSI, partition `TEAM#<team>#PROJECT#<project>#PAYMENTS`,
  // sort key = creation time then id (a date range is a key condition). A subscriber's payments are found
  // through small immutable index items in the subscriber's per-project partition
  // (`...#PROJECT#<project>#SUBSCRIBER_PAYMENTS#<subscriber>`, sort key `PAYMENT#<created_at>#<id>`),
  // written with the payment.
  payment: (teamId: string, paymentId: string) => ({ pk: `TEAM#${teamId}#PAYMENT#${paymentId}`, sk: 'PAYMENT' }),
  /** GSI partition of a project's payments. */
  projectPaymentsIndex: (teamId: string, projectId: string) => `TEAM#${teamId}#PROJECT#${projectId}#PAYMENTS`,
  /** GSI sort key of a payment: its creation time (ISO 8601) then its id (a bare time bounds a date range). */
  projectPaymentsIndexSortKey: (createdAtIso: string, paymentId = '') => (paymentId ? `${createdAtIso}#${paymentId}` : createdAtIso),
  /** Partition of a subscriber's payment index items. */
  subscriberPaymentsPartition: (teamId: string, projectId: string, subscriberId: string) => `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBER_PAYMENTS#${subscriberId}`,
  /** Sort key of a subscriber's payment index item: creation time then id (a bare time bounds a date range). */
  subscriberPaymentSortKey: (createdAtIso: string, paymentId = '') => (paymentId ? `PAYMENT#${createdAtIso}#${paymentId}` : `PAYMENT#${createdAtIso}`),
  // Dashboard sign-in (DESIGN D21): one-time sign-in links, sessions, passkeys and WebAuthn challenges,
  // each in a partition of its own, found by the id inside the credential the browser presents (read
  // before any team is known, like tokens). A member's sessions and passkeys are listed through the
  // sparse GSI, partition per member, sort key = the session id (a ULID) or the passkey's creation time.
  signInLink: (linkId: string) => ({ pk: `SIGN_IN_LINK#${linkId}`, sk: 'SIGN_IN_LINK' }),
  dashboardSession: (sessionId: string) => ({ pk: `DASHBOARD_SESSION#${sessionId}`, sk: 'DASHBOARD_SESSION' }),
  /** GSI partition of a team member's dashboard sessions. */
  memberSessionsIndex: (teamId: string, memberId: string) => `TEAM#${teamId}#TEAM_MEMBER#${memberId}#DASHBOARD_SESSIONS`,
  passkey: (credentialId: string) => ({ pk: `PASSKEY#${credentialId}`, sk: 'PASSKEY' }),
  /** GSI partition of a team member's passkeys. */
  memberPasskeysIndex: (teamId: string, memberId: string) => `TEAM#${teamId}#TEAM_MEMBER#${memberId}#PASSKEYS`,
  webauthnChallenge: (challengeId: string) => ({ pk: `WEBAUTHN_CHALLENGE#${challengeId}`, sk: 'WEBAUTHN_CHALLENGE' }),
  // Credentials and inbound hooks (DESIGN D16, D22). A project's stored credential of one kind is an item
  // in a partition of its own keyed by the project id (an inbound hook knows only the project id; the item
  // names its team). A processed inbound update or provider event leaves a receipt (idempotency on the
  // provider's id, written in the transaction of its effect). A personal invite link is found by a SHA-256
  // of its URL (never the URL itself in a key), naming the subscriber it was made for.
  credential: (projectId: string, kind: string) => ({ pk: `PROJECT#${projectId}#CREDENTIAL`, sk: `CREDENTIAL#${kind}` }),
  hookReceipt: (teamId: string, source: string, projectId: string, providerEventId: string) => ({ pk: `TEAM#${teamId}#HOOK#${source}#${projectId}#${providerEventId}`, sk: 'HOOK_RECEIPT' }),
  inviteLink: (teamId: string, projectId: string, linkSha256: string) => ({ pk: `TEAM#${teamId}#PROJECT#${projectId}#INVITE_LINK#${linkSha256}`, sk: 'INVITE_LINK' }),
  // A payment provider's ids of a project's objects (DESIGN D16, D22): small lookup items, each in a
  // partition of its own, written in the transaction that creates the object they point at, so an inbound
  // provider event finds our object by the provider's id with one GetItem. `provider` is the catalogue's
  // provider name (`stripe`); the ids are the provider's (`cus_...`, `sub_...`, `pi_...`).
  /** A provider customer → our subscriber id (`subscriber_id`). */
  providerCustomer: (teamId: string, projectId: string, provider: string, customerId: string) => ({ pk: `TEAM#${teamId}#PROJECT#${projectId}#PROVIDER_CUSTOMER#${provider}#${customerId}`, sk: 'PROVIDER_CUSTOMER' }),
  /** A provider subscription → our subscription id (`subscription_id`) and, per event family, the `created` (unix SECONDS) of the last provider event applied to it (`last_subscription_event_created`, `last_invoice_event_created`). */
  providerSubscription: (teamId: string, projectId: string, provider: string, subscriptionId: string) => ({ pk: `TEAM#${teamId}#PROJECT#${projectId}#PROVIDER_SUBSCRIPTION#${provider}#${subscriptionId}`, sk: 'PROVIDER_SUBSCRIPTION' }),
  /** A provider payment (Stripe: the PaymentIntent) → our payment id (`payment_id`) and its subscription (`subscription_id`). */
  providerPayment: (teamId: string, projectId: string, provider: string, paymentId: string) => ({ pk: `TEAM#${teamId}#PROJECT#${projectId}#PROVIDER_PAYMENT#${provider}#${paymentId}`, sk: 'PROVIDER_PAYMENT' }),
} as const;

/** Sort-key prefixes for `begins_with` list queries. */
export const sortKeyPrefix = {
  project: 'PROJECT#',
  webhookEndpoint: 'WEBHOOK_ENDPOINT#',
  delivery: 'DELIVERY#',
  deadLetter: 'DEAD#',
  event: 'EVENT#',
  activity: 'act_',
  /** Codes of a project (`accessCodeInBatch` narrows to one batch). */
  accessCode: 'ACCESS_CODE#',
  accessCodeInBatch: (batchId: string) => `ACCESS_CODE#${batchId}#`,
  plan: 'PLAN#',
  teamMember: 'TEAM_MEMBER#',
  role: 'ROLE#',
  group: 'GROUP#',
  subscriber: 'SUBSCRIBER#',
  member: 'MEMBER#',
  subscriberSubscription: 'SUBSCRIPTION#',
  billingInvoice: 'BILLING_INVOICE#',
  /** The sort key of a subscription item (`keys.subscription`), for cursor checks of the project list. */
  subscription: 'SUBSCRIPTION',
  /** The sort key of a payment item (`keys.payment`), for cursor checks of the project list. */
  payment: 'PAYMENT',
  /** A subscriber's payment index items. */
  subscriberPayment: 'PAYMENT#',
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
  webhookReplay: 'webhook_replay',
  activity: 'activity',
  idempotency: 'idempotency',
  mcpSession: 'mcp_session',
  accessCode: 'access_code',
  accessCodeBatch: 'access_code_batch',
  accessCodeLookup: 'access_code_lookup',
  accessCodeRef: 'access_code_ref',
  accessCodeRedemption: 'access_code_redemption',
  deadline: 'deadline',
  plan: 'plan',
  teamMember: 'team_member',
  teamMemberEmail: 'team_member_email',
  teamInvitation: 'team_invitation',
  role: 'role',
  roleName: 'role_name',
  group: 'group',
  groupName: 'group_name',
  subscriber: 'subscriber',
  subscriberRef: 'subscriber_ref',
  member: 'member',
  memberRef: 'member_ref',
  platformUser: 'platform_user',
  subscription: 'subscription',
  subscriberSubscription: 'subscriber_subscription',
  subscriberConversion: 'subscriber_conversion',
  subscriberAccess: 'subscriber_access',
  payment: 'payment',
  subscriberPayment: 'subscriber_payment',
  billingAccount: 'billing_account',
  billingInvoice: 'billing_invoice',
  signInLink: 'sign_in_link',
  dashboardSession: 'dashboard_session',
  passkey: 'passkey',
  webauthnChallenge: 'webauthn_challenge',
  credential: 'credential',
  hookReceipt: 'hook_receipt',
  inviteLink: 'invite_link',
  providerCustomer: 'provider_customer',
  providerSubscription: 'provider_subscription',
  providerPayment: 'provider_payment',
} as const;
