/**
 * The dashboard's main Lambda (DESIGN D21): home, team, webhooks and the static files
 * (`shared/dashboard/areas.ts`).
 */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createDashboardHandler } from '../shared/dashboard/app.js';
import { assetNamed } from '../shared/dashboard/assets.js';
import { TEAM_ROUTES } from '../shared/dashboard/routes/team.js';
import { WEBHOOK_ROUTES } from '../shared/dashboard/routes/webhooks.js';
import { traced } from '../shared/aws/tracing.js';

/** The main dashboard Lambda's handler: API Gateway (HTTP API) requests to `/dashboard` not routed to another area. */
export const handler = traced(
  createDashboardHandler(awsRuntime, { routes: [...TEAM_ROUTES, ...WEBHOOK_ROUTES], assets: assetNamed }),
);
