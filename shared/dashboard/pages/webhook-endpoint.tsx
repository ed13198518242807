/** @jsx h */
/** @jsxFrag Fragment */
/**
 * Settings → Webhooks → one endpoint (interface "States"; DESIGN D6–D8, D21): its facts and recent deliveries,
 * and its actions (send test, rotate with 24-hour dual signing, enable/disable, delete), each the API's operation.
 */
import { isoTime } from '../../clock.js';
import type { ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { type WebhookDelivery } from '../../domain/webhook-deliveries/schema.js';
import { rotateWebhookEndpointSecretWithDualSigning } from '../../domain/webhook-endpoints/handlers.js';
import { AUTO_DISABLE_THRESHOLD } from '../../domain/webhook-endpoints/policy.js';
import { loadWebhookEndpoint } from '../../domain/webhook-endpoints/repository.js';
import type { WebhookEndpoint, WebhookEndpointWithSecret } from '../../domain/webhook-endpoints/schema.js';
import { anyHandler } from '../../operations/handler.js';
import { Forbidden, Notice, ProblemView, SecretOnce, When } from '../components.js';
import { ActionForm, ActionLink } from '../form-controls.js';
import { Page } from '../layout.js';
import { Fragment, h, type Html } from '../../web/html.js';
import { htmlResult, redirectResult, type SignedInRequest } from '../http.js';
import { pageOperations, type ListPage } from './kit.js';
import {
  getWebhookEndpoint,
  sendTestWebhookEvent,
  rotateWebhookEndpointSecret,
  updateWebhookEndpoint,
  deleteWebhookEndpoint,
} from '../../domain/webhook-endpoints/handlers.js';
import { listWebhookDeliveries } from '../../domain/webhook-deliveries/handlers.js';
import { DeliveryTable } from './webhook-deliveries.js';
import { EndpointStatus } from './webhooks.js';

const { read, write } = pageOperations({
  getWebhookEndpoint,
  sendTestWebhookEvent,
  rotateWebhookEndpointSecret,
  updateWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookDeliveries,
});

/** `GET /dashboard/webhooks/endpoints/{id}`: facts, actions and recent deliveries of one endpoint. */
export async function endpointPage(
  request: SignedInRequest,
  params: Record<string, string>,
  extra?: { notice?: Html; problem?: ProblemDocument; secret?: string; status?: number },
): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const outcome = await read<WebhookEndpoint>(request, 'getWebhookEndpoint', { id: params.id });
  if (!outcome.ok) {
    return htmlResult(
      outcome.problem.status,
      <Page title="Endpoint" viewer={viewer} current="/dashboard/webhooks">
        <ProblemView problem={outcome.problem} />
      </Page>,
    );
  }
  const endpoint = outcome.result;
  // The dual-signing window is not part of the public endpoint: read it only after the operation allowed the read.
  const stored = await loadWebhookEndpoint(request.runtime, viewer.team.id, endpoint.id);
  const nowMs = request.runtime.clock.nowMs();
  const dualSigningUntil =
    stored?.previous_secret_expires_at_ms && stored.previous_secret_expires_at_ms > nowMs
      ? isoTime(stored.previous_secret_expires_at_ms)
      : null;
  const deliveries = viewer.principal.abilities.has('webhook-delivery:view-any')
    ? await read<ListPage<WebhookDelivery>>(request, 'listWebhookDeliveries', { endpoint_id: endpoint.id, limit: 10 })
    : null;
  const base = `/dashboard/webhooks/endpoints/${endpoint.id}`;
  return htmlResult(
    extra?.status ?? 200,
    <Page title={endpoint.name} viewer={viewer} current="/dashboard/webhooks">
      {extra?.problem ? <ProblemView problem={extra.problem} /> : ''}
      {extra?.notice ?? ''}
      {extra?.secret ? <SecretOnce id="endpoint-secret" label="New signing secret" value={extra.secret} /> : ''}
      <div class="card">
        <dl class="facts">
          <dt>URL</dt>
          <dd class="mono">{endpoint.url}</dd>
          <dt>Status</dt>
          <dd>
            <EndpointStatus endpoint={endpoint} />
          </dd>
          <dt>Failure streak</dt>
          <dd>
            {endpoint.consecutive_failures} / {AUTO_DISABLE_THRESHOLD} (the endpoint is disabled at{' '}
            {AUTO_DISABLE_THRESHOLD})
          </dd>
          <dt>Disabled at</dt>
          <dd>
            <When at={endpoint.disabled_at} />
          </dd>
          <dt>Events</dt>
          <dd>
            {endpoint.events.map((event) => (
              <>
                <code>{event}</code>{' '}
              </>
            ))}
          </dd>
          <dt>Allowed IPs</dt>
          <dd>{endpoint.allowed_ips?.join(', ') ?? 'any public address'}</dd>
          <dt>Signing</dt>
          <dd id="dual-signing">
            {dualSigningUntil ? (
              <>
                Rotated: deliveries are signed with the new secret (<code>v1</code>) and the old one (<code>v0</code>)
                until <When at={dualSigningUntil} />.
              </>
            ) : (
              <>
                One secret (<code>v1</code>).
              </>
            )}
          </dd>
          <dt>Created</dt>
          <dd>
            <When at={endpoint.created_at} />
          </dd>
        </dl>
      </div>
      <div class="actions">
        <ActionForm
          viewer={viewer}
          action={`${base}/test`}
          ability="webhook-endpoint:manage"
          label="Send test event"
          secondary
        />
        <ActionForm
          viewer={viewer}
          action={`${base}/rotate-secret`}
          ability="webhook-endpoint:manage"
          label="Rotate secret (old one valid 24 hours)"
          secondary
        />
        {endpoint.is_active ? (
          <ActionForm
            viewer={viewer}
            action={`${base}/disable`}
            ability="webhook-endpoint:manage"
            label="Disable"
            secondary
          />
        ) : (
          <ActionForm viewer={viewer} action={`${base}/enable`} ability="webhook-endpoint:manage" label="Re-enable" />
        )}
        <ActionLink
          viewer={viewer}
          href={`${base}/delete`}
          ability="webhook-endpoint:manage"
          label="Delete"
          secondary
        />
      </div>
      <h2>Recent deliveries</h2>
      {deliveries === null ? (
        <Forbidden ability="webhook-delivery:view-any" what="deliveries" />
      ) : deliveries.ok ? (
        <DeliveryTable viewer={viewer} deliveries={deliveries.result.data} />
      ) : (
        <ProblemView problem={deliveries.problem} />
      )}
      <p>
        <a href={`/dashboard/webhooks/deliveries?endpoint_id=${endpoint.id}`}>All deliveries of this endpoint</a>
      </p>
    </Page>,
  );
}

