/** @jsx h */
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { PublicRequest } from '../http.js';
import type { ManageLink } from './welcome.js';

/** The portal's routes. */
export const PORTAL_ROUTES: ReadonlyArray<{
  method: 'GET' | 'POST';
  pattern: RegExp;
  handle: (request: PublicRequest, match: RegExpExecArray, formOrigins: readonly string[]) => Promise<ApiGatewayResult>;
}> = [];

/** A one-time portal link for the welcome page. */
export function portalManageLink(_request: PublicRequest): ManageLink {
  return async () => null;
}
