import { canAccessProject, requireProjectAccess } from '../../auth/authorize.js';
import { ProblemError } from '../../errors.js';
import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { paymentProviderAdapters } from '../../providers/adapters.js';
import { giftStore } from '../../store/gifts.js';
import { projectExists } from '../../store/subscriptions/reads.js';
import { giftsModule } from './operations.js';
import { toGift } from './record.js';

type Operations = typeof giftsModule.operations;

/** The one answer for an absent, foreign or out-of-scope gift. */
const giftNotFound = (id: string) => new ProblemError('NOT_FOUND', `No gift ${id}.`);

/**
 * `POST /v1/plans/{id}/gift-checkout-sessions` (D33): the request's `Idempotency-Key` gives the same gift again. The
 * checkout is loaded on first use, a chunk of its own (D23 route budgets).
 */
export const createGiftCheckoutSession: OperationHandler<Operations['createGiftCheckoutSession']> = async (
  { id, ...body },
  { runtime, principal, idempotencyKey },
) =>
  (await import('./checkout.js')).startGiftCheckout(runtime, principal, id, body, {
    adapters: paymentProviderAdapters(runtime),
    idempotencyKey,
  });

/** `GET /v1/projects/{project_id}/gifts`. Errors: NOT_FOUND (project absent or out of scope), VALIDATION_FAILED. */
export const listGifts: OperationHandler<Operations['listGifts']> = async (
  { project_id, ...query },
  { runtime, principal },
) => {
  requireProjectAccess(principal, project_id);
  if (!(await projectExists(runtime.store, principal.teamId, project_id)))
    throw new ProblemError('NOT_FOUND', `No project ${project_id}.`);
  const page = await giftStore.list(runtime.store, principal.teamId, project_id, query);
  return { data: page.data.map(toGift), next_cursor: page.next_cursor };
};

/** `GET /v1/gifts/{id}`. Errors: NOT_FOUND (absent, another team's, or outside the token's projects). */
export const getGift: OperationHandler<Operations['getGift']> = async ({ id }, { runtime, principal }) => {
  const projectId = await giftStore.projectOf(runtime.store, principal.teamId, id);
  if (!projectId || !canAccessProject(principal, projectId)) throw giftNotFound(id);
  const gift = await giftStore.read(runtime.store, principal.teamId, projectId, id);
  if (!gift) throw giftNotFound(id);
  return toGift(gift);
};

/** Every handler of the gifts module. */
export const giftsHandlers = { createGiftCheckoutSession, listGifts, getGift } satisfies HandlersOf<typeof giftsModule>;
