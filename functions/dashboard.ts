/** The dashboard Lambda (DESIGN D21): every `/dashboard` page of the REST API's domain. */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createDashboardHandler } from '../shared/dashboard/router.js';
import { traced } from '../shared/aws/tracing.js';

export const handler = traced(createDashboardHandler(awsRuntime));
