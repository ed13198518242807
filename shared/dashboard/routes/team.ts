import { get, post, type DashboardRoute } from './route.js';

/** The team's screens: home, OAuth consent, API tokens, members, roles, groups, billing, activity. */

const home = () => import('../pages/home.js');
const oauth = () => import('../pages/oauth.js');
const tokens = () => import('../pages/tokens.js');
const members = () => import('../pages/team-members.js');
const roles = () => import('../pages/roles.js');
const memberRoles = () => import('../pages/team-member-roles.js');
const groups = () => import('../pages/groups.js');
const billing = () => import('../pages/billing.js');
const activity = () => import('../pages/activity.js');

/** The team group's routes. */
export const TEAM_ROUTES: DashboardRoute[] = [
  get('', home, (m) => m.homePage),
  get('/oauth/authorize', oauth, (m) => m.consentPage),
  post('/oauth/authorize', oauth, (m) => m.answerConsent),
  get('/tokens', tokens, (m) => m.tokensPage),
  get('/tokens/new', tokens, (m) => m.newTokenPage),
  post('/tokens', tokens, (m) => m.createToken),
  get('/tokens/:id/revoke', tokens, (m) => m.confirmRevokeToken),
  post('/tokens/:id/revoke', tokens, (m) => m.revokeToken),
  get('/team-members', members, (m) => (request) => m.teamMembersPage(request)),
  post('/team-members', members, (m) => m.inviteMember),
  post('/team-members/:id/remove', members, (m) => m.removeMember),
  get('/team-members/:id', memberRoles, (m) => m.teamMemberPage),
  post('/team-members/:id', memberRoles, (m) => m.updateTeamMemberRoles),
  get('/roles', roles, (m) => m.rolesPage),
  get('/roles/new', roles, (m) => m.newRolePage),
  post('/roles', roles, (m) => m.createRole),
  get('/roles/:id', roles, (m) => m.rolePage),
  post('/roles/:id', roles, (m) => m.updateRole),
  post('/roles/:id/delete', roles, (m) => m.deleteRole),
  get('/groups/new', groups, (m) => m.newGroupPage),
  post('/groups', groups, (m) => m.createGroup),
  get('/groups/:id', groups, (m) => m.groupPage),
  post('/groups/:id', groups, (m) => m.updateGroup),
  post('/groups/:id/delete', groups, (m) => m.deleteGroup),
  get('/billing', billing, (m) => m.billingPage),
  post('/billing/tier', billing, (m) => m.changeTier),
  get('/activity', activity, (m) => m.activityPage),
];
