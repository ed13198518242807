/** @jsx h */
/** @jsxFrag Fragment */
import { WEBHOOK_EVENTS, WEBHOOK_EVENT_FAMILIES } from '../../catalogues/webhook-events.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { type WebhookDelivery } from '../../domain/webhook-deliveries/schema.js';
import { AUTO_DISABLE_THRESHOLD } from '../../domain/webhook-endpoints/policy.js';
import type { WebhookEndpoint, WebhookEndpointWithSecret } from '../../domain/webhook-endpoints/schema.js';
import {
  Badge,
  CsrfField,
  DataTable,
  Forbidden,
  IdempotencyField,
  Notice,
  ProblemView,
  SecretOnce,
  When,
  type Viewer,
} from '../components.js';
import { ActionLink } from '../form-controls.js';
import { Page } from '../layout.js';
import { Fragment, h, type Html } from '../../web/html.js';
import { formText, formValues, htmlResult, type SignedInRequest } from '../http.js';
import { pageOperations, type ListPage } from './kit.js';
import { listWebhookEndpoints, createWebhookEndpoint } from '../../domain/webhook-endpoints/handlers.js';
import { listWebhookDeliveries } from '../../domain/webhook-deliveries/handlers.js';
import { DeliveryStatus } from './webhook-deliveries.js';

const { read, write } = pageOperations({ listWebhookEndpoints, createWebhookEndpoint, listWebhookDeliveries });

/**
 * Settings → Webhooks (interface "Subscribing", "States"; DESIGN D6–D8, D21): endpoints with their health,
 * and a new endpoint with the event picker; the endpoint's page (send test, rotate with 24-hour dual signing,
 * re-enable, delete) is in `webhook-endpoint.tsx`, deliveries are in `webhook-deliveries.tsx`. Every action runs
 * the same operation as the API, with the member as principal.
 */

/** An endpoint's state as a badge: Active (green) or Disabled (red). */
export function EndpointStatus(props: { endpoint: WebhookEndpoint }): Html {
  return props.endpoint.is_active ? <Badge color="green">Active</Badge> : <Badge color="red">Disabled</Badge>;
}

/** `GET /dashboard/webhooks`: the endpoints with status, failure streak, `disabled_at` and last delivery. */
export async function endpointsPage(request: SignedInRequest): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const endpoints = await read<ListPage<WebhookEndpoint>>(request, 'listWebhookEndpoints', { limit: 50 });
  const canSeeDeliveries = viewer.principal.abilities.has('webhook-delivery:view-any');
  const lastDeliveries = new Map<string, WebhookDelivery>();
  if (endpoints.ok && canSeeDeliveries) {
    await Promise.all(
      endpoints.result.data.map(async (endpoint) => {
        const last = await read<ListPage<WebhookDelivery>>(request, 'listWebhookDeliveries', {
          endpoint_id: endpoint.id,
          limit: 1,
        });
        if (last.ok && last.result.data[0]) lastDeliveries.set(endpoint.id, last.result.data[0]);
      }),
    );
  }
  return htmlResult(
    200,
    <Page title="Webhooks" viewer={viewer} current="/dashboard/webhooks">
      {request.query.get('deleted') ? <Notice>The endpoint was deleted.</Notice> : ''}
      <div class="actions">
        <ActionLink
          viewer={viewer}
          href="/dashboard/webhooks/new"
          ability="webhook-endpoint:manage"
          label="New endpoint"
        />
        <ActionLink
          viewer={viewer}
          href="/dashboard/webhooks/replay-dead"
          ability="webhook-delivery:retry"
          label="Replay dead deliveries"
        />
        <a href="/dashboard/webhooks/deliveries">All deliveries</a>
      </div>
      {endpoints.ok ? (
        <DataTable
          id="endpoints"
          rows={endpoints.result.data}
          empty="No endpoints yet."
          columns={[
            {
              label: 'Endpoint',
              cell: (endpoint) => (
                <>
                  <a href={`/dashboard/webhooks/endpoints/${endpoint.id}`}>{endpoint.name}</a>
                  <div class="mono hint">{endpoint.url}</div>
                </>
              ),
            },
            { label: 'Status', cell: (endpoint) => <EndpointStatus endpoint={endpoint} /> },
            {
              label: 'Failure streak',
              cell: (endpoint) => (
                <>
                  {endpoint.consecutive_failures} / {AUTO_DISABLE_THRESHOLD}
                </>
              ),
            },
            { label: 'Disabled at', cell: (endpoint) => <When at={endpoint.disabled_at} /> },
            {
              label: 'Last delivery',
              cell: (endpoint) => {
                const last = lastDeliveries.get(endpoint.id);
                return last ? (
                  <>
                    <DeliveryStatus status={last.status} /> <span class="hint">{last.event_type}</span>{' '}
                    <When at={last.last_attempt_at ?? last.created_at} />
                  </>
                ) : (
                  <span class="hint">{canSeeDeliveries ? 'none yet' : 'needs webhook-delivery:view-any'}</span>
                );
              },
            },
          ]}
        />
      ) : endpoints.problem.code === 'TOKEN_MISSING_ABILITY' ? (
        <Forbidden ability="webhook-endpoint:manage" what="the webhook endpoints" />
      ) : (
        <ProblemView problem={endpoints.problem} />
      )}
    </Page>,
  );
}

