/** The dashboard's projects Lambda (DESIGN D21): `/dashboard/projects` and below (`shared/dashboard/areas.ts`). */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createDashboardHandler } from '../shared/dashboard/app.js';
import { PROJECT_ROUTES } from '../shared/dashboard/routes/projects.js';
import { traced } from '../shared/aws/tracing.js';

/** The dashboard projects Lambda's handler: API Gateway (HTTP API) requests to `/dashboard/projects` and below. */
export const handler = traced(createDashboardHandler(awsRuntime, { routes: PROJECT_ROUTES }));
