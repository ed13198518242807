import { randomBytes } from 'node:crypto';
import { startLocalService, type LocalService, type LocalServiceOptions } from '../../shared/local/service.js';
import { registerTestTables } from './store.js';

/**
 * Starts the local service in-process for a test: REST and the tool server on 127.0.0.1:0, against the
 * test run's DynamoDB Local, with fresh table names (or `tableName` to share tables between instances),
 * no webhook CA, private targets refused, no request log, no reachable Telegram and no demo history (the
 * demo team, project, plans and codes only; with `demoHistory`, it resolves once the history is written). `overrides`
 * replace any of these (`integrations` field by field).
 */
export async function startTestService(overrides: Partial<LocalServiceOptions> = {}): Promise<LocalService> {
  const tableName = overrides.tableName ?? `svc-${randomBytes(4).toString('hex')}`;
  registerTestTables(tableName, `${tableName}-dead`);
  const service = await startLocalService({
    host: '127.0.0.1',
    port: 0,
    dynamoDbEndpoint: process.env.DYNAMODB_ENDPOINT,
    dynamoDbLocalPort: 0,
    tableName,
    deadLetterTableName: `${tableName}-dead`,
    timeScale: 1,
    extraCaPem: [],
    allowPrivateTargets: false,
    log: () => {},
    ...overrides,
    // No test reaches a real provider: Telegram calls go to a closed loopback port (refused at once,
    // no retries) unless the test points them at its own fake Bot API.
    integrations: {
      telegramApiRoot: 'http://127.0.0.1:9',
      stripeApiBaseUrl: 'http://127.0.0.1:9',
      retry: { retries: 0, minTimeoutMs: 1 },
      ...overrides.integrations,
    },
  });
  // With `demoHistory`, the tests read the history: they start once it is written.
  await service.demoHistory;
  return service;
}

/**
 * Accepts a team invitation at a running service as the invited person does (`POST
 * /v1/team-invitations/accept`, no token: the invitation token is the credential). Returns the status and
 * the JSON body.
 */
export async function acceptInvitation(
  service: Pick<LocalService, 'baseUrl'>,
  invitationToken: string,
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${service.baseUrl}/v1/team-invitations/accept`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
    body: JSON.stringify({ token: invitationToken }),
  });
  return { status: response.status, body: await response.json() };
}
