import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import type { DeliveryQueue, PipelineMessage, RetryScheduler, Runtime } from '../runtime.js';
import type { StoredEvent } from '../events/outbox.js';
import { fanOutEvents } from '../domain/webhook-deliveries/fan-out.js';
import type { Store } from '../store/store.js';
import { outsideRequestScope } from '../store/request-scope.js';
import { processPipelineMessage } from '../domain/pipeline-messages.js';
import { relayOutbox, sweep } from '../domain/webhook-deliveries/sweeper.js';
import { applyDueDeadlines } from '../deadlines/worker.js';
import { startDueAccessAudits } from '../domain/access-audits/scheduler.js';
import { DEFAULT_MAX_CONCURRENCY } from '../domain/webhook-endpoints/policy.js';
import type { WebhookTransport } from '../domain/webhook-deliveries/transport/port.js';
import type { MailSender } from '../mail/port.js';
import { FairQueue } from './fair-queue.js';

/** Options of {@link createLocalRuntime}. */
export interface LocalRuntimeOptions {
  store: Store;
  transport: WebhookTransport;
  /**
   * Sends the messages' e-mail (DESIGN D32; `npm start`: SMTP to its inbox or `SMTP_URL`); unset: the environment's.
   */
  mail?: MailSender;
  clock?: Clock;
  /** `TIME_SCALE` (≥ 1): divides retry waits, the 72-hour dead-letter timer and the dual-signing window. */
  timeScale?: number;
  /** Concurrent delivery attempts in flight (default 32). */
  concurrency?: number;
  /**
   * Most messages of ONE team in flight at once (default a quarter of `concurrency`, at least 1), so a
   * team whose receivers hang cannot take every slot (DESIGN D24).
   */
  teamConcurrency?: number;
  /** How often the sweeper runs, in real milliseconds (default 5 000). */
  sweepIntervalMs?: number;
  /**
   * How often the deadline worker runs (`applyDueDeadlines`, DESIGN D15), in real milliseconds
   * (default {@link DEADLINE_WORKER_INTERVAL_MS} divided by `timeScale`, at least 250 ms).
   */
  deadlineIntervalMs?: number;
  /** Receives one line per processed message (the local server logs it). */
  onDelivery?: (line: { delivery_id: string; attempt: number; outcome: string }) => void;
  /** Receives one line per processed message to a subscriber (DESIGN D32). */
  onMessage?: (line: { message_id: string; attempt: number; outcome: string }) => void;
  /** Receives one line per processed replay batch. */
  onReplayBatch?: (line: { replay_id: string; outcome: string }) => void;
  onError?: (error: unknown) => void;
}

/**
 * How often the deadline worker runs on AWS (the `rate(1 minute)` schedule), in milliseconds; locally divided by
 * `TIME_SCALE`.
 */
const DEADLINE_WORKER_INTERVAL_MS = 60_000;

/** The local runtime plus the controls of its in-process pipeline. */
export interface LocalRuntime extends Runtime {
  /** Starts the periodic sweeper and the deadline worker. */
  start(): void;
  /** Stops timers and waits for in-flight work (milliseconds budget, default 5 000). */
  stop(timeoutMs?: number): Promise<void>;
  /** Resolves when no message is queued, in flight or waiting on a timer due within `withinMs`. */
  idle(withinMs?: number): Promise<void>;
}

/**
 * Local SQS/Scheduler stand-ins (§2): in-process queue (a throw retries after 1 s), timers, outbox relay after each
 * commit, workers scaled by `TIME_SCALE`. Fair (D24): round robin, ≤ `teamConcurrency` per team and
 * DEFAULT_MAX_CONCURRENCY per endpoint; a delivery message waiting or in flight is not queued twice.
 */
