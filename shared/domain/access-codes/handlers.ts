import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { accessCodesModule } from './operations.js';
import { redeemAccessCode as redeem } from './redemption.js';
import { generateAccessCodes as generate } from './generation.js';
import { getAccessCode as read, listAccessCodes as list, revokeAccessCode as revoke } from './repository.js';

type Operations = typeof accessCodesModule.operations;

/** `GET /v1/projects/{project_id}/access-codes` / `list_access_codes`. */
export const listAccessCodes: OperationHandler<Operations['listAccessCodes']> = async (input, { runtime, principal }) =>
  list(runtime.store, principal, runtime.clock.nowMs(), input);

/** `POST /v1/projects/{project_id}/access-codes/batches` / `generate_access_codes`. */
export const generateAccessCodes: OperationHandler<Operations['generateAccessCodes']> = async (
  input,
  { runtime, principal },
) => generate(runtime, principal, input);

/** `GET /v1/access-codes/{id}`. */
export const getAccessCode: OperationHandler<Operations['getAccessCode']> = async (input, { runtime, principal }) =>
  read(runtime.store, principal, runtime.clock.nowMs(), input.id);

/** `POST /v1/access-codes/{id}/revoke` / `revoke_access_code`. */
export const revokeAccessCode: OperationHandler<Operations['revokeAccessCode']> = async (
  input,
  { runtime, principal },
) => revoke(runtime, principal, input.id);

/** `POST /v1/projects/{project_id}/access-codes/redeem` (REST only; subscriber side, DESIGN D18, D20). */
export const redeemAccessCode: OperationHandler<Operations['redeemAccessCode']> = async (
  { project_id, ...input },
  { runtime, principal },
) => redeem(runtime, principal, project_id, input);

/** Every handler of the access codes module. */
export const accessCodesHandlers = {
  listAccessCodes,
  generateAccessCodes,
  getAccessCode,
  revokeAccessCode,
  redeemAccessCode,
} satisfies HandlersOf<typeof accessCodesModule>;
