/**
 * The AWS adapters of the delivery pipeline (DESIGN D7, §6: "Adapters for SQS and EventBridge
 * Scheduler are unit-tested with aws-sdk-client-mock, asserting the exact command inputs"), and the
 * dispatcher Lambda's partial batch response (Powertools batch).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  ConflictException,
  CreateScheduleCommand,
  SchedulerClient,
  ValidationException,
} from '@aws-sdk/client-scheduler';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  atExpression,
  createSchedulerRetryScheduler,
  createSqsDeliveryQueue,
  scheduleName,
} from '../../shared/aws/adapters.js';
import { createDispatcherHandler, createJobWorkerHandler } from '../../shared/aws/pipeline-handlers.js';
import type { DeliveryMessage, PipelineMessage, Runtime } from '../../shared/runtime.js';
import { createStore } from '../../shared/store/store.js';
import { testClock } from '../support/store.js';

const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries';
const JOB_QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/jobs';
const QUEUE_ARN = 'arn:aws:sqs:eu-west-1:123456789012:deliveries';
const ROLE_ARN = 'arn:aws:iam::123456789012:role/scheduler-to-sqs';
const GROUP = 'webhook-retries';
const TEAM_ID = '6f1c2b4e-8d3a-4c5b-9e7f-0a1b2c3d4e5f';

/** A valid message; its delivery id is `dlv_` + a 26-character ULID ending in the zero-padded index. */
function message(index: number, overrides: Partial<DeliveryMessage> = {}): DeliveryMessage {
  const suffix = String(index).padStart(4, '0');
  return {
    kind: 'attempt',
    team_id: TEAM_ID,
    delivery_id: `dlv_01JZ8Q3V7K000000000000${suffix}`,
    attempt: 1,
    ...overrides,
  };
}

const sqs = mockClient(SQSClient);
const scheduler = mockClient(SchedulerClient);

beforeEach(() => {
  sqs.reset();
  scheduler.reset();
});

describe('createSqsDeliveryQueue', () => {
  const queue = () =>
    createSqsDeliveryQueue(new SQSClient({ region: 'eu-west-1' }), { deliveries: QUEUE_URL, jobs: JOB_QUEUE_URL });

  it('sends JSON bodies in batches of at most 10 to the queue URL', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const messages = Array.from({ length: 23 }, (_, index) => message(index, { attempt: (index % 8) + 1 }));
    await queue().send(messages, 10);

    const calls = sqs.commandCalls(SendMessageBatchCommand);
    expect(calls.map((call) => call.args[0].input.Entries!.length)).toEqual([10, 10, 3]);
    const sent: DeliveryMessage[] = [];
    for (const call of calls) {
      const input = call.args[0].input;
      expect(input.QueueUrl).toBe(QUEUE_URL);
      const ids = input.Entries!.map((entry) => entry.Id);
      expect(new Set(ids).size).toBe(ids.length); // unique within the batch
      for (const entry of input.Entries!) {
        expect(entry.Id).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
        expect(entry.DelaySeconds).toBe(10);
        sent.push(JSON.parse(entry.MessageBody!));
      }
    }
    expect(sent).toEqual(messages);
  });

  it.each([
    [0, 0],
    [0.001, 1],
    [9.2, 10],
    [600, 600],
    [899.5, 900],
    [900, 900],
    [3_600, 900],
    [-5, 0],
  ])('a wait of %s s becomes DelaySeconds %i (rounded up, capped at 900)', async (wait, expected) => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    await queue().send([message(1)], wait);
    const [call] = sqs.commandCalls(SendMessageBatchCommand);
    expect(call.args[0].input.Entries![0].DelaySeconds).toBe(expected);
  });

  it("sends each message in its team's message group (SQS fair queues, DESIGN D24)", async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const otherTeam = '0b7d3f7e-2a47-4a8e-9d6f-5c4b3a291807';
    const replay = {
      kind: 'replay_batch' as const,
      team_id: otherTeam,
      replay_id: '5d0c9a2e-7f41-4b83-a1d6-2e9f8c7b6a54',
    };
    await queue().send([message(1), replay, message(2, { team_id: otherTeam })], 0);
    const [call] = sqs.commandCalls(SendMessageBatchCommand);
    expect(call.args[0].input.Entries!.map((entry) => entry.MessageGroupId)).toEqual([TEAM_ID, otherTeam, otherTeam]);
    expect(JSON.parse(call.args[0].input.Entries![1].MessageBody!)).toEqual(replay);
  });

  it('sends job messages to the job queue and every other message to the delivery queue, each in batches of 10', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const replay = {
      kind: 'replay_batch' as const,
      team_id: TEAM_ID,
      replay_id: '5d0c9a2e-7f41-4b83-a1d6-2e9f8c7b6a54',
    };
    const jobs = Array.from({ length: 11 }, (_, index) => ({
      kind: 'access_code_batch' as const,
      team_id: TEAM_ID,
      job_id: `5d0c9a2e-7f41-4b83-a1d6-2e9f8c7b6a${String(index).padStart(2, '0')}`,
    }));
    const broadcast = { ...jobs[0], kind: 'broadcast_batch' as const, project_id: TEAM_ID, broadcast_id: TEAM_ID };
    await queue().send([message(1), ...jobs, replay, broadcast], 5);
    const sentTo = (url: string) =>
      sqs
        .commandCalls(SendMessageBatchCommand)
        .filter((call) => call.args[0].input.QueueUrl === url)
        .map((call) => call.args[0].input.Entries!.map((entry) => JSON.parse(entry.MessageBody!) as unknown));
    expect(sentTo(QUEUE_URL)).toEqual([[message(1), replay]]);
    expect(sentTo(JOB_QUEUE_URL)).toEqual([jobs.slice(0, 10), [jobs[10], broadcast]]);
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(3);
  });

  it('sends nothing for no messages', async () => {
    await queue().send([], 0);
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(0);
  });

  it('throws when SQS reports failed entries', async () => {
    sqs.on(SendMessageBatchCommand).resolves({
      Successful: [],
      Failed: [{ Id: '1', Code: 'InternalError', SenderFault: false, Message: 'try again' }],
    });
    await expect(queue().send([message(1), message(2)], 0)).rejects.toThrow(/InternalError/);
  });

  it('throws when the SQS call itself fails', async () => {
    sqs.on(SendMessageBatchCommand).rejects(new Error('network down'));
    await expect(queue().send([message(1)], 0)).rejects.toThrow('network down');
  });
});

