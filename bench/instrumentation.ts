/**
 * The bench's instrumentation of the local service: a DynamoDB request counter on its document client that tells the
 * service's own background work (sweeper, deadline worker, the pipeline woken after commits) from the call being
 * measured, and a hold on the pipeline's wake-ups.
 *
 * @module
 */
import type { LocalService } from '../shared/local/service.js';
import { keys } from '../shared/store/keys.js';
import { attachRequestCounter, runAsBackground, type RequestCounter } from './support.js';
import { PIPELINE_LABEL } from './webhooks.js';

/** The local service's timers' index partitions (sharded ones by their prefix), each with the label its reads get. */
const BACKGROUND_PARTITIONS: readonly { prefix: string; label: string }[] = [
  { prefix: keys.pendingDeliveriesIndex(0).slice(0, -2), label: 'sweeper' },
  { prefix: keys.pendingMessagesIndex(0).slice(0, -2), label: 'sweeper messages' },
  { prefix: keys.outboxIndex(0).slice(0, -2), label: 'sweeper outbox relay' },
  { prefix: keys.deadlineIndex(0).slice(0, -2), label: 'deadline worker' },
  { prefix: keys.scheduledAccessAuditsIndex, label: 'access audit schedule' },
  // Every job's running index (`running…Index`): the sweeper pages each for stalled jobs, a new job's included.
  ...Object.entries(keys)
    .filter(([name, partition]) => /^running\w+Index$/.test(name) && typeof partition === 'string')
    .map(([, partition]) => ({ prefix: partition as string, label: 'sweeper' })),
];

/**
 * Labels the local service's own background reads: the sweeper's queries of pending deliveries and messages, of the
 * outbox and of running jobs, the deadline worker's and the audit schedule's (the relay woken after a commit is
 * labelled through its async context instead).
 */
function classifyServiceBackground(commandName: string, input: unknown): string | null {
  if (commandName !== 'QueryCommand' || !input || typeof input !== 'object') return null;
  const query = input as { IndexName?: string; ExpressionAttributeValues?: Record<string, unknown> };
  if (query.IndexName !== 'gsi1') return null;
  const partitions = Object.values(query.ExpressionAttributeValues ?? {}).filter((value) => typeof value === 'string');
  const match = BACKGROUND_PARTITIONS.find(({ prefix }) => partitions.some((value) => value.startsWith(prefix)));
  return match?.label ?? null;
}

/** The bench's hold on the local pipeline's wake-ups after commits (see {@link instrumentService}). */
export interface PipelineHold {
  /** From now on, commits queue their wake-ups instead of waking the pipeline. */
  hold(): void;
  /** Stops holding, wakes the pipeline for every queued commit and resolves once it is idle. */
  release(): Promise<void>;
}

/**
 * Counts every DynamoDB request of the service through its document client's middleware stack (the
 * same stack as its DynamoDB client), and runs the local outbox relay and fan-out (woken after each
 * commit; on AWS the stream-driven fan-out Lambda) as labelled background work, so it is not charged to
 * the call. While held, commits queue their wake-ups, so a measured call shares neither the process nor
 * DynamoDB Local with the fan-out (on AWS another Lambda, after the answer).
 */
export function instrumentService(service: LocalService): { counter: RequestCounter; pipeline: PipelineHold } {
  const counter = attachRequestCounter(service.store.document.middlewareStack, classifyServiceBackground);
  const wake = service.runtime.eventsCommitted.bind(service.runtime);
  let held: Array<Parameters<typeof wake>[0]> | null = null;
  service.runtime.eventsCommitted = (events) => {
    if (held) held.push(events);
    else runAsBackground(PIPELINE_LABEL, () => wake(events));
  };
  const pipeline: PipelineHold = {
    hold() {
      held ??= [];
    },
    async release() {
      const queued = held ?? [];
      held = null;
      for (const events of queued) runAsBackground(PIPELINE_LABEL, () => wake(events));
      await service.runtime.idle();
    },
  };
  return { counter, pipeline };
}
