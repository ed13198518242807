import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { paymentProviderAdapters } from '../../providers/adapters.js';
import { paymentsModule } from './operations.js';
import { acceptPayment as accept, refundPayment as refund, settlePayment as settle } from './changes.js';
import { getPayment as read, listPayments as list } from './queries.js';
import { recordPayment as record } from './recording.js';

type Operations = typeof paymentsModule.operations;

/** `GET /v1/projects/{project_id}/payments` / `list_payments`. */
export const listPayments: OperationHandler<Operations['listPayments']> = async (
  { project_id, ...query },
  { runtime, principal },
) => list(runtime.store, principal, project_id, query);

/** `POST /v1/projects/{project_id}/payments`. */
export const recordPayment: OperationHandler<Operations['recordPayment']> = async (
  { project_id, ...input },
  { runtime, principal },
) => record(runtime, principal, project_id, input);

/** `GET /v1/payments/{id}` / `get_payment`. */
export const getPayment: OperationHandler<Operations['getPayment']> = async (input, { runtime, principal }) =>
  read(runtime.store, principal, input.id);

/** `POST /v1/payments/{id}`. */
export const settlePayment: OperationHandler<Operations['settlePayment']> = async (
  { id, ...input },
  { runtime, principal },
) => settle(runtime, principal, id, input);

/** `POST /v1/payments/{id}/accept`. */
export const acceptPayment: OperationHandler<Operations['acceptPayment']> = async (input, { runtime, principal }) =>
  accept(runtime, principal, input.id);

/**
 * `POST /v1/payments/{id}/refund` / `refund_payment`: refunds through the payment's provider (the service's adapters,
 * Stripe included).
 */
export const refundPayment: OperationHandler<Operations['refundPayment']> = async (
  { id, ...input },
  { runtime, principal, idempotencyKey },
) => refund(runtime, principal, id, input, { adapters: paymentProviderAdapters(runtime), idempotencyKey });

/** Every handler of the payments module. */
export const paymentsHandlers = {
  listPayments,
  recordPayment,
  getPayment,
  settlePayment,
  acceptPayment,
  refundPayment,
} satisfies HandlersOf<typeof paymentsModule>;
