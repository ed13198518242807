/** Inbound Stripe hook Lambda: `POST /hooks/stripe/{project_id}` (DESIGN D16, D22). */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createHookHandler } from '../shared/hooks/hook.js';
import { stripeHook } from '../shared/hooks/stripe.js';

/** The Stripe hook Lambda's handler: API Gateway (HTTP API) requests to `POST /hooks/stripe/{project_id}`. */
export const handler = createHookHandler(awsRuntime, stripeHook);
