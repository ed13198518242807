/** The dashboard Lambda (DESIGN D21): every `/dashboard` page of the REST API's domain. */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createDashboardHandler } from '../shared/dashboard/router.js';

export const handler = createDashboardHandler(awsRuntime);
