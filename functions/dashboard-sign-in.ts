/**
 * The dashboard's sign-in Lambda (DESIGN D21): sign-in, invitations, passkeys, account
 * (`shared/dashboard/areas.ts`).
 */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createDashboardHandler } from '../shared/dashboard/app.js';
import { SIGN_IN_ROUTES } from '../shared/dashboard/routes/sign-in.js';
import { traced } from '../shared/aws/tracing.js';

/** The dashboard sign-in Lambda's handler: API Gateway (HTTP API) requests to its `/dashboard/...` paths. */
export const handler = traced(createDashboardHandler(awsRuntime, { routes: SIGN_IN_ROUTES }));
