/** @jsx h */
/** @jsxFrag Fragment */
import { ABILITIES, ABILITY_VALUES, isReadAbility, type Ability } from '../../catalogues/abilities.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { Project } from '../../domain/projects/schema.js';
import type { Token } from '../../domain/tokens/schema.js';
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
import { AbilityChoice, ActionForm, ActionLink, ProjectScopeField } from '../form-controls.js';
import { Page } from '../layout.js';
import { h, type Html } from '../../web/html.js';
import { formText, formValues, htmlResult, redirectResult, type SignedInRequest } from '../http.js';
import { pageOperations, type ListPage } from './kit.js';
import {
  listTokens,
  createToken as createTokenHandler,
  revokeToken as revokeTokenHandler,
} from '../../domain/tokens/handlers.js';
import { listProjects } from '../../domain/projects/handlers.js';

const { read, write } = pageOperations({
  listTokens,
  createToken: createTokenHandler,
  revokeToken: revokeTokenHandler,
  listProjects,
});

/**
 * Settings → API Tokens (interface "Bearer tokens" 6, DESIGN D2, D19, D21): the team's tokens, a new token
 * (abilities by preset — read-only, full, custom — and project scope, never above the member's own
 * abilities: it is minted on the member's behalf) shown once, and revocation with confirmation.
 */

/** The abilities of a preset, within what the member holds. */
function presetAbilities(viewer: Viewer, preset: string, custom: string[]): Ability[] {
  const held = ABILITY_VALUES.filter((ability) => viewer.principal.abilities.has(ability));
  if (preset === 'read-only') return held.filter(isReadAbility);
  if (preset === 'full') return held;
  return custom.filter((ability): ability is Ability => (ABILITY_VALUES as readonly string[]).includes(ability));
}

function abilitySummary(abilities: readonly string[]): string {
  if (abilities.length === ABILITY_VALUES.length) return `all ${ABILITY_VALUES.length} abilities`;
  if (abilities.every((ability) => isReadAbility(ability as Ability))) return `read-only (${abilities.length})`;
  return `${abilities.length}: ${abilities.slice(0, 3).join(', ')}${abilities.length > 3 ? ', …' : ''}`;
}

/**
 * `GET /dashboard/tokens`: name, id prefix, abilities summary, project scope, created, last used, revoked
 * (or expired). Tokens issued to an OAuth client are named `OAuth grant: <client name>` (DESIGN D30);
 * revoking one also revokes its grant, so the client's refresh token stops working too.
 */
export async function tokensPage(request: SignedInRequest): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const tokens = await read<ListPage<Token>>(request, 'listTokens', { limit: 100, include_revoked: true });
  return htmlResult(
    200,
    <Page title="API tokens" viewer={viewer} current="/dashboard/tokens">
      {request.query.get('revoked') ? (
        <Notice>The token was revoked; its next call fails with AUTHENTICATION_REQUIRED.</Notice>
      ) : (
        ''
      )}
      <div class="actions">
        <ActionLink viewer={viewer} href="/dashboard/tokens/new" ability="token:create" label="New token" />
      </div>
      {tokens.ok ? (
        <DataTable
          id="tokens"
          rows={tokens.result.data}
          empty="No tokens yet."
          columns={[
            { label: 'Name', cell: (token) => token.name ?? <span class="hint">(no name)</span> },
            { label: 'Id', class: 'mono', cell: (token) => `${token.id.slice(0, 10)}…` },
            {
              label: 'Abilities',
              cell: (token) => <span title={token.abilities.join(', ')}>{abilitySummary(token.abilities)}</span>,
            },
            {
              label: 'Projects',
              cell: (token) => {
                const projects = token.scopes
                  .filter((scope) => scope.startsWith('scope:project:'))
                  .map((scope) => scope.slice('scope:project:'.length));
                return projects.length ? projects.map((id) => <div class="mono">{id}</div>) : 'All projects';
              },
            },
            { label: 'Created', cell: (token) => <When at={token.created_at} /> },
            {
              label: 'Last used',
              cell: (token) =>
                token.last_used_at ? <When at={token.last_used_at} /> : <span class="hint">never</span>,
            },
            {
              label: 'Revoked at',
              cell: (token) =>
                token.revoked_at ? (
                  <When at={token.revoked_at} />
                ) : token.expires_at && Date.parse(token.expires_at) <= request.runtime.clock.nowMs() ? (
                  <Badge color="gray">expired</Badge>
                ) : (
                  <Badge color="green">live</Badge>
                ),
            },
            {
              label: 'Actions',
              cell: (token) =>
                token.revoked_at ? (
                  ''
                ) : (
                  <ActionLink
                    viewer={viewer}
                    href={`/dashboard/tokens/${token.id}/revoke`}
                    ability="token:revoke"
                    label="Revoke"
                    secondary
                  />
                ),
            },
          ]}
        />
      ) : tokens.problem.code === 'TOKEN_MISSING_ABILITY' ? (
        <Forbidden ability="token:view-any" what="the team’s tokens" />
      ) : (
        <ProblemView problem={tokens.problem} />
      )}
    </Page>,
  );
}