describe('createSchedulerRetryScheduler', () => {
  const retryScheduler = () =>
    createSchedulerRetryScheduler(new SchedulerClient({ region: 'eu-west-1' }), {
      groupName: GROUP,
      queueArn: QUEUE_ARN,
      roleArn: ROLE_ARN,
    });

  it('creates a one-time UTC schedule with a deterministic name that sends the message to the queue', async () => {
    scheduler
      .on(CreateScheduleCommand)
      .resolves({ ScheduleArn: 'arn:aws:scheduler:eu-west-1:123456789012:schedule/webhook-retries/x' });
    const retry = message(7, { attempt: 6 });
    await retryScheduler().schedule(retry, Date.parse('2026-05-02T03:04:05.000Z'));

    const calls = scheduler.commandCalls(CreateScheduleCommand);
    expect(calls).toHaveLength(1);
    const input = calls[0].args[0].input;
    expect(input).toMatchObject({
      Name: 'dlv_01JZ8Q3V7K0000000000000007-a6',
      GroupName: GROUP,
      ScheduleExpression: 'at(2026-05-02T03:04:05)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      Target: { Arn: QUEUE_ARN, RoleArn: ROLE_ARN, SqsParameters: { MessageGroupId: TEAM_ID } },
    });
    expect(JSON.parse(input.Target!.Input!)).toEqual(retry);
    expect(input.Name!.length).toBeLessThanOrEqual(64);
    expect(input.Name).toMatch(/^[0-9A-Za-z_.-]+$/);
  });

  it('names schedules per delivery, kind and attempt', () => {
    const base = message(3);
    const names = [
      scheduleName({ ...base, attempt: 6 }),
      scheduleName({ ...base, attempt: 7 }),
      scheduleName({ ...base, attempt: 8 }),
      scheduleName({ ...base, kind: 'dead_letter', attempt: 8 }),
      scheduleName({ ...message(4), attempt: 6 }),
    ];
    expect(new Set(names).size).toBe(names.length);
    expect(scheduleName({ ...base, attempt: 6 })).toBe(scheduleName({ ...base, attempt: 6 }));
  });

  it('writes at(...) in UTC and never early (rounds up to the next whole second)', () => {
    expect(atExpression(Date.parse('2026-12-31T23:59:59.000Z'))).toBe('at(2026-12-31T23:59:59)');
    expect(atExpression(Date.parse('2026-12-31T23:59:59.001Z'))).toBe('at(2027-01-01T00:00:00)');
    expect(atExpression(Date.parse('2026-07-01T09:00:00.000+02:00'))).toBe('at(2026-07-01T07:00:00)');
  });

  it('treats an existing schedule of the same name as already scheduled (ConflictException)', async () => {
    scheduler.on(CreateScheduleCommand).rejects(
      new ConflictException({
        message: 'Schedule already exists',
        Message: 'Schedule already exists',
        $metadata: {},
      }),
    );
    await expect(
      retryScheduler().schedule(message(1, { kind: 'dead_letter', attempt: 8 }), Date.now() + 72 * 3_600_000),
    ).resolves.toBeUndefined();
  });

  it('throws on any other error', async () => {
    scheduler
      .on(CreateScheduleCommand)
      .rejects(new ValidationException({ message: 'bad expression', Message: 'bad expression', $metadata: {} }));
    await expect(retryScheduler().schedule(message(1), Date.now() + 3_600_000)).rejects.toThrow('bad expression');
  });
});

