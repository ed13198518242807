/**
 * Operator CLI (DESIGN §5; commands in USAGE, `member sign-in-link` is D21): JSON on stdout only; on failure a problem
 * document on stderr and exit 1 (2 for a usage error); `--help` prints the usage and exits 0. Store: DYNAMODB_ENDPOINT
 * (default http://127.0.0.1:$DYNAMODB_LOCAL_PORT, 8000), TABLE_NAME, DEAD_LETTER_TABLE_NAME; when it is unreachable or
 * has no tables, the problem asks whether `npm start` is running. The team and token commands and the billing ones run
 * as operations through the pipeline with the operator's principal (surface `operator`, D35), a sign-in link too
 * (`createSignInLink`, in the team's activity log).
 */
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { operatorPrincipal } from '../shared/auth/operator.js';
import type { Principal } from '../shared/auth/principal.js';
import { ABILITY_VALUES } from '../shared/catalogues/abilities.js';
import { systemClock } from '../shared/clock.js';
import { localConfig } from '../shared/config.js';
import { BILLING_TIERS } from '../shared/domain/billing/schema.js';
import { teamOfToken } from '../shared/domain/tokens/repository.js';
import { ProblemError, toProblem } from '../shared/errors.js';
import { logger } from '../shared/logger.js';
import type { InternalOperationId, OperationId } from '../shared/operations/registry.js';
import { storeOnlyRuntime, type Runtime } from '../shared/runtime.js';
import { createStore, type Store } from '../shared/store/store.js';
import { runAsOperator } from '../shared/web/run-operation.js';

const USAGE = `Usage: npm run -s cli -- <command> [options]     (-s: no npm banner, so the JSON pipes into jq)

Commands (JSON on stdout; a problem document on stderr and a non-zero exit on failure):
  team create --name <name>
  token create --team <uuid> --abilities <a,b,...|all> [--project <uuid>]... [--name <text>]
  token revoke <token id>
  token list --team <uuid>
  billing set-tier --team <uuid> --tier <${BILLING_TIERS.join('|')}>
  billing invoice-paid --team <uuid> --invoice <uuid>
  billing invoice-failed --team <uuid> --invoice <uuid> [--reason <text>]
  member sign-in-link --team <uuid> --email <address> [--base-url <url>]
      a one-time dashboard sign-in link for an active team member (15 minutes, single use);
      --base-url defaults to http://localhost:$PORT (3000)

--abilities all grants every ability of the catalogue. The CLI talks to DYNAMODB_ENDPOINT (default the
DynamoDB Local that \`npm start\` runs, http://127.0.0.1:$DYNAMODB_LOCAL_PORT, port 8000 by default),
tables TABLE_NAME and DEAD_LETTER_TABLE_NAME (the defaults of npm start). The billing commands are the
operator's side of a team's own billing: a tier change, an invoice paid or a failed payment (which starts
the 7-day grace period); they emit the team's billing.* events.

Options:
  -h, --help   print this help and exit`;

class UsageError extends Error {}

const argv = process.argv.slice(2);
const [noun, verb] = argv;
const rest = argv.slice(2);
let store: Store | undefined;
let endpoint = '';

/** The store the CLI talks to, created on first use (so `--help` needs no configuration). */
function theStore(): Store {
  if (!store) {
    const config = localConfig();
    endpoint = config.dynamoDbEndpoint ?? `http://127.0.0.1:${config.dynamoDbLocalPort}`;
    store = createStore({ endpoint, tableName: config.tableName, deadLetterTableName: config.deadLetterTableName });
  }
  return store;
}

/**
 * The operator's runtime: the store and the system clock. It sends no messages and schedules nothing: the running
 * service's sweeper (on AWS, the table's stream) finds the events the commands commit.
 */
function operatorRuntime(): Runtime {
  return storeOnlyRuntime(theStore(), systemClock, 'The operator CLI');
}

/**
 * Runs an operation as the operator (`principal`, or none for a team to be created) through the pipeline, surface
 * `operator` (DESIGN D35): the team's activity log gets the entry. Returns the result; throws the problem, or the
 * unexpected error behind it (so an unreachable store is named).
 */
