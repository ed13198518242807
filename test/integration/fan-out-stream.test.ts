/**
 * The AWS fan-out Lambda (`createFanOutHandler`, DESIGN D6, D14) against DynamoDB
 * Local: a DynamoDB Streams batch of outbox-event INSERTs (marshalled NewImages, as Lambda hands them
 * over) is fanned out per team — one read of the team's endpoints and owners and its events' writes
 * for all of that team's records — and a team whose fan-out fails reports exactly its records'
 * sequence numbers as `batchItemFailures` (partial batch response).
 */
import { randomUUID } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { createFanOutHandler } from '../../shared/aws/pipeline-handlers.js';
import type { Principal } from '../../shared/auth/principal.js';
import type { ManualClock } from '../../shared/clock.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { listDeliveries } from '../../shared/domain/webhook-deliveries/reads.js';
import { relayOutbox } from '../../shared/domain/webhook-deliveries/sweeper.js';
import { createWebhookEndpoint } from '../../shared/domain/webhook-endpoints/changes.js';
import type { Runtime } from '../../shared/runtime.js';
import { keys, sortKeyPrefix } from '../../shared/store/keys.js';
import { failingStore, recordingStore, withStore } from '../support/guarantees.js';
import { countingStore, createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';

/** A team with one endpoint subscribed to `project.created` and its outbox items (events not fanned out yet). */
interface StreamTeam {
  teamId: string;
  principal: Principal;
  endpointId: string;
  /** The raw stored items of the team's events still in the outbox, oldest first. */
  outbox: Record<string, unknown>[];
}

let clock: ManualClock;
let runtime: TestRuntime;

beforeEach(async () => {
  // Each test its own tables: the outbox relay that clears the setup events reads a table-wide index.
  clock = testClock();
  runtime = await createTestRuntime({ clock });
});

/** Every event item of the team's partition (raw, as stored), oldest first; `pending` keeps those not fanned out. */
async function eventItems(teamId: string, which: 'all' | 'pending' = 'pending'): Promise<Record<string, unknown>[]> {
  const { pk, sk } = keys.event(teamId, '');
  expect(sk).toBe(sortKeyPrefix.event);
  const result = await runtime.store.document.send(
    new QueryCommand({
      TableName: runtime.store.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': sk },
      ConsistentRead: true,
    }),
  );
  return (result.Items ?? []).filter((item) => which === 'all' || !item.fanned_out_at);
}

/**
 * `count` teams, each with one endpoint on `project.created` (their setup events fanned out, so the
 * outbox is empty), then `eventsEach` new projects per team, whose `project.created` events stay in the
 * outbox (nothing relays them: the test runtime's `eventsCommitted` does nothing).
 */
async function teamsWithEvents(count: number, eventsEach: number): Promise<StreamTeam[]> {
  const teams: Array<Omit<StreamTeam, 'outbox'>> = [];
  for (let index = 0; index < count; index += 1) {
    const { team, principal } = await seedTeam(runtime.store, clock);
    const endpoint = await createWebhookEndpoint(runtime, principal, {
      name: `hook ${index}`,
      url: 'https://receiver.example/hooks',
      events: ['project.created'],
    });
    teams.push({ teamId: team.id, principal, endpointId: endpoint.id });
  }
  await relayOutbox(runtime, clock.nowMs());
  runtime.drain();
  const seeded: StreamTeam[] = [];
  for (const team of teams) {
    for (let index = 0; index < eventsEach; index += 1)
      await createProject(runtime, team.principal, {
        name: `Project ${randomUUID().slice(0, 8)}`,
        platform_type: 'discord',
      });
    const outbox = await eventItems(team.teamId);
    expect(outbox).toHaveLength(eventsEach);
    seeded.push({ ...team, outbox });
  }
  return seeded;
}

/** Stream sequence numbers only grow (numeric strings, as DynamoDB Streams gives them). */
let sequence = 0;

/** One stream record of `item` as Lambda hands it over: marshalled images, keys, a new sequence number. */
function streamRecord(
  item: Record<string, unknown>,
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE' = 'INSERT',
): DynamoDBRecord {
  sequence += 1;
  const image = marshall(item) as NonNullable<DynamoDBRecord['dynamodb']>['NewImage'];
  return {
    eventID: `event-${sequence}`,
    eventName,
    eventSource: 'aws:dynamodb',
    awsRegion: 'eu-west-1',
    dynamodb: {
      Keys: marshall({ pk: item.pk, sk: item.sk }) as NonNullable<DynamoDBRecord['dynamodb']>['Keys'],
      ...(eventName === 'REMOVE' ? {} : { NewImage: image }),
      ...(eventName === 'INSERT' ? {} : { OldImage: image }),
      SequenceNumber: String(1_000_000_000 + sequence),
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}

/** The INSERT records of the teams' outbox items, interleaved team after team (as a stream shard mixes teams). */
function interleavedBatch(teams: readonly StreamTeam[]): {
  event: DynamoDBStreamEvent;
  sequenceNumbersOf: Map<string, string[]>;
} {
  const records: DynamoDBRecord[] = [];
  const sequenceNumbersOf = new Map<string, string[]>(teams.map((team) => [team.teamId, []]));
  const longest = Math.max(...teams.map((team) => team.outbox.length));
  for (let index = 0; index < longest; index += 1) {
    for (const team of teams) {
      const item = team.outbox[index];
      if (!item) continue;
      const record = streamRecord(item);
      records.push(record);
      sequenceNumbersOf.get(team.teamId)!.push(record.dynamodb!.SequenceNumber!);
    }
  }
  return { event: { Records: records }, sequenceNumbersOf };
}

/** The team's deliveries as `event_id → endpoint_id`, with how many there are. */
async function deliveriesOf(
  team: StreamTeam,
): Promise<Array<{ event_id: string; endpoint_id: string; status: string }>> {
  const page = await listDeliveries(runtime, team.principal, { limit: 100 });
  return page.data
    .map(({ event_id, endpoint_id, status }) => ({ event_id, endpoint_id, status }))
    .sort((a, b) => a.event_id.localeCompare(b.event_id));
}

/** What each of the team's outbox events should have produced: one pending delivery to its endpoint. */
function expectedDeliveries(team: StreamTeam) {
  return team.outbox
    .map((item) => ({ event_id: item.id as string, endpoint_id: team.endpointId, status: 'pending' }))
    .sort((a, b) => a.event_id.localeCompare(b.event_id));
}

/** The handler over `store` (default: the runtime's). */
function handlerOn(store = runtime.store) {
  const onStore: Runtime = withStore(runtime, store);
  return createFanOutHandler(() => onStore);
}

describe('fan-out stream handler (DESIGN D6, D14)', () => {
  it('fans a batch of 3 teams × 3 events out with 3 requests per team (Query, BatchGetItem, TransactWriteItems), not 3 per event', async () => {
    const teams = await teamsWithEvents(3, 3);
    const { event } = interleavedBatch(teams);
    const counting = countingStore(runtime.store);
    const recording = recordingStore(counting.store);

    expect(await handlerOn(recording.store)(event)).toEqual({ batchItemFailures: [] });

    for (const team of teams) expect(await deliveriesOf(team), team.teamId).toEqual(expectedDeliveries(team));
    // Per team: its endpoints (one Query), their owners re-read (one BatchGetItem, D6), its 3 events' marks and
    // deliveries (one transaction).
    expect(counting.requests()).toBe(9);
    expect([...recording.commands].sort()).toEqual([
      'BatchGetCommand',
      'BatchGetCommand',
      'BatchGetCommand',
      'QueryCommand',
      'QueryCommand',
      'QueryCommand',
      'TransactWriteCommand',
      'TransactWriteCommand',
      'TransactWriteCommand',
    ]);
    // Attempt 1 of every delivery is queued at once.
    const { queued } = runtime.drain();
    expect(queued.map(({ message }) => `${message.team_id}/${message.attempt}`).sort()).toEqual(
      teams.flatMap((team) => team.outbox.map(() => `${team.teamId}/1`)).sort(),
    );
    for (const team of teams) expect(await eventItems(team.teamId)).toEqual([]);
  });

  it("reports exactly a failing team's records as batchItemFailures while the other teams' deliveries are written; the retry completes it", async () => {
    const teams = await teamsWithEvents(3, 3);
    const [first, failing, third] = teams as [StreamTeam, StreamTeam, StreamTeam];
    const { event, sequenceNumbersOf } = interleavedBatch(teams);
    // Every store call that names the failing team's partition fails (its endpoints' Query first).
    const broken = failingStore(runtime.store, (command) => JSON.stringify(command.input).includes(failing.teamId));

    const result = await handlerOn(broken)(event);

    expect(result.batchItemFailures.map(({ itemIdentifier }) => itemIdentifier).sort()).toEqual(
      [...sequenceNumbersOf.get(failing.teamId)!].sort(),
    );
    expect(await deliveriesOf(first)).toEqual(expectedDeliveries(first));
    expect(await deliveriesOf(third)).toEqual(expectedDeliveries(third));
    expect(await deliveriesOf(failing)).toEqual([]);
    expect(await eventItems(failing.teamId)).toHaveLength(3); // still in the outbox, not marked
    expect(new Set(runtime.drain().queued.map(({ message }) => message.team_id))).toEqual(
      new Set([first.teamId, third.teamId]),
    );

    // Lambda hands the batch over again (from the lowest failed sequence number: here the whole of it).
    expect(await handlerOn()(event)).toEqual({ batchItemFailures: [] });
    for (const team of teams) expect(await deliveriesOf(team), team.teamId).toEqual(expectedDeliveries(team));
    expect(runtime.drain().queued.map(({ message }) => message.team_id)).toEqual([
      failing.teamId,
      failing.teamId,
      failing.teamId,
    ]);
  });

  it('creates nothing twice when the same batch comes again', async () => {
    const teams = await teamsWithEvents(2, 2);
    const { event } = interleavedBatch(teams);
    expect(await handlerOn()(event)).toEqual({ batchItemFailures: [] });
    expect(runtime.drain().queued).toHaveLength(4);

    expect(await handlerOn()(event)).toEqual({ batchItemFailures: [] });
    for (const team of teams) expect(await deliveriesOf(team), team.teamId).toEqual(expectedDeliveries(team));
    expect(runtime.drain().queued).toEqual([]);
  });

  it('reports an INSERT whose image cannot be read alone, and fans the rest of the batch out', async () => {
    const [team] = (await teamsWithEvents(1, 2)) as [StreamTeam];
    const unreadable = streamRecord(team.outbox[0]);
    // An attribute value with no type: `unmarshall` refuses it (no value defined).
    unreadable.dynamodb!.NewImage = { entity: {} } as unknown as NonNullable<DynamoDBRecord['dynamodb']>['NewImage'];
    const event: DynamoDBStreamEvent = { Records: [unreadable, ...team.outbox.map((item) => streamRecord(item))] };

    expect(await handlerOn()(event)).toEqual({
      batchItemFailures: [{ itemIdentifier: unreadable.dynamodb!.SequenceNumber }],
    });
    expect(await deliveriesOf(team)).toEqual(expectedDeliveries(team));
  });

  it('ignores MODIFY and REMOVE records, items that are not events, events already fanned out and records without a new image', async () => {
    const [team] = (await teamsWithEvents(1, 1)) as [StreamTeam];
    const pending = team.outbox[0];
    const fannedOut = (await eventItems(team.teamId, 'all')).find((item) => item.fanned_out_at);
    expect(fannedOut).toBeDefined();
    const project = (
      await runtime.store.document.send(
        new QueryCommand({
          TableName: runtime.store.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': `TEAM#${team.teamId}`, ':prefix': sortKeyPrefix.project },
          ConsistentRead: true,
        }),
      )
    ).Items?.[0];
    expect(project).toBeDefined();
    const withoutImage = streamRecord(pending);
    delete withoutImage.dynamodb!.NewImage;
    const event: DynamoDBStreamEvent = {
      Records: [
        streamRecord(pending, 'MODIFY'),
        streamRecord(pending, 'REMOVE'),
        streamRecord(project!),
        streamRecord(fannedOut!),
        withoutImage,
      ],
    };
    const counting = countingStore(runtime.store);

    expect(await handlerOn(counting.store)(event)).toEqual({ batchItemFailures: [] });
    expect(counting.requests()).toBe(0);
    expect(await deliveriesOf(team)).toEqual([]);
    expect(await eventItems(team.teamId)).toEqual([pending]);
    expect(runtime.drain().queued).toEqual([]);
  });
});
