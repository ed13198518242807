/**
 * Operator CLI (DESIGN §5): `npm run cli -- <command>`. Prints JSON on stdout; on failure prints a
 * problem document on stderr and exits 1 (2 for a usage error). Talks to the store named by
 * DYNAMODB_ENDPOINT (default the local server's DynamoDB Local, http://127.0.0.1:$DYNAMODB_LOCAL_PORT
 * with 8000 by default), TABLE_NAME
 * and DEAD_LETTER_TABLE_NAME.
 *
 *   team create --name <name>                                   → { id, name }
 *   token create --team <uuid> --abilities <a,b,...> [--project <uuid>]... [--name <text>]
 *                                                               → { id, token, abilities, scopes }
 *   token revoke <id>                                           → { id, revoked_at }
 *   token list --team <uuid>                                    → [ ... ]
 */
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { systemClock } from '../shared/clock.js';
import { localConfig } from '../shared/config.js';
import { listTokens, mintToken, revokeToken } from '../shared/domain/tokens/repository.js';
import { createTeam } from '../shared/domain/teams/repository.js';
import { ProblemError, toProblem } from '../shared/errors.js';
import { createStore } from '../shared/store/store.js';

const USAGE = `Usage: npm run cli -- <command>
  team create --name <name>
  token create --team <uuid> --abilities <a,b,...> [--project <uuid>]... [--name <text>]
  token revoke <token id>
  token list --team <uuid>`;

class UsageError extends Error {}

const argv = process.argv.slice(2);
const [noun, verb] = argv;
const rest = argv.slice(2);
const config = localConfig();
const store = createStore({
  endpoint: config.dynamoDbEndpoint ?? `http://127.0.0.1:${config.dynamoDbLocalPort}`,
  tableName: config.tableName,
  deadLetterTableName: config.deadLetterTableName,
});

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
    throw new ProblemError('VALIDATION_FAILED', `${flag} must be a UUID.`, { errors: [{ path: flag, message: 'must be a UUID' }] });
  }
  return value;
}

async function run(): Promise<unknown> {
  const command = `${noun ?? ''} ${verb ?? ''}`.trim();
  switch (command) {
    case 'team create': {
      const { values } = options({ name: { type: 'string' } });
      const team = await createTeam(store, systemClock, { name: required(values.name, '--name') });
      return { id: team.id, name: team.name };
    }
    case 'token create': {
      const { values } = options({ team: { type: 'string' }, abilities: { type: 'string' }, project: { type: 'string', multiple: true }, name: { type: 'string' } });
      const teamId = uuid(required(values.team, '--team'), '--team');
      const abilities = required(values.abilities, '--abilities').split(',').map((ability) => ability.trim()).filter(Boolean);
      const projectIds = (values.project ?? []).flatMap((value) => value.split(',')).map((id) => uuid(id.trim(), '--project'));
      const token = await mintToken(store, systemClock, { teamId, abilities, projectIds, name: values.name ?? null });
      return { id: token.id, token: token.token, abilities: token.abilities, scopes: token.scopes };
    }
    case 'token revoke': {
      const { positionals } = options({}, true);
      const id = required(positionals[0], '<token id>');
      const token = await revokeToken(store, systemClock, null, id);
      return { id: token.id, revoked_at: token.revoked_at };
    }
    case 'token list': {
      const { values } = options({ team: { type: 'string' } });
      const teamId = uuid(required(values.team, '--team'), '--team');
      const all: unknown[] = [];
      let cursor: string | undefined;
      do {
        const page = await listTokens(store, teamId, { limit: 100, cursor, include_revoked: true });
        all.push(...page.data);
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      return all;
    }
    default:
      throw new UsageError(command ? `Unknown command: ${command}` : 'No command given.');
  }
}

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
    const known = error instanceof ProblemError;
    const { problem } = toProblem(error, randomUUID());
    if (!known) problem.detail = `${problem.detail} (${(error as Error).name}: ${(error as Error).message})`;
    process.stderr.write(`${JSON.stringify(problem, null, 2)}\n`);
    process.exitCode = 1;
  }
} finally {
  store.document.destroy();
}
