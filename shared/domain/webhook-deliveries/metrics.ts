/**
 * The `DeliveryMetrics` port of the webhook pipeline (DESIGN D23): what the dispatcher
 * reports about delivery attempts. On AWS a Powertools Metrics adapter writes them as CloudWatch
 * embedded metric format (`shared/aws/metrics.ts`); the local server and the tests leave it out of the
 * runtime (no metrics, nothing printed).
 */

/** CloudWatch metric names of the pipeline (unit `Count`, except the latency in `Milliseconds`). */
export const DELIVERY_METRIC_NAMES = {
  /** One signed HTTPS attempt made (whatever its outcome). */
  attempted: 'DeliveriesAttempted',
  /** An attempt answered 2xx. */
  succeeded: 'DeliveriesSucceeded',
  /** An attempt that failed (non-2xx, timeout, TLS, DNS or connection failure). */
  failed: 'DeliveriesFailed',
  /** A delivery moved to `dead` (72 hours after its 8th failure, or its endpoint disabled or deleted). */
  dead: 'DeliveriesDead',
  /** Duration of one attempt, request sent to answer read (milliseconds). */
  attemptLatency: 'DeliveryAttemptLatency',
} as const;

/** What the dispatcher reports (see {@link DELIVERY_METRIC_NAMES}). Implementations never throw. */
export interface DeliveryMetrics {
  /**
   * One attempt finished: counts `attempted` and `succeeded` (`ok`) or `failed`, and records
   * `latencyMs` (milliseconds, the transport's `duration_ms`) as the attempt latency.
   */
  attemptFinished(ok: boolean, latencyMs: number): void;
  /** One delivery became `dead` (counted once: only by the writer whose transaction moved it). */
  deliveryDead(): void;
}
