/** @jsx h */
/** @jsxFrag Fragment */
import { ABILITIES, type Ability } from '../../catalogues/abilities.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { Project } from '../../domain/projects/schema.js';
import { findAuthorizationRequest, grantableAbilities } from '../../oauth/authorization-requests.js';
import type { AuthorizationRequest } from '../../oauth/records.js';
import { CsrfField, IdempotencyField, Notice } from '../components.js';
import { Page } from '../layout.js';
import { Fragment, h } from '../../web/html.js';
import { formText, htmlResult, redirectResult, type SignedInRequest } from '../http.js';
import { tokensInternalHandlers } from '../../domain/tokens/internal-handlers.js';
import { pageOperations, type ListPage } from './kit.js';
import { listProjects } from '../../domain/projects/handlers.js';

const { read, write } = pageOperations({
  listProjects,
  approveOAuthConsent: tokensInternalHandlers.approveOAuthConsent,
  denyOAuthConsent: tokensInternalHandlers.denyOAuthConsent,
});

/**
 * The consent screen of the tool server's OAuth authorization server (DESIGN D30): `/oauth/authorize`
 * validated the client's request and sent the signed-in team member here. The page names the team, the
 * client and the abilities it would get — the requested ones narrowed to what the member holds — with an
 * optional project scope; Allow sends the browser back to the client with a code, Deny with
 * `error=access_denied`.
 */

/** The requested abilities the member holds team-wide, in catalogue order: what a consent can grant. */
function grantable(request: SignedInRequest, pending: AuthorizationRequest): Ability[] {
  return grantableAbilities(request.viewer.principal.abilities, pending);
}

function expiredPage(request: SignedInRequest): ApiGatewayResult {
  return htmlResult(
    404,
    <Page title="Connect an AI client" viewer={request.viewer} current="/dashboard/tokens">
      <Notice>
        This authorization request is unknown, expired or already answered. Start again from your AI client.
      </Notice>
    </Page>,
  );
}

/**
 * The consent page's own CSP: the dashboard's, with the client's redirect origin added to `form-action`
 * (browsers apply it to the redirect after Allow or Deny) and `frame-ancestors 'none'` (no clickjacking).
 */
function withRedirectOrigin(result: ApiGatewayResult, redirectUri: string): ApiGatewayResult {
  const csp = result.headers['Content-Security-Policy'];
  if (csp)
    result.headers['Content-Security-Policy'] = csp.replace(
      "form-action 'self'",
      `form-action 'self' ${new URL(redirectUri).origin}`,
    );
  return result;
}

/**
 * Abilities grouped by object, in catalogue order: `[object, actions]` pairs (`["project", ["view-any", "update"]]`),
 * so a consent of twenty abilities is a few lines and its decision stays in view.
 */
function abilityGroups(abilities: readonly string[]): [string, string[]][] {
  const groups = new Map<string, string[]>();
  for (const ability of abilities) {
    const [object, action] = ability.split(':');
    groups.set(object, [...(groups.get(object) ?? []), action ?? object]);
  }
  return [...groups];
}

/** `GET /dashboard/oauth/authorize?request=<id>`: the consent screen. */
export async function consentPage(request: SignedInRequest): Promise<ApiGatewayResult> {
  const pending = await findAuthorizationRequest(
    request.runtime.store,
    request.runtime.clock,
    request.query.get('request') ?? '',
  );
  if (!pending) return expiredPage(request);
  const abilities = grantable(request, pending);
  const projects = await read<ListPage<Project>>(request, 'listProjects', { limit: 100 });
  // A metadata document's client_name is the client's own claim: its URL's host is shown beside it (DESIGN D30).
  const clientName = pending.client_name ?? pending.client_host ?? pending.client_id;
  const usable = abilities.includes('mcp:full');
  return withRedirectOrigin(
    htmlResult(
      200,
      <Page title="Connect an AI client" viewer={request.viewer} current="/dashboard/tokens">
        <div class="card stack" id="consent">
          <p>
            <strong>{clientName}</strong>
            {pending.client_host ? (
              <>
                {' '}
                (client of{' '}
                <span class="mono" id="consent-client-host">
                  {pending.client_host}
                </span>
                )
              </>
            ) : (
              ''
            )}{' '}
            asks to use the tool server of team <strong>{request.viewer.team.name}</strong> on your behalf.
          </p>
          <p class="hint">
            It will be sent back to <span class="mono">{new URL(pending.redirect_uri).origin}</span>. Its access token
            works for an hour and is renewed for up to 30 days; revoke it on the API tokens page at any time.
          </p>
          <h2>It would be able to</h2>
          <ul id="consent-abilities">
            {abilityGroups(abilities).map(([object, actions]) => (
              <li>
                <strong>{object}</strong>: {actions.join(', ')}
              </li>
            ))}
          </ul>
          <details>
            <summary>What each ability allows</summary>
            <ul>
              {abilities.map((ability) => (
                <li>
                  <code>{ability}</code>{' '}
                  <span class="hint">{ABILITIES.find((entry) => entry.value === ability)?.description ?? ''}</span>
                </li>
              ))}
            </ul>
          </details>
          {abilities.length < pending.scope.length ? (
            <p class="hint">
              Abilities you do not hold yourself are left out ({pending.scope.length - abilities.length}).
            </p>
          ) : (
            ''
          )}
          {usable ? (
            ''
          ) : (
            <Notice>
              You do not hold mcp:full, the ability the tool server requires: you can only deny this request.
            </Notice>
          )}
          <form method="post" action="/dashboard/oauth/authorize" class="stack">
            <CsrfField viewer={request.viewer} />
            <IdempotencyField />
            <input type="hidden" name="request" value={pending.id} />
            {projects.ok && projects.result.data.length ? (
              <div>
                <label for="consent-project">Project scope</label>
                <select id="consent-project" name="project_id">
                  <option value="">All projects (and team-wide data)</option>
                  {projects.result.data.map((project) => (
                    <option value={project.id}>{project.name}</option>
                  ))}
                </select>
              </div>
            ) : (
              ''
            )}
            <div class="actions">
              {usable ? (
                <button type="submit" name="decision" value="allow">
                  Allow
                </button>
              ) : (
                ''
              )}
              <button type="submit" name="decision" value="deny" class="secondary">
                Deny
              </button>
            </div>
          </form>
        </div>
      </Page>,
    ),
    pending.redirect_uri,
  );
}

/**
 * `POST /dashboard/oauth/authorize` (CSRF checked by the router): Allow runs `approveOAuthConsent` (a code for the
 * narrowed abilities), anything else `denyOAuthConsent` (`access_denied`), both through the pipeline as the member;
 * then the browser goes back to the client. An unknown, expired or answered request, or a foreign project, shows the
 * expired page.
 */
export async function answerConsent(request: SignedInRequest): Promise<ApiGatewayResult> {
  const { store, clock } = request.runtime;
  const requestId = formText(request.form, 'request') ?? '';
  // A double submit finds the request answered: the operation replays the first answer (same idempotency key).
  const pending = await findAuthorizationRequest(store, clock, requestId);
  const allow =
    formText(request.form, 'decision') === 'allow' && (!pending || grantable(request, pending).includes('mcp:full'));
  const projectId = formText(request.form, 'project_id');
  const answered = await write<{ redirect_to: string }>(
    request,
    allow ? 'approveOAuthConsent' : 'denyOAuthConsent',
    allow && projectId ? { request: requestId, project_id: projectId } : { request: requestId },
  );
  if (!answered.ok) return expiredPage(request);
  return withRedirectOrigin(redirectResult(answered.result.redirect_to), answered.result.redirect_to);
}
