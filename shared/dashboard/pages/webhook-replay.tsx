/** @jsx h */
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { WebhookDelivery } from '../../domain/webhook-deliveries/schema.js';
import { Notice, ProblemView } from '../components.js';
import { ActionForm } from '../form-controls.js';
import { Page } from '../layout.js';
import { h } from '../../web/html.js';
import { htmlResult, type SignedInRequest } from '../http.js';
import { pageOperations } from './kit.js';
import { listWebhookDeliveries, replayDeadWebhookDeliveries } from '../../domain/webhook-deliveries/handlers.js';
import { HOUR_MS } from '../../clock.js';

const { collect, write } = pageOperations({ listWebhookDeliveries, replayDeadWebhookDeliveries });

/**
 * Settings → Webhooks → Replay dead (DESIGN D25): a confirmation that counts the deliveries dead-lettered in the last
 * 24 hours, then `replayDeadWebhookDeliveries` with the member as principal.
 */

/** The dead deliveries dead-lettered within the last 24 hours (counted through `listWebhookDeliveries`). */
async function deadOfLastDay(request: SignedInRequest) {
  const sinceMs = request.runtime.clock.nowMs() - 24 * HOUR_MS;
  return collect<WebhookDelivery>(
    request,
    'listWebhookDeliveries',
    { status: 'dead' },
    (delivery) => delivery.dead_lettered_at !== null && Date.parse(delivery.dead_lettered_at) >= sinceMs,
    {
      wanted: 100_000,
      maxPages: 100,
    },
  );
}

/**
 * `GET /dashboard/webhooks/replay-dead`: shows how many dead deliveries of the last 24 hours will be replayed, and asks
 * to confirm.
 */
export async function confirmReplayDead(request: SignedInRequest): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const dead = await deadOfLastDay(request);
  return htmlResult(
    dead.ok ? 200 : dead.problem.status,
    <Page title="Replay dead deliveries" viewer={viewer} current="/dashboard/webhooks/deliveries">
      {dead.ok ? (
        <div class="card">
          <p id="replay-count">
            <strong>{dead.result.items.length}</strong> dead deliver{dead.result.items.length === 1 ? 'y' : 'ies'} from
            the last 24 hours will be replayed
            {dead.result.truncated ? ' (at least; the count stopped early)' : ''}. Each is queued again with its
            attempts reset to 0.
          </p>
          <div class="actions">
            <ActionForm
              viewer={viewer}
              action="/dashboard/webhooks/replay-dead"
              ability="webhook-delivery:retry"
              label={`Replay all ${dead.result.items.length}`}
              fields={{ expected: String(dead.result.items.length) }}
            />
            <a href="/dashboard/webhooks/deliveries?status=dead">Cancel</a>
          </div>
        </div>
      ) : (
        <ProblemView problem={dead.problem} />
      )}
    </Page>,
  );
}

/**
 * `POST /dashboard/webhooks/replay-dead`: `replayDeadWebhookDeliveries` with `since_hours: 24` (every one of them, not
 * one page).
 */
export async function replayDead(request: SignedInRequest): Promise<ApiGatewayResult> {
  // D25: the operation answers at once with a replay job that re-queues in the background; `matched` is how many it
  // replays.
  const outcome = await write<{ id: string; status: string; matched: number; replayed: number }>(
    request,
    'replayDeadWebhookDeliveries',
    { since_hours: 24 },
  );
  return htmlResult(
    outcome.ok ? 202 : outcome.problem.status,
    <Page title="Replay dead deliveries" viewer={request.viewer} current="/dashboard/webhooks/deliveries">
      {outcome.ok ? (
        <Notice>
          <span id="replayed">{outcome.result.matched}</span> dead deliveries from the last 24 hours are being queued
          again (replay job <code>{outcome.result.id}</code>, {outcome.result.status}; {outcome.result.replayed} so
          far).
        </Notice>
      ) : (
        <ProblemView problem={outcome.problem} />
      )}
      <p>
        <a href="/dashboard/webhooks/deliveries">Back to deliveries</a>
      </p>
    </Page>,
  );
}
