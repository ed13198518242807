/** @jsx h */
/** @jsxFrag Fragment */
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { ACTIVITY_SURFACES, type ActivityEntry } from '../../domain/activity/schema.js';
import { Badge, DataTable, Listing, When } from '../components.js';
import { Page } from '../layout.js';
import { h } from '../../web/html.js';
import { htmlResult, type SignedInRequest } from '../http.js';
import { pageOperations, type ListPage } from './kit.js';
import { listActivity } from '../../domain/activity/handlers.js';

const { read } = pageOperations({ listActivity });

/** `GET /dashboard/activity`: the activity log, filtered by token, member, operation or surface. */
export async function activityPage(request: SignedInRequest): Promise<ApiGatewayResult> {
  const { query } = request;
  const filters = {
    ...(query.get('token_id') ? { token_id: query.get('token_id') } : {}),
    ...(query.get('member_id') ? { member_id: query.get('member_id') } : {}),
    ...(query.get('operation') ? { operation: query.get('operation') } : {}),
    ...(query.get('surface') ? { surface: query.get('surface') } : {}),
  };
  const entries = await read<ListPage<ActivityEntry>>(request, 'listActivity', { limit: 50, ...filters });
  return htmlResult(
    entries.ok || entries.problem.code === 'TOKEN_MISSING_ABILITY' ? 200 : entries.problem.status,
    <Page title="Activity" viewer={request.viewer} current="/dashboard/activity">
      <form
        method="get"
        action="/dashboard/activity"
        class="card filters"
        hx-get="/dashboard/activity"
        hx-target="#activity-result"
        hx-select="#activity-result"
        hx-swap="outerHTML"
        hx-push-url="true"
      >
        <div>
          <label for="filter-token">Token id</label>
          <input type="text" id="filter-token" name="token_id" value={query.get('token_id') ?? ''} />
        </div>
        <div>
          <label for="filter-member">Team member id</label>
          <input type="text" id="filter-member" name="member_id" value={query.get('member_id') ?? ''} />
        </div>
        <div>
          <label for="filter-operation">Operation</label>
          <input type="text" id="filter-operation" name="operation" value={query.get('operation') ?? ''} />
        </div>
        <div>
          <label for="filter-surface">Surface</label>
          <select id="filter-surface" name="surface">
            <option value="">Any</option>
            {ACTIVITY_SURFACES.map((surface) => (
              <option value={surface} selected={query.get('surface') === surface}>
                {surface}
              </option>
            ))}
          </select>
        </div>
        <div>
          <button type="submit">Filter</button>
        </div>
      </form>
      <div id="activity-result">
        <Listing
          outcome={entries}
          what="the activity log"
          ability="activity:read"
          render={(items) => (
            <DataTable
              id="activity"
              rows={items}
              empty="No entries match."
              columns={[
                { label: 'When', cell: (entry) => <When at={entry.occurred_at} /> },
                {
                  label: 'Who',
                  cell: (entry) =>
                    entry.member_id ? `member ${entry.member_id}` : entry.token_id ? `token ${entry.token_id}` : '—',
                  class: 'mono',
                },
                { label: 'Surface', cell: (entry) => entry.surface },
                { label: 'Operation', cell: (entry) => <code>{entry.operation}</code> },
                {
                  label: 'Outcome',
                  cell: (entry) => <Badge color={entry.outcome === 'ok' ? 'green' : 'red'}>{entry.outcome}</Badge>,
                },
              ]}
            />
          )}
        />
      </div>
    </Page>,
  );
}
