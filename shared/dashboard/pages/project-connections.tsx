/** @jsx h */
/** @jsxFrag Fragment */
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { Project, ProjectResource } from '../../domain/projects/schema.js';
import { Notice } from '../components.js';
import { h } from '../../web/html.js';
import { formText, type SignedInRequest } from '../http.js';
import { pageOperations } from './kit.js';
import {
  connectProjectBot,
  disconnectProjectBot,
  connectProjectPaymentProvider,
  disconnectProjectPaymentProvider,
  linkProjectResource,
  unlinkProjectResource,
} from '../../domain/projects/handlers.js';
import { settingsPage } from './project-settings.js';

const { write } = pageOperations({
  connectProjectBot,
  disconnectProjectBot,
  connectProjectPaymentProvider,
  disconnectProjectPaymentProvider,
  linkProjectResource,
  unlinkProjectResource,
});

/**
 * The settings page's connection actions (DESIGN D16, D22): connect and disconnect the bot, connect Stripe
 * or the manual provider and disconnect it, link and unlink resources — each the registry's operation run
 * for the member. A refusal (including the provider's 422/502 problems) comes back on the settings page in
 * the form's section, with only the form's non-secret fields filled in again.
 */

/** The form's non-empty text fields named in `names`. */
function fieldsOf(request: SignedInRequest, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    names.flatMap((name) => (formText(request.form, name) ? [[name, formText(request.form, name) as string]] : [])),
  );
}

/**
 * `POST /dashboard/projects/{id}/bot`: `connectProjectBot` (Telegram: the token; Discord: token, application id, public
 * key, client secret).
 */
export async function connectBot(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const input = fieldsOf(request, ['platform', 'token', 'application_id', 'public_key', 'client_secret']);
  const outcome = await write<Project>(request, 'connectProjectBot', { project_id: params.id, ...input });
  if (!outcome.ok)
    return settingsPage(request, params, {
      problem: outcome.problem,
      at: 'bot',
      values: { application_id: input.application_id, public_key: input.public_key },
    });
  return settingsPage(request, params, {
    notice: (
      <Notice>The bot {outcome.result.bot?.username ? `@${outcome.result.bot.username}` : ''} is connected.</Notice>
    ),
  });
}

/** `POST /dashboard/projects/{id}/bot/disconnect`: `disconnectProjectBot`. */
export async function disconnectBot(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const outcome = await write<Project>(request, 'disconnectProjectBot', { project_id: params.id });
  if (!outcome.ok) return settingsPage(request, params, { problem: outcome.problem, at: 'bot' });
  return settingsPage(request, params, { notice: <Notice>The bot is disconnected.</Notice> });
}

/**
 * `POST /dashboard/projects/{id}/payment-provider`: `connectProjectPaymentProvider` (stripe with its restricted key and
 * webhook secret, or manual).
 */
export async function connectProvider(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const input = fieldsOf(request, ['provider', 'secret_key', 'webhook_secret']);
  const outcome = await write<Project>(request, 'connectProjectPaymentProvider', { project_id: params.id, ...input });
  if (!outcome.ok) return settingsPage(request, params, { problem: outcome.problem, at: 'provider' });
  return settingsPage(request, params, {
    notice: <Notice>The payment provider {outcome.result.payment_provider?.provider ?? ''} is connected.</Notice>,
  });
}

/**
 * `POST /dashboard/projects/{id}/payment-provider/disconnect`: `disconnectProjectPaymentProvider` (CONFLICT while
 * subscriptions are live).
 */
export async function disconnectProvider(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const outcome = await write<Project>(request, 'disconnectProjectPaymentProvider', { project_id: params.id });
  if (!outcome.ok) return settingsPage(request, params, { problem: outcome.problem, at: 'provider' });
  return settingsPage(request, params, { notice: <Notice>The payment provider is disconnected.</Notice> });
}

/**
 * `POST /dashboard/projects/{id}/resources`: `linkProjectResource` (kind of the platform, platform resource id,
 * optional name).
 */
export async function linkResource(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const input = fieldsOf(request, ['kind', 'platform_resource_id', 'name']);
  const outcome = await write<ProjectResource>(request, 'linkProjectResource', { project_id: params.id, ...input });
  if (!outcome.ok) return settingsPage(request, params, { problem: outcome.problem, at: 'resources', values: input });
  return settingsPage(request, params, { notice: <Notice>The {outcome.result.kind} is linked.</Notice> });
}

/** `POST /dashboard/projects/{id}/resources/{resource}/unlink`: `unlinkProjectResource`. */
export async function unlinkResource(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const outcome = await write(request, 'unlinkProjectResource', {
    project_id: params.id,
    resource_id: params.resource,
  });
  if (!outcome.ok) return settingsPage(request, params, { problem: outcome.problem, at: 'resources' });
  return settingsPage(request, params, { notice: <Notice>The resource is unlinked.</Notice> });
}
