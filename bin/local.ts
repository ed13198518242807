/**
 * `npm start`: the whole service locally (DESIGN §5). Env: PORT (3000), HOST (127.0.0.1), DYNAMODB_ENDPOINT (unset:
 * DynamoDB Local on DYNAMODB_LOCAL_PORT, 8000), DATA_DIR, TIME_SCALE (≥ 1), DEMO_HISTORY=0, WEBHOOK_EXTRA_CA_FILE,
 * WEBHOOK_ALLOW_PRIVATE_TARGETS=1, SMTP_URL (unset: an embedded MailDev inbox on MAILDEV_SMTP_PORT and
 * MAILDEV_WEB_PORT, free ports by default), MAIL_FROM (members@localhost). The banner comes first; a first start's demo
 * history is written after it, and a line says when. SIGINT, SIGTERM, SIGHUP stop everything. With DATA_DIR the demo
 * token is kept in DATA_DIR/demo-token (0600) and reprinted while it still works, and the inbox in DATA_DIR/mail.
 */
import { localServiceOptionsFromEnvironment, startLocalService, type LocalService } from '../shared/local/service.js';

const startedAt = performance.now();
let service: LocalService | null = null;
let stopping = false;
// Installed before anything starts: a Ctrl-C during start-up exits at once, and the exit handler of the
// DynamoDB Local handle kills Java; after start-up it stops the service in order.
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`\n${signal}: stopping...\n`);
  const timer = setTimeout(() => process.exit(1), 10_000);
  await service?.stop().catch((error: Error) => process.stderr.write(`while stopping: ${error.message}\n`));
  clearTimeout(timer);
  process.exit(0);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(signal));

let options;
try {
  options = localServiceOptionsFromEnvironment();
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(2);
}
service = await startLocalService(options).catch((error: Error) => {
  process.stderr.write(`Could not start the service: ${error.message}\n`);
  if (/did not answer|exited/.test(error.message)) {
    process.stderr.write(
      'Is Java 17+ installed, and is the DynamoDB Local port free? Set DYNAMODB_LOCAL_PORT to move it.\n',
    );
  }
  if (/EADDRINUSE/.test(error.message) && (process.env.MAILDEV_SMTP_PORT || process.env.MAILDEV_WEB_PORT)) {
    process.stderr.write('Is the inbox port free? Set MAILDEV_SMTP_PORT and MAILDEV_WEB_PORT to move it.\n');
  }
  process.exit(1);
});
if (stopping) {
  await service.stop();
  process.exit(0);
}

process.stdout.write(
  [
    '',
    `Membership service is running (started in ${((performance.now() - startedAt) / 1000).toFixed(1)} s).`,
    `  REST API:   ${service.baseUrl}/v1/...`,
    `  MCP server: ${service.mcpUrl}`,
    `  OpenAPI:    ${service.baseUrl}/openapi.json`,
    `  Dashboard:  ${service.dashboardUrl}`,
    ...(service.inboxUrl ? [`  Inbox:      ${service.inboxUrl} (every e-mail the service sends)`] : []),
    `  Sign in as the demo owner (one-time link, valid until ${service.demoSignInLink.expires_at}):`,
    `              ${service.demoSignInLink.url}`,
    `  Demo team:  ${service.demoTeamId}`,
    ...(service.demoJoinUrl ? [`  Join page:  ${service.demoJoinUrl} (the demo project's, for fans)`] : []),
    `  Demo token (every ability; ${service.demoTokenFile ? `kept in ${service.demoTokenFile}` : 'shown once'}): ${service.demoToken}`,
    '',
    `Try: curl -H "Authorization: Bearer ${service.demoToken}" ${service.baseUrl}/v1/teams/current`,
    ...(service.demoHistory
      ? ['The demo history (60 days, about 40 subscribers) is being written in the background; a line says when.']
      : []),
    'Press Ctrl-C to stop (SIGTERM and SIGHUP stop it too).',
    '',
  ].join('\n'),
);
service.demoHistory?.then(
  (seconds) =>
    process.stdout.write(`Demo history written in ${seconds.toFixed(1)} s: every list and chart has data.\n`),
  (error: Error) => {
    if (!stopping) process.stderr.write(`The demo history could not be written: ${error.message}\n`);
  },
);
