/** The operator's billing hook Lambda: `POST /hooks/billing/stripe` (DESIGN D20, D22). */
import { awsRuntime } from '../shared/aws/runtime.js';
import { billingStripeHook } from '../shared/hooks/billing-stripe.js';
import { createHookHandler } from '../shared/hooks/hook.js';

/** The billing hook Lambda's handler: API Gateway (HTTP API) requests to `POST /hooks/billing/stripe`. */
export const handler = createHookHandler(awsRuntime, billingStripeHook);
