/** @jsx h */
/** @jsxFrag Fragment */
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { Role } from '../../domain/roles/schema.js';
import type { TeamMember, TeamMemberWithInvitation } from '../../domain/team-members/schema.js';
import {
  Badge,
  CsrfField,
  DataTable,
  IdempotencyField,
  Listing,
  Notice,
  ProblemView,
  SecretOnce,
  When,
} from '../components.js';
import { ActionForm } from '../form-controls.js';
import { Page } from '../layout.js';
import { Fragment, h, type Html } from '../../web/html.js';
import { formText, formValues, htmlResult, redirectResult, type SignedInRequest } from '../http.js';
import { pageOperations, type ListPage } from './kit.js';
import { listTeamMembers, inviteTeamMember, removeTeamMember } from '../../domain/team-members/handlers.js';
import { listRoles } from '../../domain/roles/handlers.js';

const { read, write } = pageOperations({ listTeamMembers, inviteTeamMember, removeTeamMember, listRoles });

/** The team members screen (DESIGN D19, D21): members with status and roles; invite (link shown once); remove. */

/** `GET /dashboard/team-members`: members with status and roles; invite; remove. */
export async function teamMembersPage(
  request: SignedInRequest,
  _params: Record<string, string> = {},
  extra?: { top?: Html; status?: number },
): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const [members, roles] = await Promise.all([
    read<ListPage<TeamMember>>(request, 'listTeamMembers', { limit: 100 }),
    read<ListPage<Role>>(request, 'listRoles', { limit: 100 }),
  ]);
  const roleNames = new Map(roles.ok ? roles.result.data.map((role) => [role.id, role.name]) : []);
  return htmlResult(
    extra?.status ?? 200,
    <Page title="Team members" viewer={viewer} current="/dashboard/team-members">
      {extra?.top ?? ''}
      <Listing
        outcome={members}
        what="team members"
        ability="team-member:view-any"
        render={(items) => (
          <DataTable
            rows={items}
            empty="No team members."
            columns={[
              {
                label: 'Member',
                cell: (member) => (
                  <>
                    {member.name} <div class="hint">{member.email}</div>
                  </>
                ),
              },
              {
                label: 'Status',
                cell: (member) => (
                  <Badge color={member.status === 'active' ? 'green' : member.status === 'invited' ? 'yellow' : 'gray'}>
                    {member.status}
                  </Badge>
                ),
              },
              {
                label: 'Roles',
                cell: (member) => (
                  <>
                    {member.role_ids.map((id) => roleNames.get(id) ?? id).join(', ') || '—'}
                    {member.status !== 'removed' ? (
                      <div>
                        <a
                          href={`/dashboard/team-members/${member.id}`}
                          aria-label={`Change the roles of ${member.name}`}
                        >
                          Change roles
                        </a>
                      </div>
                    ) : (
                      ''
                    )}
                  </>
                ),
              },
              { label: 'Joined', cell: (member) => <When at={member.joined_at} /> },
              {
                label: '',
                cell: (member) =>
                  member.status !== 'removed' && member.id !== viewer.member.id ? (
                    <ActionForm
                      viewer={viewer}
                      action={`/dashboard/team-members/${member.id}/remove`}
                      ability="team-member:remove"
                      label={`Remove ${member.name}`}
                      danger
                    />
                  ) : (
                    ''
                  ),
              },
            ]}
          />
        )}
      />
      <h2>Invite a member</h2>
      <form method="post" action="/dashboard/team-members" class="stack card">
        <CsrfField viewer={viewer} />
        <IdempotencyField />
        <div>
          <label for="invite-email">E-mail</label>
          <input type="email" id="invite-email" name="email" required />
        </div>
        <div>
          <label for="invite-name">Name</label>
          <input type="text" id="invite-name" name="name" required maxlength="100" />
        </div>
        <div>
          <label for="invite-role">Role</label>
          <select id="invite-role" name="role_ids">
            {(roles.ok ? roles.result.data : []).map((role) => (
              <option value={role.id}>{role.name}</option>
            ))}
          </select>
        </div>
        <div>
          <button type="submit" disabled={!viewer.principal.abilities.has('team-member:invite')}>
            {viewer.principal.abilities.has('team-member:invite')
              ? 'Send invitation'
              : 'Send invitation — needs team-member:invite'}
          </button>
        </div>
      </form>
    </Page>,
  );
}

/** `POST /dashboard/team-members`: `inviteTeamMember`; the invitation link is shown once. */
export async function inviteMember(request: SignedInRequest): Promise<ApiGatewayResult> {
  const outcome = await write<TeamMemberWithInvitation>(request, 'inviteTeamMember', {
    email: formText(request.form, 'email'),
    name: formText(request.form, 'name'),
    role_ids: formValues(request.form, 'role_ids'),
  });
  if (!outcome.ok)
    return teamMembersPage(
      request,
      {},
      { top: <ProblemView problem={outcome.problem} />, status: outcome.problem.status },
    );
  const link = `${request.relyingParty.origin}${outcome.result.invitation_link}`;
  return teamMembersPage(
    request,
    {},
    {
      status: 201,
      top: (
        <>
          <Notice>
            {outcome.result.name} is invited. Send them this link; it works for 7 days and signs them in once.
          </Notice>
          <SecretOnce id="invitation-link" label="Invitation link" value={link} />
        </>
      ),
    },
  );
}

/** `POST /dashboard/team-members/{id}/remove`: `removeTeamMember`. */
export async function removeMember(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const outcome = await write<TeamMember>(request, 'removeTeamMember', { id: params.id });
  if (!outcome.ok)
    return teamMembersPage(
      request,
      {},
      { top: <ProblemView problem={outcome.problem} />, status: outcome.problem.status },
    );
  return redirectResult('/dashboard/team-members');
}