describe('dispatcher handler', () => {
  function record(messageId: string, body: string): SQSRecord {
    return {
      messageId,
      receiptHandle: `rh-${messageId}`,
      body,
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: '0',
        SenderId: 'x',
        ApproximateFirstReceiveTimestamp: '0',
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: QUEUE_ARN,
      awsRegion: 'eu-west-1',
    };
  }

  /**
   * A runtime whose store answers every lease request with "condition failed" (the delivery is not
   * due: the message is skipped, a success for the batch) except for `failingDeliveryId`, whose
   * reads and writes throw (a store error: the record must be retried).
   */
  function runtimeFailingFor(failingDeliveryId: string): { runtime: Runtime; seen: string[] } {
    const seen: string[] = [];
    const document = {
      send: vi.fn(async (command: { input: { Key?: { sk?: string } } }) => {
        const sk = command.input.Key?.sk ?? '';
        seen.push(sk);
        if (sk.includes(failingDeliveryId)) throw new Error('DynamoDB unavailable');
        throw new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
      }),
    };
    const store = createStore({ document: document, tableName: 'table', deadLetterTableName: 'dead' });
    const unused = () => {
      throw new Error('not used');
    };
    return {
      seen,
      runtime: {
        store,
        clock: testClock(),
        deliveryQueue: { send: unused },
        retryScheduler: { schedule: unused },
        transport: { send: unused },
        eventsCommitted: () => undefined,
        timeScale: 1,
      },
    };
  }

  const context = {} as Context;
  let logs: ReturnType<typeof vi.spyOn>[];
  beforeEach(() => {
    logs = [
      vi.spyOn(console, 'log').mockImplementation(() => undefined),
      vi.spyOn(console, 'error').mockImplementation(() => undefined),
    ];
  });
  afterEach(() => {
    for (const spy of logs) spy.mockRestore();
  });

  it('reports only the failing record in batchItemFailures', async () => {
    const good = message(1);
    const bad = message(2);
    const { runtime, seen } = runtimeFailingFor(bad.delivery_id);
    const handler = createDispatcherHandler(() => runtime);
    const event: SQSEvent = {
      Records: [record('msg-good', JSON.stringify(good)), record('msg-bad', JSON.stringify(bad))],
    };
    const result = await handler(event, context);
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'msg-bad' }] });
    // Both were processed against the store (the good one was really looked at, not dropped).
    expect(seen.some((sk) => sk.includes(good.delivery_id))).toBe(true);
    expect(seen.some((sk) => sk.includes(bad.delivery_id))).toBe(true);
  });

  it('drops a malformed message (it can never succeed) without failing it', async () => {
    const good = message(1);
    const { runtime, seen } = runtimeFailingFor('dlv_none');
    const handler = createDispatcherHandler(() => runtime);
    const event: SQSEvent = {
      Records: [
        record('msg-good', JSON.stringify(good)),
        record('msg-junk', 'not json'),
        record('msg-wrong', JSON.stringify({ ...good, attempt: 9 })),
      ],
    };
    expect(await handler(event, context)).toEqual({ batchItemFailures: [] });
    expect(seen).toHaveLength(1);
  });

  it('forwards a message of the other queue through the queue port, and handles its own', async () => {
    const delivery = message(1);
    const job = {
      kind: 'access_code_batch' as const,
      team_id: TEAM_ID,
      job_id: '5d0c9a2e-7f41-4b83-a1d6-2e9f8c7b6a54',
    };
    const { runtime, seen } = runtimeFailingFor('dlv_none');
    const forwarded: PipelineMessage[] = [];
    const forwarding: Runtime = {
      ...runtime,
      deliveryQueue: {
        send: async (messages, delaySeconds) => {
          expect(delaySeconds).toBe(0);
          forwarded.push(...messages);
        },
      },
    };
    const event: SQSEvent = {
      Records: [record('msg-delivery', JSON.stringify(delivery)), record('msg-job', JSON.stringify(job))],
    };
    expect(await createDispatcherHandler(() => forwarding)(event, context)).toEqual({ batchItemFailures: [] });
    expect(forwarded).toEqual([job]);
    expect(seen.every((sk) => sk.includes(delivery.delivery_id))).toBe(true);

    forwarded.length = 0;
    seen.length = 0;
    // The job worker forwards the delivery and runs the job, whose first read this store refuses.
    expect(await createJobWorkerHandler(() => forwarding)(event, context)).toEqual({
      batchItemFailures: [{ itemIdentifier: 'msg-job' }],
    });
    expect(forwarded).toEqual([delivery]);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.some((sk) => sk.includes(delivery.delivery_id))).toBe(false);
  });

  it('reports every record when every record fails', async () => {
    const bad = message(2);
    const { runtime } = runtimeFailingFor(bad.delivery_id);
    const handler = createDispatcherHandler(() => runtime);
    const event: SQSEvent = {
      Records: [record('m1', JSON.stringify(bad)), record('m2', JSON.stringify({ ...bad, attempt: 2 }))],
    };
    // Powertools throws on a full batch failure, which makes Lambda retry the whole batch.
    await expect(handler(event, context)).rejects.toThrow();
  });
});
