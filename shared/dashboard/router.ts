import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { ApiGatewayResult } from '../http/api-gateway.js';
import type { Runtime } from '../runtime.js';
import { serveEvent } from '../web/lambda.js';
import { createDashboardApp } from './app.js';
import { assetNamed } from './assets.js';
import { PROJECT_ROUTES } from './routes/projects.js';
import type { DashboardRoute } from './routes/route.js';
import { SIGN_IN_ROUTES } from './routes/sign-in.js';
import { TEAM_ROUTES } from './routes/team.js';
import { WEBHOOK_ROUTES } from './routes/webhooks.js';

/** Every dashboard route, as the local server serves them in one app (on AWS each area is a Lambda of its own). */
const ROUTES: readonly DashboardRoute[] = [...SIGN_IN_ROUTES, ...TEAM_ROUTES, ...WEBHOOK_ROUTES, ...PROJECT_ROUTES];

const apps = new WeakMap<Runtime, ReturnType<typeof createDashboardApp>>();

/** The dashboard's app of `runtime` (one per runtime: the local server's, a test's). */
export function dashboardApp(runtime: Runtime): ReturnType<typeof createDashboardApp> {
  let app = apps.get(runtime);
  if (!app) apps.set(runtime, (app = createDashboardApp(() => runtime, { routes: ROUTES, assets: assetNamed })));
  return app;
}

/** Serves one dashboard API Gateway v2 event in process, as the Lambda does; never throws. */
export function handleDashboardRequest(runtime: Runtime, event: APIGatewayProxyEventV2): Promise<ApiGatewayResult> {
  return serveEvent(dashboardApp(runtime), event);
}