/** `POST .../test`: `sendTestWebhookEvent`. */
export async function sendTest(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const outcome = await write<WebhookDelivery>(request, 'sendTestWebhookEvent', { id: params.id });
  if (!outcome.ok) return endpointPage(request, params, { problem: outcome.problem, status: outcome.problem.status });
  return endpointPage(request, params, {
    notice: (
      <Notice>
        A <code>webhook_endpoint.test</code> event is on its way (delivery{' '}
        <a href={`/dashboard/webhooks/deliveries/${outcome.result.id}`}>{outcome.result.id}</a>).
      </Notice>
    ),
  });
}

/** `POST .../rotate-secret`: the dashboard rotation — the old secret keeps signing (`v0`) for 24 hours. */
export async function rotateSecret(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const outcome = await write<WebhookEndpointWithSecret>(
    request,
    'rotateWebhookEndpointSecret',
    { id: params.id },
    anyHandler(rotateWebhookEndpointSecretWithDualSigning),
  );
  if (!outcome.ok) return endpointPage(request, params, { problem: outcome.problem, status: outcome.problem.status });
  return endpointPage(request, params, {
    secret: outcome.result.secret,
    notice: <Notice>The secret was rotated. Update your receiver within 24 hours.</Notice>,
  });
}

/** `POST .../enable` and `.../disable`: `updateWebhookEndpoint` with `is_active`. */
export function setActive(active: boolean) {
  return async (request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> => {
    const outcome = await write<WebhookEndpoint>(request, 'updateWebhookEndpoint', {
      id: params.id,
      is_active: active,
    });
    if (!outcome.ok) return endpointPage(request, params, { problem: outcome.problem, status: outcome.problem.status });
    return endpointPage(request, params, {
      notice: (
        <Notice>
          {active ? 'The endpoint is active again; its failure streak starts from 0.' : 'The endpoint is disabled.'}
        </Notice>
      ),
    });
  };
}

/** `GET .../delete`: asks to confirm. */
export async function confirmDeleteEndpoint(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const outcome = await read<WebhookEndpoint>(request, 'getWebhookEndpoint', { id: params.id });
  return htmlResult(
    outcome.ok ? 200 : outcome.problem.status,
    <Page title="Delete endpoint" viewer={request.viewer} current="/dashboard/webhooks">
      {outcome.ok ? (
        <div class="card">
          <p>
            Delete <strong>{outcome.result.name}</strong> (<span class="mono">{outcome.result.url}</span>)? Pending
            deliveries to it stop.
          </p>
          <div class="actions">
            <ActionForm
              viewer={request.viewer}
              action={`/dashboard/webhooks/endpoints/${params.id}/delete`}
              ability="webhook-endpoint:manage"
              label="Delete endpoint"
              danger
            />
            <a href={`/dashboard/webhooks/endpoints/${params.id}`}>Keep it</a>
          </div>
        </div>
      ) : (
        <ProblemView problem={outcome.problem} />
      )}
    </Page>,
  );
}

/** `POST .../delete`: `deleteWebhookEndpoint`. */
export async function deleteEndpoint(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const outcome = await write(request, 'deleteWebhookEndpoint', { id: params.id });
  if (!outcome.ok) return endpointPage(request, params, { problem: outcome.problem, status: outcome.problem.status });
  return redirectResult('/dashboard/webhooks?deleted=1');
}
