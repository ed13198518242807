/**
 * The web layer's pieces (DESIGN D35) on a small Hono app, without a store: the origin check and the form token
 * (one CSRF mechanism), the cookie attributes, the header policy and the per-IP limiter (over a counting fake
 * of the store's conditional update).
 */
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../shared/clock.js';
import { ProblemError, toProblem } from '../../shared/errors.js';
import { RATE_LIMITS } from '../../shared/limits/rate-limit.js';
import type { Runtime } from '../../shared/runtime.js';
import { ConditionFailedError, type Store } from '../../shared/store/store.js';
import { createWebApp } from '../../shared/web/app.js';
import { cookieDeletion, cookieSetting, type WebCookie } from '../../shared/web/cookies.js';
import { csrfTokenMatches, doubleSubmitToken, hasDoubleSubmitToken, originCheck } from '../../shared/web/csrf.js';
import { securityHeaders } from '../../shared/web/headers.js';
import { serveEvent } from '../../shared/web/lambda.js';
import { limitPerClientIp } from '../../shared/web/rate-limit.js';
import { jsonResult, toResponse } from '../../shared/web/results.js';

/** A store whose only method is the rate counter's conditional `ADD` (refused once the count would pass the limit). */
function countingStore(): Store {
  const counts = new Map<string, number>();
  return {
    update: async (request: { Key: { pk: string; sk: string }; ExpressionAttributeValues: Record<string, number> }) => {
      const key = `${request.Key.pk}|${request.Key.sk}`;
      const count = counts.get(key) ?? 0;
      if (count > request.ExpressionAttributeValues[':most']) throw new ConditionFailedError();
      counts.set(key, count + request.ExpressionAttributeValues[':units']);
      return { request_count: count + request.ExpressionAttributeValues[':units'] };
    },
  } as unknown as Store;
}

function testApp() {
  const runtime = { store: countingStore(), clock: manualClock(Date.UTC(2026, 0, 1)) } as unknown as Runtime;
  const app = createWebApp(() => runtime);
  app.use(
    securityHeaders({
      referrerPolicy: 'no-referrer',
      content: 'page',
      formOrigins: () => ['https://checkout.stripe.com'],
    }),
  );
  app.use(limitPerClientIp('public-pages', { headers: true }));
  app.use(originCheck());
  app.get('/page', (c) => c.html('<p>page</p>'));
  app.get('/file', (c) => c.text('file', 200, { 'Cache-Control': 'public, max-age=3600' }));
  app.post('/form', (c) => c.text('changed'));
  app.onError((error, c) => {
    const { problem, headers } = toProblem(error, c.get('requestId'));
    const response = toResponse(jsonResult(problem.status, problem));
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    return response;
  });
  return app;
}

/** An API Gateway v2 event of `method path` on `http://localhost:3000` from `ip`. */
function event(method: string, path: string, headers: Record<string, string> = {}, body?: string, ip = '10.0.0.1') {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { host: 'localhost:3000', 'x-forwarded-proto': 'http', ...headers },
    requestContext: { http: { method, path, sourceIp: ip }, requestId: crypto.randomUUID() },
    body,
    isBase64Encoded: false,
  } as never;
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('origin check', () => {
  it('refuses a form posted from another site with CSRF_TOKEN_INVALID (403) before the route runs', async () => {
    const app = testApp();
    for (const headers of [
      { ...FORM, 'sec-fetch-site': 'cross-site' },
      { ...FORM, 'sec-fetch-site': 'same-site', origin: 'https://sibling.localhost:3000' },
      { ...FORM, origin: 'https://attacker.example' },
      { ...FORM, origin: 'https://localhost:3000' }, // the scheme counts: the page is served over http here
    ]) {
      const answer = await serveEvent(app, event('POST', '/form', headers, 'a=1'));
      expect(answer.statusCode).toBe(403);
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'CSRF_TOKEN_INVALID' });
    }
  });

  it('lets the site’s own forms, non-browser clients and JSON bodies through', async () => {
    const app = testApp();
    for (const headers of [
      { ...FORM, 'sec-fetch-site': 'same-origin' },
      { ...FORM, origin: 'http://localhost:3000' },
      FORM,
      { 'content-type': 'application/json', origin: 'https://attacker.example' },
    ]) {
      const answer = await serveEvent(app, event('POST', '/form', headers, 'a=1'));
      expect(answer.statusCode).toBe(200);
      expect(answer.body).toBe('changed');
    }
  });
});

