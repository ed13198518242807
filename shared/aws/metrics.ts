import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { DELIVERY_METRIC_NAMES, type DeliveryMetrics } from '../domain/webhook-deliveries/metrics.js';

/** CloudWatch namespace of the service's own metrics (DESIGN D23). */
export const METRICS_NAMESPACE = 'MembershipService';

/**
 * A Powertools Metrics instance for the service's namespace (dimension `service` =
 * `POWERTOOLS_SERVICE_NAME`). It stores metrics until {@link publishingMetrics} flushes them as one EMF
 * line on stdout per invocation; `POWERTOOLS_METRICS_DISABLED=true` (or `POWERTOOLS_DEV`) keeps it silent.
 */
export function serviceMetrics(): Metrics {
  return new Metrics({ namespace: METRICS_NAMESPACE });
}

/**
 * The `DeliveryMetrics` port on Powertools `metrics` (DESIGN D23): per finished attempt
 * `DeliveriesAttempted` 1 and `DeliveriesSucceeded` or `DeliveriesFailed` 1 (Count) and
 * `DeliveryAttemptLatency` (Milliseconds); per dead delivery `DeliveriesDead` 1. Values are stored, not
 * printed: the handler's {@link publishingMetrics} flushes them.
 */
export function powertoolsDeliveryMetrics(metrics: Metrics): DeliveryMetrics {
  return {
    attemptFinished(ok, latencyMs) {
      metrics.addMetric(DELIVERY_METRIC_NAMES.attempted, MetricUnit.Count, 1);
      metrics.addMetric(ok ? DELIVERY_METRIC_NAMES.succeeded : DELIVERY_METRIC_NAMES.failed, MetricUnit.Count, 1);
      metrics.addMetric(DELIVERY_METRIC_NAMES.attemptLatency, MetricUnit.Milliseconds, Math.max(0, latencyMs));
    },
    deliveryDead() {
      metrics.addMetric(DELIVERY_METRIC_NAMES.dead, MetricUnit.Count, 1);
    },
  };
}

/**
 * Wraps a Lambda handler so the metrics stored during an invocation are flushed when it ends, returned
 * or thrown (one EMF document; nothing is printed when none were stored).
 */
export function publishingMetrics<Event, Result>(
  metrics: Metrics,
  handler: (event: Event, context: Context) => Promise<Result>,
): (event: Event, context: Context) => Promise<Result> {
  return async (event, context) => {
    try {
      return await handler(event, context);
    } finally {
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    }
  };
}
