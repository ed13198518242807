import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { loadSubscriber, toSubscriber } from '../subscribers/repository.js';
import { createPortalLink } from './links.js';
import { portalSessionsModule } from './operations.js';

type Operations = typeof portalSessionsModule.operations;

/** `POST /v1/subscribers/{id}/portal-sessions` (D27): NOT_FOUND for a subscriber outside the caller's team or scope. */
export const createPortalSession: OperationHandler<Operations['createPortalSession']> = async (
  input,
  { runtime, principal },
) => {
  const subscriber = await loadSubscriber(runtime.store, principal, input.id);
  const link = await createPortalLink(
    runtime,
    principal.teamId,
    toSubscriber(subscriber, { contact: false }).project_id,
    input.id,
  );
  return { url: link.url, expires_at: link.expires_at };
};

/** Every handler of the portal-sessions module. */
export const portalSessionsHandlers = { createPortalSession } satisfies HandlersOf<typeof portalSessionsModule>;