/** The new-endpoint form: name, HTTPS URL, events grouped by family with each one's minimum ability, allowed IPs. */
function EndpointForm(props: {
  viewer: Viewer;
  values?: { name?: string; url?: string; events?: string[]; allowed_ips?: string };
}): Html {
  const { viewer } = props;
  const chosen = new Set(props.values?.events ?? []);
  const families = Object.keys(WEBHOOK_EVENT_FAMILIES);
  return (
    <form method="post" action="/dashboard/webhooks" class="stack">
      <CsrfField viewer={viewer} />
      <IdempotencyField />
      <div>
        <label for="endpoint-name">Name</label>
        <input type="text" id="endpoint-name" name="name" required maxlength="100" value={props.values?.name ?? ''} />
      </div>
      <div>
        <label for="endpoint-url">URL</label>
        <input
          type="url"
          id="endpoint-url"
          name="url"
          required
          pattern="https://.*"
          placeholder="https://example.com/webhooks"
          value={props.values?.url ?? ''}
        />
        <span class="hint">Must start with https:// — plain http is refused.</span>
      </div>
      <fieldset>
        <legend>Events</legend>
        <p class="hint">
          Each event names the ability you need to subscribe to it; events you cannot subscribe to are disabled.
        </p>
        {families.map((family) => (
          <fieldset>
            <legend>{family}.*</legend>
            <div class="events">
              {WEBHOOK_EVENTS.filter((event) => event.family === family).map((event) => {
                const allowed = viewer.principal.abilities.has(event.minimum_ability);
                return (
                  <label>
                    <input
                      type="checkbox"
                      name="events"
                      value={event.name}
                      checked={chosen.has(event.name)}
                      disabled={!allowed}
                    />
                    <span>
                      <code>{event.name}</code> <span class="hint">needs {event.minimum_ability}</span>
                    </span>
                  </label>
                );
              })}
            </div>
          </fieldset>
        ))}
      </fieldset>
      <div>
        <label for="endpoint-ips">Allowed IPs (optional)</label>
        <textarea id="endpoint-ips" name="allowed_ips" rows="2" placeholder="203.0.113.10, 2001:db8::/32">
          {props.values?.allowed_ips ?? ''}
        </textarea>
        <span class="hint">
          Addresses or CIDR ranges, separated by commas or new lines. Deliveries go only to these.
        </span>
      </div>
      <div class="actions">
        <button type="submit">Create endpoint</button>
        <a href="/dashboard/webhooks">Cancel</a>
      </div>
    </form>
  );
}

/** `GET /dashboard/webhooks/new`. */
export async function newEndpointPage(request: SignedInRequest): Promise<ApiGatewayResult> {
  return htmlResult(
    200,
    <Page title="New endpoint" viewer={request.viewer} current="/dashboard/webhooks">
      <EndpointForm viewer={request.viewer} />
    </Page>,
  );
}

/** `POST /dashboard/webhooks`: `createWebhookEndpoint`; the secret is shown once, with a copy button. */
export async function createEndpoint(request: SignedInRequest): Promise<ApiGatewayResult> {
  const values = {
    name: formText(request.form, 'name'),
    url: formText(request.form, 'url'),
    events: formValues(request.form, 'events'),
    allowed_ips: request.form.get('allowed_ips') ?? '',
  };
  const allowedIps = values.allowed_ips
    .split(/[\s,]+/)
    .map((ip) => ip.trim())
    .filter(Boolean);
  const outcome = await write<WebhookEndpointWithSecret>(request, 'createWebhookEndpoint', {
    name: values.name,
    url: values.url,
    events: values.events,
    ...(allowedIps.length ? { allowed_ips: allowedIps } : {}),
  });
  if (!outcome.ok) {
    return htmlResult(
      outcome.problem.status,
      <Page title="New endpoint" viewer={request.viewer} current="/dashboard/webhooks">
        <ProblemView problem={outcome.problem} />
        <EndpointForm viewer={request.viewer} values={values} />
      </Page>,
    );
  }
  const endpoint = outcome.result;
  return htmlResult(
    201,
    <Page title="Endpoint created" viewer={request.viewer} current="/dashboard/webhooks">
      <Notice>
        Endpoint <strong>{endpoint.name}</strong> was created.
      </Notice>
      <SecretOnce id="endpoint-secret" label="Signing secret" value={endpoint.secret} />
      <p>
        <a href={`/dashboard/webhooks/endpoints/${endpoint.id}`}>Go to the endpoint</a>
      </p>
    </Page>,
  );
}