function TokenForm(props: {
  viewer: Viewer;
  projects: Project[];
  values?: { name?: string; preset?: string; abilities?: string[]; project_ids?: string[] };
}): Html {
  const { viewer } = props;
  const preset = props.values?.preset ?? 'read-only';
  const chosen = new Set(props.values?.abilities ?? []);
  const projects = new Set(props.values?.project_ids ?? []);
  return (
    <form method="post" action="/dashboard/tokens" class="stack">
      <CsrfField viewer={viewer} />
      <IdempotencyField />
      <div>
        <label for="token-name">Name</label>
        <input type="text" id="token-name" name="name" maxlength="100" required value={props.values?.name ?? ''} />
      </div>
      <fieldset>
        <legend>Abilities</legend>
        <p class="hint">
          A token never holds more than you do: it is minted on your behalf and is revoked if you leave the team.
        </p>
        <div class="checks">
          <label>
            <input type="radio" name="preset" value="read-only" checked={preset === 'read-only'} /> Read-only (every
            read you hold)
          </label>
          <label>
            <input type="radio" name="preset" value="full" checked={preset === 'full'} /> Full (every ability you hold)
          </label>
          <label>
            <input type="radio" name="preset" value="custom" checked={preset === 'custom'} /> Custom (choose below)
          </label>
        </div>
        <details>
          <summary>Custom abilities</summary>
          <div class="events">
            {ABILITIES.map((ability) => (
              <AbilityChoice viewer={viewer} ability={ability} checked={chosen.has(ability.value)} />
            ))}
          </div>
        </details>
      </fieldset>
      <ProjectScopeField
        projects={props.projects}
        chosen={projects}
        hint="Leave all unticked for a token that works in every project (and team-wide data)."
      />
      <div class="actions">
        <button type="submit">Create token</button>
        <a href="/dashboard/tokens">Cancel</a>
      </div>
    </form>
  );
}

async function projectsOf(request: SignedInRequest): Promise<Project[]> {
  const projects = await read<ListPage<Project>>(request, 'listProjects', { limit: 100 });
  return projects.ok ? projects.result.data : [];
}

/** `GET /dashboard/tokens/new`. */
export async function newTokenPage(request: SignedInRequest): Promise<ApiGatewayResult> {
  return htmlResult(
    200,
    <Page title="New API token" viewer={request.viewer} current="/dashboard/tokens">
      <TokenForm viewer={request.viewer} projects={await projectsOf(request)} />
    </Page>,
  );
}

/** `POST /dashboard/tokens`: `createToken` on the member's behalf (`member_id`); the token is shown once. */
export async function createToken(request: SignedInRequest): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const values = {
    name: formText(request.form, 'name'),
    preset: formText(request.form, 'preset') ?? 'read-only',
    abilities: formValues(request.form, 'abilities'),
    project_ids: formValues(request.form, 'project_ids'),
  };
  const abilities = presetAbilities(viewer, values.preset, values.abilities);
  const outcome = await write<Token & { token: string }>(request, 'createToken', {
    ...(values.name ? { name: values.name } : {}),
    abilities,
    ...(values.project_ids.length ? { project_ids: values.project_ids } : {}),
    member_id: viewer.member.id,
  });
  if (!outcome.ok) {
    return htmlResult(
      outcome.problem.status,
      <Page title="New API token" viewer={viewer} current="/dashboard/tokens">
        <ProblemView problem={outcome.problem} />
        <TokenForm viewer={viewer} projects={await projectsOf(request)} values={values} />
      </Page>,
    );
  }
  return htmlResult(
    201,
    <Page title="Token created" viewer={viewer} current="/dashboard/tokens">
      <Notice>
        Token <strong>{outcome.result.name ?? outcome.result.id}</strong> holds{' '}
        {abilitySummary(outcome.result.abilities)}.
      </Notice>
      <SecretOnce id="token-secret" label="API token" value={outcome.result.token} />
      <p>
        <a href="/dashboard/tokens">Back to tokens</a>
      </p>
    </Page>,
  );
}

/** `GET /dashboard/tokens/{id}/revoke`: asks to confirm. */
export async function confirmRevokeToken(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  return htmlResult(
    200,
    <Page title="Revoke token" viewer={request.viewer} current="/dashboard/tokens">
      <div class="card">
        <p>
          Revoke token <span class="mono">{params.id}</span>? Its next call fails; this cannot be undone.
        </p>
        <div class="actions">
          <ActionForm
            viewer={request.viewer}
            action={`/dashboard/tokens/${params.id}/revoke`}
            ability="token:revoke"
            label="Revoke token"
            danger
          />
          <a href="/dashboard/tokens">Keep it</a>
        </div>
      </div>
    </Page>,
  );
}

/** `POST /dashboard/tokens/{id}/revoke`: `revokeToken`. */
export async function revokeToken(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const outcome = await write(request, 'revokeToken', { id: params.id });
  if (!outcome.ok) {
    return htmlResult(
      outcome.problem.status,
      <Page title="Revoke token" viewer={request.viewer} current="/dashboard/tokens">
        <ProblemView problem={outcome.problem} />
      </Page>,
    );
  }
  return redirectResult('/dashboard/tokens?revoked=1');
}