async function operate<T>(
  principal: Principal | null,
  operationId: OperationId | InternalOperationId,
  input: Record<string, unknown>,
): Promise<T> {
  // Every handler of the domain: loaded by the commands that run one, not by `--help`.
  const { handlerOf } = await import('../shared/domain/handlers.js');
  return runAsOperator<T>(operatorRuntime(), principal, operationId, input, handlerOf(operationId));
}

/** The operator's principal for existing team `teamId`; NOT_FOUND when there is no such team (deleted ones count). */
async function operatorOf(teamId: string): Promise<Principal> {
  const principal = await operatorPrincipal(theStore(), teamId);
  if (!principal) throw new ProblemError('NOT_FOUND', `No team ${teamId}.`);
  return principal;
}

function options<T extends Record<string, { type: 'string'; multiple?: boolean }>>(spec: T, allowPositionals = false) {
  try {
    return parseArgs({ args: rest, options: spec, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`Missing ${flag}.`);
  return value;
}

function uuid(value: string, flag: string): string {
  if (!z.uuid().safeParse(value).success) {
    throw new ProblemError('VALIDATION_FAILED', `${flag} must be a UUID.`, {
      errors: [{ path: flag, message: 'must be a UUID' }],
    });
  }
  return value;
}

async function run(): Promise<unknown> {
  const command = `${noun ?? ''} ${verb ?? ''}`.trim();
  switch (command) {
    case 'team create': {
      const { values } = options({ name: { type: 'string' } });
      const team = await operate<{ id: string; name: string }>(null, 'createTeam', {
        name: required(values.name, '--name'),
      });
      return { id: team.id, name: team.name };
    }
    case 'token create': {
      const { values } = options({
        team: { type: 'string' },
        abilities: { type: 'string' },
        project: { type: 'string', multiple: true },
        name: { type: 'string' },
      });
      const teamId = uuid(required(values.team, '--team'), '--team');
      const listed = required(values.abilities, '--abilities')
        .split(',')
        .map((ability) => ability.trim())
        .filter(Boolean);
      const abilities = listed.length === 1 && listed[0] === 'all' ? [...ABILITY_VALUES] : listed;
      const projectIds = (values.project ?? [])
        .flatMap((value) => value.split(','))
        .map((id) => uuid(id.trim(), '--project'));
      const token = await operate<{ id: string; token: string; abilities: string[]; scopes: string[] }>(
        await operatorOf(teamId),
        'createToken',
        { abilities, ...(projectIds.length ? { project_ids: projectIds } : {}), name: values.name },
      );
      return { id: token.id, token: token.token, abilities: token.abilities, scopes: token.scopes };
    }
    case 'token revoke': {
      const { positionals } = options({}, true);
      const id = required(positionals[0], '<token id>');
      const teamId = await teamOfToken(theStore(), id);
      if (!teamId) throw new ProblemError('NOT_FOUND', `No token ${id}.`);
      const token = await operate<{ id: string; revoked_at: string }>(await operatorOf(teamId), 'revokeToken', { id });
      return { id: token.id, revoked_at: token.revoked_at };
    }
    case 'token list': {
      const { values } = options({ team: { type: 'string' } });
      const principal = await operatorOf(uuid(required(values.team, '--team'), '--team'));
      const all: unknown[] = [];
      let cursor: string | undefined;
      do {
        const page = await operate<{ data: unknown[]; next_cursor: string | null }>(principal, 'listTokens', {
          limit: 100,
          include_revoked: true,
          ...(cursor ? { cursor } : {}),
        });
        all.push(...page.data);
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      return all;
    }
    case 'billing set-tier': {
      const { values } = options({ team: { type: 'string' }, tier: { type: 'string' } });
      const teamId = uuid(required(values.team, '--team'), '--team');
      const tier = required(values.tier, '--tier');
      if (!(BILLING_TIERS as readonly string[]).includes(tier)) {
        throw new ProblemError('VALIDATION_FAILED', `--tier must be one of ${BILLING_TIERS.join(', ')}.`, {
          errors: [{ path: '--tier', message: `one of ${BILLING_TIERS.join(', ')}` }],
        });
      }
      return operate(await operatorOf(teamId), 'changeBillingTier', { tier });
    }
    case 'billing invoice-paid': {
      const { values } = options({ team: { type: 'string' }, invoice: { type: 'string' } });
      return operate(await operatorOf(uuid(required(values.team, '--team'), '--team')), 'markBillingInvoicePaid', {
        invoice_id: uuid(required(values.invoice, '--invoice'), '--invoice'),
      });
    }
    case 'billing invoice-failed': {
      const { values } = options({ team: { type: 'string' }, invoice: { type: 'string' }, reason: { type: 'string' } });
      return operate(
        await operatorOf(uuid(required(values.team, '--team'), '--team')),
        'markBillingInvoicePaymentFailed',
        { invoice_id: uuid(required(values.invoice, '--invoice'), '--invoice'), reason: values.reason },
      );
    }
    case 'member sign-in-link': {
      const { values } = options({
        team: { type: 'string' },
        email: { type: 'string' },
        'base-url': { type: 'string' },
      });
      const teamId = uuid(required(values.team, '--team'), '--team');
      const email = required(values.email, '--email');
      const baseUrl = (values['base-url'] ?? `http://localhost:${localConfig().port}`).replace(/\/+$/, '');
      const link = await operate<{ path: string; expires_at: string }>(await operatorOf(teamId), 'createSignInLink', {
        email,
      });
      return { url: `${baseUrl}${link.path}`, expires_at: link.expires_at };
    }
    default:
      throw new UsageError(command ? `Unknown command: ${command}` : 'No command given.');
  }
}

/** Error codes of a store that cannot be reached at all (nothing listening, no such host, no route, timeout). */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'ECONNRESET',
]);

/**
 * The problem for a store failure the operator can fix — DynamoDB not reachable, or reachable without the
 * service's tables — naming the endpoint and asking whether `npm start` is running; null for anything else.
 */
function storeProblem(error: unknown): ProblemError | null {
  const failure = error as { code?: string; name?: string; message?: string; cause?: { code?: string } };
  const code = failure?.code ?? failure?.cause?.code;
  if ((code && UNREACHABLE.has(code)) || failure?.name === 'TimeoutError') {
    return new ProblemError(
      'INTERNAL_ERROR',
      `Could not reach DynamoDB at ${endpoint} (${code ?? failure.name}). Is \`npm start\` running? It starts DynamoDB Local there; otherwise set DYNAMODB_ENDPOINT (or DYNAMODB_LOCAL_PORT) to the DynamoDB endpoint the service uses.`,
    );
  }
  if (failure?.name === 'ResourceNotFoundException') {
    return new ProblemError(
      'INTERNAL_ERROR',
      `DynamoDB at ${endpoint} answered, but without the service's tables (${failure.message ?? 'table not found'}). Is \`npm start\` running against it? It creates the tables; otherwise set TABLE_NAME and DEAD_LETTER_TABLE_NAME to the service's.`,
    );
  }
  return null;
}

// stdout carries the command's JSON and stderr its one problem document: the pipeline's log lines would break both.
logger.setLogLevel('SILENT');

const { values: global } = parseArgs({
  args: argv,
  options: { help: { type: 'boolean', short: 'h' } },
  strict: false,
  allowPositionals: true,
});
if (global.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exitCode = 0;
} else {
  try {
    const result = await run();
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    process.exitCode = 0;
  } catch (error) {
    if (error instanceof UsageError) {
      const { problem } = toProblem(new ProblemError('VALIDATION_FAILED', `${error.message}\n${USAGE}`), randomUUID());
      process.stderr.write(`${JSON.stringify(problem, null, 2)}\n`);
      process.exitCode = 2;
    } else {
      const unreachable = storeProblem(error);
      const known = error instanceof ProblemError;
      const { problem } = toProblem(unreachable ?? error, randomUUID());
      if (unreachable)
        problem.hint =
          'Start the service with `npm start` (it runs DynamoDB Local and creates the tables), or point DYNAMODB_ENDPOINT at the store the service uses; then run the command again.';
      else if (!known) problem.detail = `${problem.detail} (${(error as Error).name}: ${(error as Error).message})`;
      process.stderr.write(`${JSON.stringify(problem, null, 2)}\n`);
      process.exitCode = 1;
    }
  } finally {
    store?.document.destroy();
  }
}
