/** @jsx h */
/** @jsxFrag Fragment */
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { ABILITIES } from '../../catalogues/abilities.js';
import type { Metrics } from '../../domain/metrics/schema.js';
import type { Project } from '../../domain/projects/schema.js';
import { Page } from '../layout.js';
import { FiguresCard } from '../figures.js';
import { h } from '../../web/html.js';
import { htmlResult, type SignedInRequest } from '../http.js';
import { NeedsAttention, teamAttention } from './attention.js';
import { pageOperations, type ListPage } from './kit.js';
import { listProjects } from '../../domain/projects/handlers.js';
import { getTeamMetrics } from '../../domain/metrics/handlers.js';

const { read } = pageOperations({ listProjects, getTeamMetrics });

/**
 * `GET /dashboard`: the team at a glance: the team's facts, what needs attention, and the team's figures with their
 * 90-day charts.
 */
export async function homePage(request: SignedInRequest): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const [projects, metrics] = await Promise.all([
    read<ListPage<Project>>(request, 'listProjects', { limit: 100 }),
    read<Metrics>(request, 'getTeamMetrics'),
  ]);
  const attention = await teamAttention(request, projects.ok ? projects.result.data : [], metrics);
  return htmlResult(
    200,
    <Page title={`Welcome, ${viewer.member.name}`} viewer={viewer} current="/dashboard">
      <div class="card">
        <dl class="facts">
          <dt>Team</dt>
          <dd>
            {viewer.team.name} <span class="mono hint">{viewer.team.id}</span>
          </dd>
          <dt>Your abilities</dt>
          <dd>
            {viewer.principal.abilities.size} of {ABILITIES.length}
          </dd>
          <dt>Projects</dt>
          <dd>{projects.ok ? projects.result.data.length : '—'}</dd>
        </dl>
      </div>
      <div class="actions">
        <a class="button secondary" href="/dashboard/projects">
          Projects
        </a>
        <a class="button secondary" href="/dashboard/webhooks">
          Webhooks
        </a>
        <a class="button secondary" href="/dashboard/tokens">
          API tokens
        </a>
      </div>
      <NeedsAttention facts={attention} />
      <FiguresCard outcome={metrics} idPrefix="team" heading="Figures of every project" />
    </Page>,
  );
}