export function createLocalRuntime(options: LocalRuntimeOptions): LocalRuntime {
  const clock = options.clock ?? systemClock;
  const timeScale = Math.max(1, options.timeScale ?? 1);
  const concurrency = options.concurrency ?? 32;
  const teamConcurrency = Math.max(1, Math.min(concurrency, options.teamConcurrency ?? Math.floor(concurrency / 4)));
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const timers = new Set<NodeJS.Timeout>();
  const timerDue = new Map<NodeJS.Timeout, number>();
  const ready = new FairQueue();
  let inFlight = 0;
  let fanOuts = 0;
  let stopped = false;
  let relaying: Promise<void> | null = null;
  let relayAgain = false;
  let sweeper: NodeJS.Timeout | null = null;
  let deadlineTimer: NodeJS.Timeout | null = null;
  let deadlineRun: Promise<void> | null = null;
  let sweepRun: Promise<void> | null = null;
  const idleWaiters: Array<{ withinMs: number; resolve: () => void }> = [];

  const later = (delayMs: number, action: () => void) => {
    if (stopped) return;
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        timerDue.delete(timer);
        action();
        checkIdle();
      },
      Math.max(0, delayMs),
    );
    timers.add(timer);
    timerDue.set(timer, Date.now() + Math.max(0, delayMs));
  };

  const checkIdle = () => {
    for (const waiter of [...idleWaiters]) {
      const horizon = Date.now() + waiter.withinMs;
      const busy =
        ready.size > 0 ||
        inFlight > 0 ||
        fanOuts > 0 ||
        relaying !== null ||
        [...timerDue.values()].some((due) => due <= horizon);
      if (!busy) {
        idleWaiters.splice(idleWaiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };

  const pump = () => {
    while (!stopped && inFlight < concurrency) {
      const message = ready.take(teamConcurrency, DEFAULT_MAX_CONCURRENCY);
      if (!message) break;
      inFlight++;
      outsideRequestScope(() => processPipelineMessage(runtime, message))
        .then((outcome) => {
          if (message.kind === 'replay_batch') options.onReplayBatch?.({ replay_id: message.replay_id, outcome });
          else if (message.kind === 'message_send')
            options.onMessage?.({ message_id: message.message_id, attempt: message.attempt, outcome });
          else if (
            message.kind !== 'broadcast_batch' &&
            message.kind !== 'import_page' &&
            message.kind !== 'access_audit_page' &&
            message.kind !== 'access_code_batch'
          )
            options.onDelivery?.({ delivery_id: message.delivery_id, attempt: message.attempt, outcome });
        })
        .catch((error) => {
          onError(error);
          later(1_000, () => enqueue(message));
        })
        .finally(() => {
          inFlight--;
          ready.done(message);
          pump();
          checkIdle();
        });
    }
  };
  const enqueue = (message: PipelineMessage) => {
    ready.push(message, clock.nowMs());
    pump();
  };

  const deliveryQueue: DeliveryQueue = {
    async send(messages, delaySeconds) {
      for (const message of messages) {
        if (delaySeconds <= 0) enqueue(message);
        else later(delaySeconds * 1000, () => enqueue(message));
      }
    },
    oldestWaitingSinceMs: () => ready.oldestSinceMs(),
  };
  const retryScheduler: RetryScheduler = {
    async schedule(message, atMs) {
      later(atMs - clock.nowMs(), () => enqueue(message));
    },
  };

  const runRelay = () => {
    if (relaying) {
      relayAgain = true;
      return;
    }
    relaying = (async () => {
      do {
        relayAgain = false;
        await outsideRequestScope(() => relayOutbox(runtime, clock.nowMs())).catch(onError);
      } while (relayAgain && !stopped);
    })().finally(() => {
      relaying = null;
      checkIdle();
    });
  };

  const runtime: LocalRuntime = {
    store: options.store,
    clock,
    deliveryQueue,
    retryScheduler,
    transport: options.transport,
    mail: options.mail,
    timeScale,
    eventsCommitted: (events?: readonly StoredEvent[]) => {
      if (!events) return runRelay();
      // The committed events are fanned out right after the request's answer is written (the stream's role
      // on AWS, outside the request); the sweeper's relay catches any that fail.
      fanOuts++;
      setImmediate(() => {
        outsideRequestScope(() => fanOutEvents(runtime, events))
          .catch(onError)
          .finally(() => {
            fanOuts--;
            checkIdle();
          });
      });
    },
    start() {
      const interval = options.sweepIntervalMs ?? 5_000;
      sweeper = setInterval(() => {
        // One sweep at a time: a sweep slower than the interval (a long backlog) delays the next instead of running
        // beside it.
        if (sweepRun || stopped) return;
        sweepRun = outsideRequestScope(() => sweep(runtime, Math.max(1_000, 60_000 / timeScale), interval))
          .then(() => undefined, onError)
          .finally(() => {
            sweepRun = null;
          });
      }, interval);
      sweeper.unref();
      const deadlineInterval = options.deadlineIntervalMs ?? Math.max(250, DEADLINE_WORKER_INTERVAL_MS / timeScale);
      deadlineTimer = setInterval(() => {
        if (deadlineRun || stopped) return; // one run at a time; a slow run delays the next tick
        const nowMs = clock.nowMs();
        deadlineRun = outsideRequestScope(() =>
          applyDueDeadlines(runtime, nowMs).then(() => startDueAccessAudits(runtime, nowMs)),
        )
          .then(() => undefined, onError)
          .finally(() => {
            deadlineRun = null;
          });
      }, deadlineInterval);
      deadlineTimer.unref();
      runRelay();
    },
    async stop(timeoutMs = 5_000) {
      stopped = true;
      if (sweeper) clearInterval(sweeper);
      if (deadlineTimer) clearInterval(deadlineTimer);
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      timerDue.clear();
      const deadline = Date.now() + timeoutMs;
      while ((inFlight > 0 || fanOuts > 0 || relaying || deadlineRun || sweepRun) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
    },
    idle(withinMs = 0) {
      return new Promise<void>((resolve) => {
        idleWaiters.push({ withinMs, resolve });
        checkIdle();
      });
    },
  };
  return runtime;
}
