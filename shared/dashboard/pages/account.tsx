/** @jsx h */
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { CsrfField, DataTable, Notice, ProblemView, When } from '../components.js';
import { Page } from '../layout.js';
import { h } from '../../web/html.js';
import { htmlResult, redirectResult, type SignedInRequest } from '../http.js';
import { listPasskeys } from '../../domain/team-members/passkeys.js';
import { listSessions } from '../../domain/team-members/sessions.js';
import { teamMembersInternalHandlers } from '../../domain/team-members/internal-handlers.js';
import { pageOperations } from './kit.js';

const { write } = pageOperations({ revokeDashboardSession: teamMembersInternalHandlers.revokeDashboardSession });

/**
 * The signed-in member's own account page (DESIGN D21): their sessions, each revocable, their passkeys and their own
 * recent activity.
 */

/** `GET /dashboard/account`: the member's sessions (revocable) and passkeys. */
export async function accountPage(request: SignedInRequest): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const [sessions, passkeys] = await Promise.all([
    listSessions(request.runtime.store, request.runtime.clock, viewer.team.id, viewer.member.id),
    listPasskeys(request.runtime.store, viewer.team.id, viewer.member.id),
  ]);
  return htmlResult(
    200,
    <Page title="Your account" viewer={viewer} current="/dashboard/account">
      {request.query.get('revoked') ? <Notice>The session was signed out.</Notice> : ''}
      <h2>Sessions</h2>
      <p class="hint">A session ends after 12 hours without use. Sign out any you do not recognise.</p>
      <DataTable
        rows={sessions}
        empty="No sessions."
        columns={[
          { label: 'Started', cell: (session) => <When at={session.created_at} /> },
          { label: 'Last used', cell: (session) => <When at={new Date(session.last_seen_at_ms).toISOString()} /> },
          { label: 'How', cell: (session) => (session.method === 'passkey' ? 'Passkey' : 'Sign-in link') },
          { label: 'Browser', cell: (session) => session.user_agent || '—', class: 'hint' },
          {
            label: '',
            cell: (session) =>
              session.id === request.session.id ? (
                <span class="hint">This session</span>
              ) : (
                <form method="post" action={`/dashboard/account/sessions/${session.id}/revoke`}>
                  <CsrfField viewer={viewer} />
                  <button
                    type="submit"
                    class="secondary"
                    aria-label={`Sign out the session started ${session.created_at}`}
                  >
                    Sign out
                  </button>
                </form>
              ),
          },
        ]}
      />
      <h2>Passkeys</h2>
      <DataTable
        rows={passkeys}
        empty="No passkeys yet."
        columns={[
          { label: 'Registered', cell: (passkey) => <When at={passkey.created_at} /> },
          { label: 'Last used', cell: (passkey) => <When at={passkey.last_used_at} /> },
        ]}
      />
      <p>
        <a class="button secondary" href="/dashboard/passkeys/new">
          Register another passkey
        </a>
      </p>
      <ActivityOfMe request={request} />
    </Page>,
  );
}

function ActivityOfMe(props: { request: SignedInRequest }) {
  return (
    <p>
      <a href={`/dashboard/activity?member_id=${props.request.viewer.member.id}`}>Your actions in the activity log</a>
    </p>
  );
}

/**
 * `POST /dashboard/account/sessions/{id}/revoke`: `revokeDashboardSession`, signing out one of the member's sessions;
 * another member's (or none) is the operation's NOT_FOUND page.
 */
export async function revokeOwnSession(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const revoked = await write(request, 'revokeDashboardSession', { session_id: params.id });
  if (!revoked.ok)
    return htmlResult(
      revoked.problem.status,
      <Page title="Your account" viewer={request.viewer} current="/dashboard/account">
        <ProblemView problem={revoked.problem} />
      </Page>,
    );
  return redirectResult('/dashboard/account?revoked=1');
}