describe('form tokens', () => {
  const cookie: WebCookie = { name: 'form_csrf', path: '/form', sameSite: 'Strict' };

  it('compares tokens in full, and never matches an empty one', () => {
    expect(csrfTokenMatches('abc', 'abc')).toBe(true);
    expect(csrfTokenMatches('abc', 'abd')).toBe(false);
    expect(csrfTokenMatches('abc', 'abcd')).toBe(false);
    expect(csrfTokenMatches('', '')).toBe(false);
    expect(csrfTokenMatches(null, 'abc')).toBe(false);
  });

  it('issues a double-submit token once per browser and accepts only a form that repeats it', () => {
    const first = doubleSubmitToken({ cookies: {} }, cookie);
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.cookies).toEqual([`form_csrf=${first.token}; Path=/form; HttpOnly; Secure; SameSite=Strict`]);
    const cookies = { form_csrf: first.token };
    expect(doubleSubmitToken({ cookies }, cookie)).toEqual({ token: first.token, cookies: [] });
    const form = (token: string) => new URLSearchParams({ csrf_token: token });
    expect(hasDoubleSubmitToken({ cookies, form: form(first.token) }, cookie)).toBe(true);
    expect(hasDoubleSubmitToken({ cookies, form: form(`${first.token.slice(0, -1)}x`) }, cookie)).toBe(false);
    expect(hasDoubleSubmitToken({ cookies: {}, form: form(first.token) }, cookie)).toBe(false);
  });
});

describe('cookies', () => {
  it('are always HttpOnly and Secure with their path and SameSite rule; a deletion expires them at once', () => {
    const session: WebCookie = { name: 'portal_session', path: '/portal', sameSite: 'Lax' };
    expect(cookieSetting(session, 'pps_abc')).toBe(
      'portal_session=pps_abc; Path=/portal; HttpOnly; Secure; SameSite=Lax',
    );
    expect(cookieDeletion(session)).toBe('portal_session=; Max-Age=0; Path=/portal; HttpOnly; Secure; SameSite=Lax');
  });
});

describe('header policy', () => {
  it('puts a strict CSP, no framing and no caching on every answer, errors and 404s included', async () => {
    const app = testApp();
    const answers = [
      await serveEvent(app, event('GET', '/page')),
      await serveEvent(app, event('GET', '/nowhere')),
      await serveEvent(app, event('POST', '/form', { ...FORM, origin: 'https://attacker.example' }, 'a=1')),
    ];
    for (const answer of answers) {
      expect(answer.headers['Content-Security-Policy']).toBe(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
          "frame-ancestors 'none'; form-action 'self' https://checkout.stripe.com; base-uri 'none'",
      );
      expect(answer.headers).toMatchObject({
        'X-Frame-Options': 'DENY',
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
        'Cache-Control': 'no-store',
      });
    }
  });

  it('keeps the caching an answer asks for (static files)', async () => {
    const answer = await serveEvent(testApp(), event('GET', '/file'));
    expect(answer.headers['Cache-Control']).toBe('public, max-age=3600');
  });
});

describe('per-IP limiter', () => {
  it('counts each client IP on its own and answers RATE_LIMITED (429) with Retry-After past the limit', async () => {
    const app = testApp();
    const { limit } = RATE_LIMITS['public-pages'];
    for (let served = 1; served <= limit; served++) {
      const answer = await serveEvent(app, event('GET', '/page', {}, undefined, '10.0.0.7'));
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['X-RateLimit-Remaining']).toBe(String(limit - served));
    }
    const refused = await serveEvent(app, event('GET', '/page', {}, undefined, '10.0.0.7'));
    expect(refused.statusCode).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'RATE_LIMITED' });
    expect(Number(refused.headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect((await serveEvent(app, event('GET', '/page', {}, undefined, '10.0.0.8'))).statusCode).toBe(200);
  });

  it('refuses before the route runs', async () => {
    let ran = 0;
    const runtime = { store: countingStore(), clock: manualClock(0) } as unknown as Runtime;
    const app = createWebApp(() => runtime);
    app.use(limitPerClientIp('oauth'));
    app.get('/count', (c) => c.text(String(++ran)));
    app.onError((error) => new Response(null, { status: error instanceof ProblemError ? error.status : 500 }));
    for (let i = 0; i < RATE_LIMITS.oauth.limit + 3; i++) await serveEvent(app, event('GET', '/count'));
    expect(ran).toBe(RATE_LIMITS.oauth.limit);
  });
});
