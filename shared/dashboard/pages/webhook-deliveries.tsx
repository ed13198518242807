/** @jsx h */
/** @jsxFrag Fragment */
import { WEBHOOK_EVENT_NAMES } from '../../catalogues/webhook-events.js';
import type { ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { DELIVERY_STATUSES, type WebhookDelivery } from '../../domain/webhook-deliveries/schema.js';
import { Badge, DataTable, Forbidden, Notice, ProblemView, When, type Viewer } from '../components.js';
import { ActionForm, ActionLink } from '../form-controls.js';
import { Page } from '../layout.js';
import { Fragment, h, type Html } from '../../web/html.js';
import { htmlResult, type SignedInRequest } from '../http.js';
import { pageOperations } from './kit.js';
import {
  listWebhookDeliveries,
  getWebhookDelivery,
  retryWebhookDelivery,
} from '../../domain/webhook-deliveries/handlers.js';

const { collect, read, write } = pageOperations({ listWebhookDeliveries, getWebhookDelivery, retryWebhookDelivery });

/**
 * Settings → Webhooks → Deliveries (interface "States"; DESIGN D7, D21, D25): deliveries with filters, one
 * delivery with its attempt timeline, Retry and Replay dead. Every action runs the same operation as the API,
 * with the member as principal.
 */

/** A delivery's status as a coloured badge. */
export function DeliveryStatus(props: { status: string }): Html {
  const color =
    props.status === 'succeeded'
      ? 'green'
      : props.status === 'dead'
        ? 'red'
        : props.status === 'delivering'
          ? 'blue'
          : 'yellow';
  return <Badge color={color}>{props.status}</Badge>;
}

/** The deliveries table: event, endpoint, status, attempts, last attempt and the link to each delivery. */
export function DeliveryTable(props: { viewer: Viewer; deliveries: WebhookDelivery[] }): Html {
  return (
    <DataTable
      id="deliveries"
      rows={props.deliveries}
      empty="No deliveries match."
      columns={[
        {
          label: 'Delivery',
          cell: (delivery) => (
            <a class="mono" href={`/dashboard/webhooks/deliveries/${delivery.id}`}>
              {delivery.id}
            </a>
          ),
        },
        { label: 'Event', cell: (delivery) => <code>{delivery.event_type}</code> },
        {
          label: 'Endpoint',
          cell: (delivery) => (
            <a
              class="mono"
              href={`/dashboard/webhooks/endpoints/${delivery.endpoint_id}`}
              aria-label={`Endpoint ${delivery.endpoint_id}`}
            >
              {delivery.endpoint_id.slice(0, 8)}…
            </a>
          ),
        },
        { label: 'Status', cell: (delivery) => <DeliveryStatus status={delivery.status} /> },
        { label: 'Attempts', cell: (delivery) => delivery.attempts },
        { label: 'Created', cell: (delivery) => <When at={delivery.created_at} /> },
        { label: 'Dead-lettered', cell: (delivery) => <When at={delivery.dead_lettered_at} /> },
        {
          label: 'Actions',
          cell: (delivery) =>
            delivery.status === 'dead' ? (
              <ActionForm
                viewer={props.viewer}
                action={`/dashboard/webhooks/deliveries/${delivery.id}/retry`}
                ability="webhook-delivery:retry"
                label="Retry"
                secondary
              />
            ) : (
              ''
            ),
        },
      ]}
    />
  );
}

/** Parses a `datetime-local` value (taken as UTC) to epoch milliseconds, or null. */
function timeFilter(value: string | null): number | null {
  if (!value) return null;
  const parsed = Date.parse(/Z$/.test(value) ? value : `${value}Z`);
  return Number.isNaN(parsed) ? null : parsed;
}

/**
 * `GET /dashboard/webhooks/deliveries`: filters (status, event type, endpoint, time range of creation) and
 * the table. The filter form updates the table with htmx (`hx-get`, `hx-select`), and works as a plain GET.
 */
export async function deliveriesPage(request: SignedInRequest): Promise<ApiGatewayResult> {
  const { viewer, query } = request;
  const status = query.get('status') || undefined;
  const eventType = query.get('event_type') || undefined;
  const endpointId = query.get('endpoint_id') || undefined;
  const since = timeFilter(query.get('since'));
  const until = timeFilter(query.get('until'));
  const filters = {
    ...(status ? { status } : {}),
    ...(eventType ? { event_type: eventType } : {}),
    ...(endpointId ? { endpoint_id: endpointId } : {}),
  };
  const outcome = await collect<WebhookDelivery>(
    request,
    'listWebhookDeliveries',
    filters,
    (delivery) => {
      const created = Date.parse(delivery.created_at);
      return (since === null || created >= since) && (until === null || created <= until);
    },
    { wanted: 50, maxPages: since === null && until === null ? 1 : 10 },
  );
  return htmlResult(
    outcome.ok ? 200 : outcome.problem.status,
    <Page title="Deliveries" viewer={viewer} current="/dashboard/webhooks/deliveries">
      <form
        method="get"
        action="/dashboard/webhooks/deliveries"
        class="card filters"
        hx-get="/dashboard/webhooks/deliveries"
        hx-target="#deliveries-result"
        hx-select="#deliveries-result"
        hx-swap="outerHTML"
        hx-push-url="true"
      >
        <div>
          <label for="filter-status">Status</label>
          <select id="filter-status" name="status">
            <option value="">Any</option>
            {DELIVERY_STATUSES.map((value) => (
              <option value={value} selected={value === status}>
                {value}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="filter-event">Event type</label>
          <select id="filter-event" name="event_type">
            <option value="">Any</option>
            {WEBHOOK_EVENT_NAMES.map((value) => (
              <option value={value} selected={value === eventType}>
                {value}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="filter-since">Created from (UTC)</label>
          <input type="datetime-local" id="filter-since" name="since" value={query.get('since') ?? ''} />
        </div>
        <div>
          <label for="filter-until">Created until (UTC)</label>
          <input type="datetime-local" id="filter-until" name="until" value={query.get('until') ?? ''} />
        </div>
        {endpointId ? <input type="hidden" name="endpoint_id" value={endpointId} /> : ''}
        <div>
          <button type="submit">Filter</button>
        </div>
      </form>
      <div class="actions">
        <ActionLink
          viewer={viewer}
          href="/dashboard/webhooks/replay-dead"
          ability="webhook-delivery:retry"
          label="Replay dead deliveries"
        />
      </div>
      <div id="deliveries-result">
        {outcome.ok ? (
          <>
            <DeliveryTable viewer={viewer} deliveries={outcome.result.items} />
            {outcome.result.truncated ? (
              <p class="hint">Showing the newest matches; narrow the filters to see older ones.</p>
            ) : (
              ''
            )}
          </>
        ) : outcome.problem.code === 'TOKEN_MISSING_ABILITY' ? (
          <Forbidden ability="webhook-delivery:view-any" what="deliveries" />
        ) : (
          <ProblemView problem={outcome.problem} />
        )}
      </div>
    </Page>,
  );
}

/**
 * `GET /dashboard/webhooks/deliveries/{id}`: the attempt timeline (status or failure kind, duration, response excerpt).
 */
export async function deliveryPage(
  request: SignedInRequest,
  params: Record<string, string>,
  extra?: { notice?: Html; problem?: ProblemDocument; status?: number },
): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const outcome = await read<WebhookDelivery>(request, 'getWebhookDelivery', { id: params.id });
  if (!outcome.ok) {
    return htmlResult(
      outcome.problem.status,
      <Page title="Delivery" viewer={viewer} current="/dashboard/webhooks/deliveries">
        <ProblemView problem={outcome.problem} />
      </Page>,
    );
  }
  const delivery = outcome.result;
  return htmlResult(
    extra?.status ?? 200,
    <Page title={`Delivery ${delivery.id}`} viewer={viewer} current="/dashboard/webhooks/deliveries">
      {extra?.problem ? <ProblemView problem={extra.problem} /> : ''}
      {extra?.notice ?? ''}
      <div class="card">
        <dl class="facts">
          <dt>Event</dt>
          <dd>
            <code>{delivery.event_type}</code> <span class="mono hint">{delivery.event_id}</span>
          </dd>
          <dt>Endpoint</dt>
          <dd>
            <a href={`/dashboard/webhooks/endpoints/${delivery.endpoint_id}`}>{delivery.endpoint_id}</a>
          </dd>
          <dt>Status</dt>
          <dd>
            <DeliveryStatus status={delivery.status} />
          </dd>
          <dt>Attempts</dt>
          <dd>{delivery.attempts} of 8</dd>
          <dt>Next attempt</dt>
          <dd>
            <When at={delivery.next_attempt_at} />
          </dd>
          <dt>Dead-lettered</dt>
          <dd>
            <When at={delivery.dead_lettered_at} />
          </dd>
        </dl>
      </div>
      {delivery.status === 'dead' ? (
        <div class="actions">
          <ActionForm
            viewer={viewer}
            action={`/dashboard/webhooks/deliveries/${delivery.id}/retry`}
            ability="webhook-delivery:retry"
            label="Retry"
          />
        </div>
      ) : (
        ''
      )}
      <h2>Attempts</h2>
      {delivery.attempt_log?.length ? (
        <ol class="timeline">
          {delivery.attempt_log.map((attempt) => (
            <li>
              <When at={attempt.attempted_at} /> —{' '}
              {attempt.failure_kind ? (
                <Badge color="red">{attempt.failure_kind}</Badge>
              ) : (
                <Badge color="green">ok</Badge>
              )}{' '}
              {attempt.status !== null ? `HTTP ${attempt.status}` : 'no response'}, {attempt.duration_ms} ms
              {attempt.response_body ? <pre>{attempt.response_body}</pre> : ''}
            </li>
          ))}
        </ol>
      ) : (
        <p class="hint">No attempt yet.</p>
      )}
    </Page>,
  );
}

/** `POST /dashboard/webhooks/deliveries/{id}/retry`: `retryWebhookDelivery` (dead → pending, attempts 0). */
export async function retryDelivery(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const outcome = await write<WebhookDelivery>(request, 'retryWebhookDelivery', { id: params.id });
  if (!outcome.ok) return deliveryPage(request, params, { problem: outcome.problem, status: outcome.problem.status });
  return deliveryPage(request, params, {
    notice: <Notice>The delivery is queued again (attempts start from 0).</Notice>,
  });
}
