import type { Context, MiddlewareHandler } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import type { WebEnv } from './app.js';

/**
 * The one security-header policy of the HTML surfaces (DESIGN D21, D26, D30, D35), Hono's `secureHeaders`:
 * a strict CSP (scripts, styles, images and connections only from the service itself, `frame-ancestors 'none'`,
 * forms posting only to the service and the payment provider's hosted pages it redirects to, `base-uri 'none'`),
 * `X-Frame-Options: DENY`, `nosniff`, Hono's isolation headers, and `Cache-Control: no-store` unless the answer
 * says otherwise (static files).
 */

/** What a surface chooses within the policy. */
export interface HeaderPolicy {
  /** `no-referrer` where links carry tokens (public pages), `same-origin` on the dashboard. */
  referrerPolicy: 'no-referrer' | 'same-origin';
  /** `page`: the service's own scripts and styles; `api`: JSON and plain error pages (`default-src 'none'`). */
  content: 'page' | 'api';
  /** Inline `style` attributes allowed (the dashboard's charts); never scripts. */
  inlineStyles?: boolean;
  /** Origins a form may lead to beyond the service (read per request, before the route runs). */
  formOrigins?: (c: Context<WebEnv>) => readonly string[];
  /** `Cross-Origin-Resource-Policy`: `cross-origin` for endpoints browsers call from other sites (OAuth). */
  crossOriginResources?: boolean;
}

/** The header policy as a middleware of a surface's app (see the module comment). */
export function securityHeaders(policy: HeaderPolicy): MiddlewareHandler {
  const self = ["'self'"];
  const formAction = policy.formOrigins
    ? [...self, (c: Context) => policy.formOrigins!(c as Context<WebEnv>).join(' ')]
    : policy.content === 'page'
      ? self
      : ["'none'"];
  const secure = secureHeaders({
    contentSecurityPolicy:
      policy.content === 'page'
        ? {
            defaultSrc: self,
            scriptSrc: self,
            styleSrc: policy.inlineStyles ? [...self, "'unsafe-inline'"] : self,
            imgSrc: [...self, 'data:'],
            connectSrc: self,
            frameAncestors: ["'none'"],
            formAction,
            baseUri: ["'none'"],
          }
        : { defaultSrc: ["'none'"], frameAncestors: ["'none'"], formAction, baseUri: ["'none'"] },
    xFrameOptions: 'DENY',
    referrerPolicy: policy.referrerPolicy,
    crossOriginResourcePolicy: policy.crossOriginResources ? 'cross-origin' : 'same-origin',
  });
  return (c, next) =>
    secure(c, async () => {
      await next();
      if (!c.res.headers.has('Cache-Control')) c.res.headers.set('Cache-Control', 'no-store');
    });
}
