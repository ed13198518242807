import { expect } from 'vitest';

/** What a REST client needs of a running service (in-process or its own process): its base URL and demo token. */
interface RunningService {
  baseUrl: string;
  demoToken: string;
}

/**
 * A REST client of a running service for e2e tests: `call(method, path, body?)` sends JSON with `token` (default the
 * service's demo token) and an Idempotency-Key on writes, and returns the status and the JSON body (null when empty),
 * whatever the status. `service` is read at each call (tests assign it in `beforeAll`).
 */
export function restCall(service: () => RunningService, token?: () => string) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${service().baseUrl}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token?.() ?? service().demoToken}`,
        'Content-Type': 'application/json',
        ...(method === 'GET' ? {} : { 'Idempotency-Key': crypto.randomUUID() }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  };
}

/** {@link restCall} that asserts a 2xx naming the call and returns only the JSON body. */
export function restApi(service: () => RunningService, token?: () => string) {
  const call = restCall(service, token);
  return async (method: string, path: string, body?: unknown): Promise<any> => {
    const answer = await call(method, path, body);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
    return answer.body;
  };
}
