import { paymentsInternalHandlers } from '../domain/payments/internal-handlers.js';
import { paymentsInternalOperations } from '../domain/payments/internal-operations.js';
import type { StripeEventOutcome } from '../domain/payments/stripe-event-context.js';
import { ProblemError } from '../errors.js';
import { logger } from '../logger.js';
import { anyHandler } from '../operations/handler.js';
import type { Runtime } from '../runtime.js';
import { openHookCredential } from './credential.js';
import type { HookAnswer, HookHandler } from './hook.js';
import { runHookOperation } from './hook-operation.js';
import { hookPrincipal, hookProject } from './principal.js';
import { applyOnce, type HookReceiptRef } from './receipts.js';
import { STRIPE_HOOK_ROUTE } from './routes.js';
import { STRIPE_SIGNATURE_REFUSED, verifiedStripeEvent } from './stripe-signature.js';

/**
 * A project's Stripe hook, `POST /hooks/stripe/{project_id}` (DESIGN D16, D22), verified with the stored
 * `webhook_secret` (300 s). Bad signature, unknown project and no Stripe connection get the same 400 after the same
 * work. Idempotent on the event id (`applyOnce`: 200 `duplicate: true`); applied by the internal operation
 * `applyStripeEvent` through the pipeline (surface `hook`, D35), an inapplicable one 200 `ignored`. 200 only once
 * stored; an invoice before its checkout (CONFLICT) → 409, a store failure → 500 (Stripe resends).
 */

/**
 * Handles one request to `POST /hooks/stripe/{project_id}` (see the module comment): `projectId` from the
 * path, `signature` the `Stripe-Signature` header, `body` the raw body. Answers 200 (`{ received: true }`,
 * plus `duplicate: true` or `ignored: <reason>`), 400 (any refusal), 409 (not ready: send again later) or
 * 500 (not stored). Never throws; never logs or returns a secret.
 */
async function handleStripeEvent(
  runtime: Runtime,
  request: { projectId: string; signature: string | undefined; body: string },
): Promise<HookAnswer> {
  try {
    const credential = await openHookCredential(runtime, request.projectId, 'stripe');
    const event = await verifiedStripeEvent(
      request.body,
      request.signature,
      credential?.secrets.webhook_secret,
      runtime.clock.nowMs(),
    );
    if (!event || !credential) return STRIPE_SIGNATURE_REFUSED;
    const teamId = credential.description.team_id;
    const projectId = credential.description.project_id;
    const project = await hookProject(runtime.store, teamId, projectId, STRIPE_HOOK_ROUTE.source);
    if (project?.payment_provider?.provider !== 'stripe') return STRIPE_SIGNATURE_REFUSED;
    const receipt: HookReceiptRef = { teamId, source: STRIPE_HOOK_ROUTE.source, projectId, providerEventId: event.id };
    let outcome: StripeEventOutcome = { applied: true };
    const done = await applyOnce(
      runtime.store,
      receipt,
      () => runtime.clock.nowMs(),
      async (scope) => {
        outcome = (await runHookOperation(runtime, {
          principal: hookPrincipal(teamId, STRIPE_HOOK_ROUTE.source),
          operation: paymentsInternalOperations.applyStripeEvent,
          handler: anyHandler(paymentsInternalHandlers.applyStripeEvent),
          input: { project_id: projectId, event },
          requestId: `stripe:${event.id}`,
          within: scope,
        })) as StripeEventOutcome;
      },
    );
    if (done === 'duplicate') return { status: 200, body: { received: true, duplicate: true } };
    if ('ignored' in outcome) {
      logger.info('stripe event ignored', {
        project_id: projectId,
        event_id: event.id,
        event_type: event.type,
        reason: outcome.ignored,
      });
      return { status: 200, body: { received: true, ignored: outcome.ignored } };
    }
    return { status: 200, body: { received: true } };
  } catch (error) {
    if (error instanceof ProblemError && error.code === 'CONFLICT') {
      logger.info('stripe event not ready', { project_id: request.projectId, reason: error.detail });
      return { status: 409, body: { error: `${error.detail}; send it again later.` } };
    }
    logger.error('stripe event not processed', {
      project_id: request.projectId,
      error: error instanceof Error ? error.name : 'unknown',
    });
    return { status: 500, body: { error: 'The event was not stored; send it again.' } };
  }
}

/** The Stripe hook's {@link HookHandler}: the signature from `Stripe-Signature`. */
export const stripeHook: HookHandler = (runtime, request) =>
  handleStripeEvent(runtime, {
    projectId: request.projectId,
    signature: request.headers['stripe-signature'],
    body: request.body,
  });
