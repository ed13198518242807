import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { ConflictException, CreateScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { isJobMessage, type DeliveryMessage, type DeliveryQueue, type RetryScheduler } from '../runtime.js';

/** SQS `SendMessageBatch` takes at most 10 entries. */
const SQS_BATCH_SIZE = 10;

/**
 * The SQS adapter of the `DeliveryQueue` port (DESIGN D7, D24): messages are JSON bodies, sent in
 * batches of 10 with `DelaySeconds` = the wait rounded up to whole seconds (0–900) and `MessageGroupId`
 * = the team id, so the standard queue serves teams fairly (SQS fair queues: one team's backlog does
 * not raise another team's dwell time). Job messages go to `queueUrls.jobs`, every other message to
 * `queueUrls.deliveries` (`isJobMessage`). Throws when SQS reports failed entries, so the caller's
 * invocation is retried (the row stays the source of truth).
 */
export function createSqsDeliveryQueue(
  client: SQSClient,
  queueUrls: { deliveries: string; jobs: string },
): DeliveryQueue {
  return {
    async send(messages, delaySeconds) {
      const delay = Math.min(900, Math.max(0, Math.ceil(delaySeconds)));
      const jobs = messages.filter(isJobMessage);
      const deliveries = messages.filter((message) => !isJobMessage(message));
      for (const [queueUrl, queued] of [
        [queueUrls.deliveries, deliveries],
        [queueUrls.jobs, jobs],
      ] as const)
        for (let index = 0; index < queued.length; index += SQS_BATCH_SIZE) {
          const batch = queued.slice(index, index + SQS_BATCH_SIZE);
          const result = await client.send(
            new SendMessageBatchCommand({
              QueueUrl: queueUrl,
              Entries: batch.map((message, position) => ({
                Id: String(position),
                MessageBody: JSON.stringify(message),
                DelaySeconds: delay,
                MessageGroupId: message.team_id,
              })),
            }),
          );
          if (result.Failed?.length)
            throw new Error(
              `SQS rejected ${result.Failed.length} pipeline messages: ${result.Failed.map((entry) => entry.Code).join(', ')}`,
            );
        }
    },
  };
}

/** Deterministic schedule name per delivery, kind and attempt (≤ 64 characters of [0-9A-Za-z_.-]). */
export function scheduleName(message: DeliveryMessage): string {
  return `${message.delivery_id}-${message.kind === 'attempt' ? 'a' : 'dead'}${message.attempt}`;
}

/** `at(yyyy-mm-ddThh:mm:ss)` in UTC for an epoch-millisecond time, rounded up to the next whole second. */
export function atExpression(atMs: number): string {
  return `at(${new Date(Math.ceil(atMs / 1000) * 1000).toISOString().slice(0, 19)})`;
}

/**
 * The EventBridge Scheduler adapter of the `RetryScheduler` port (DESIGN D7): one one-time schedule
 * per delivery and attempt (`at(...)` in UTC, no flexible window, `ActionAfterCompletion: DELETE`)
 * whose target sends the message to the delivery queue with the scheduler role, in the team's message
 * group (`SqsParameters.MessageGroupId`, DESIGN D24). A schedule that
 * already exists (same name) means the wait is already scheduled: not an error.
 */
export function createSchedulerRetryScheduler(
  client: SchedulerClient,
  settings: { groupName: string; queueArn: string; roleArn: string },
): RetryScheduler {
  return {
    async schedule(message, atMs) {
      try {
        await client.send(
          new CreateScheduleCommand({
            Name: scheduleName(message),
            GroupName: settings.groupName,
            ScheduleExpression: atExpression(atMs),
            ScheduleExpressionTimezone: 'UTC',
            FlexibleTimeWindow: { Mode: 'OFF' },
            ActionAfterCompletion: 'DELETE',
            Target: {
              Arn: settings.queueArn,
              RoleArn: settings.roleArn,
              Input: JSON.stringify(message),
              // The fair queue's group (DESIGN D24), as the SQS adapter sends it.
              SqsParameters: { MessageGroupId: message.team_id },
              RetryPolicy: { MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86_400 },
            },
          }),
        );
      } catch (error) {
        if (!(error instanceof ConflictException)) throw error;
      }
    },
  };
}
