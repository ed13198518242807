import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import type { DeliveryMessage, DeliveryQueue, RetryScheduler, Runtime } from '../runtime.js';
import type { Store } from '../store/store.js';
import { outsideRequestScope } from '../store/request-scope.js';
import { processDeliveryMessage } from '../domain/webhook-deliveries/dispatcher.js';
import { relayOutbox, sweep } from '../domain/webhook-deliveries/sweeper.js';
import { applyDueDeadlines } from '../deadlines/worker.js';
import type { WebhookTransport } from '../domain/webhook-deliveries/transport/port.js';

/** Options of {@link createLocalRuntime}. */
export interface LocalRuntimeOptions {
  store: Store;
  transport: WebhookTransport;
  clock?: Clock;
  /** `TIME_SCALE` (≥ 1): divides retry waits, the 72-hour dead-letter timer and the dual-signing window. */
  timeScale?: number;
  /** Concurrent delivery attempts in flight (default 32). */
  concurrency?: number;
  /** How often the sweeper runs, in real milliseconds (default 5 000). */
  sweepIntervalMs?: number;
  /**
   * How often the deadline worker runs (`applyDueDeadlines`, DESIGN D15), in real milliseconds
   * (default {@link DEADLINE_WORKER_INTERVAL_MS} divided by `timeScale`, at least 250 ms).
   */
  deadlineIntervalMs?: number;
  /** Receives one line per processed message (the local server logs it). */
  onDelivery?: (line: { delivery_id: string; attempt: number; outcome: string }) => void;
  onError?: (error: unknown) => void;
}

/** How often the deadline worker runs on AWS (the `rate(1 minute)` schedule), in milliseconds; locally divided by `TIME_SCALE`. */
export const DEADLINE_WORKER_INTERVAL_MS = 60_000;

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
 * The local stand-ins DESIGN §2 allows for SQS and EventBridge Scheduler: an in-process queue with
 * `setTimeout` delays and bounded concurrency, timers for long waits, an outbox relay woken after
 * each commit (DynamoDB Streams' role on AWS), and timers for the scheduled workers (the sweeper; the
 * deadline worker, every minute divided by `TIME_SCALE`, one run at a time). The same domain functions
 * run as on AWS.
 * A message whose processing throws is retried after 1 second, as SQS would after its visibility timeout.
 */
export function createLocalRuntime(options: LocalRuntimeOptions): LocalRuntime {
  const clock = options.clock ?? systemClock;
  const timeScale = Math.max(1, options.timeScale ?? 1);
  const concurrency = options.concurrency ?? 32;
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const timers = new Set<NodeJS.Timeout>();
  const timerDue = new Map<NodeJS.Timeout, number>();
  const ready: DeliveryMessage[] = [];
  let inFlight = 0;
  let stopped = false;
  let relaying: Promise<void> | null = null;
  let relayAgain = false;
  let sweeper: NodeJS.Timeout | null = null;
  let deadlineTimer: NodeJS.Timeout | null = null;
  let deadlineRun: Promise<void> | null = null;
  const idleWaiters: Array<{ withinMs: number; resolve: () => void }> = [];

  const later = (delayMs: number, action: () => void) => {
    if (stopped) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      timerDue.delete(timer);
      action();
      checkIdle();
    }, Math.max(0, delayMs));
    timers.add(timer);
    timerDue.set(timer, Date.now() + Math.max(0, delayMs));
  };

  const checkIdle = () => {
    for (const waiter of [...idleWaiters]) {
      const horizon = Date.now() + waiter.withinMs;
      const busy = ready.length > 0 || inFlight > 0 || relaying !== null || [...timerDue.values()].some((due) => due <= horizon);
      if (!busy) {
        idleWaiters.splice(idleWaiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };

  const pump = () => {
    while (!stopped && inFlight < concurrency && ready.length > 0) {
      const message = ready.shift()!;
      inFlight++;
      outsideRequestScope(() => processDeliveryMessage(runtime, message))
        .then((outcome) => options.onDelivery?.({ delivery_id: message.delivery_id, attempt: message.attempt, outcome }))
        .catch((error) => {
          onError(error);
          later(1_000, () => enqueue(message));
        })
        .finally(() => {
          inFlight--;
          pump();
          checkIdle();
        });
    }
  };
  const enqueue = (message: DeliveryMessage) => {
    ready.push(message);
    pump();
  };

  const deliveryQueue: DeliveryQueue = {
    async send(messages, delaySeconds) {
      for (const message of messages) {
        if (delaySeconds <= 0) enqueue(message);
        else later(delaySeconds * 1000, () => enqueue(message));
      }
    },
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
    timeScale,
    eventsCommitted: runRelay,
    start() {
      const interval = options.sweepIntervalMs ?? 5_000;
      sweeper = setInterval(() => {
        sweep(runtime, Math.max(1_000, 60_000 / timeScale)).catch(onError);
      }, interval);
      sweeper.unref();
      const deadlineInterval = options.deadlineIntervalMs ?? Math.max(250, DEADLINE_WORKER_INTERVAL_MS / timeScale);
      deadlineTimer = setInterval(() => {
        if (deadlineRun || stopped) return; // one run at a time; a slow run delays the next tick
        deadlineRun = outsideRequestScope(() => applyDueDeadlines(runtime, clock.nowMs()))
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
      while ((inFlight > 0 || relaying || deadlineRun) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
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
