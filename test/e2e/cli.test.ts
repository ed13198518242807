/**
 * The operator CLI as an operator uses it (DESIGN §5, README "Operator CLI"): `npm run -s cli -- ...` prints only JSON
 * on stdout (so it pipes into `jq`), `--help` prints the usage and exits 0, `--abilities all` grants the whole
 * catalogue, `member sign-in-link` makes a dashboard sign-in link, every command runs through the pipeline (the team's
 * activity log names the operator, refusals included), and an unreachable store (or one without the tables) is a
 * problem that asks whether `npm start` is running — never "retry with the same idempotency key".
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ABILITY_VALUES } from '../../shared/catalogues/abilities.js';
import { systemClock } from '../../shared/clock.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import { ensureTeamOwner } from '../../shared/domain/team-members/changes.js';
import { consumeSignInLink } from '../../shared/domain/team-members/sessions.js';
import type { Store } from '../../shared/store/store.js';
import { runCli } from '../support/local-process.js';
import { createTestRuntime, createTestStore } from '../support/store.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let env: NodeJS.ProcessEnv;
let store: Store;

beforeAll(async () => {
  store = await createTestStore();
  env = {
    ...process.env,
    DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT,
    TABLE_NAME: store.tableName,
    DEAD_LETTER_TABLE_NAME: store.deadLetterTableName,
  };
});

afterAll(() => store.document.destroy());

/** Runs `npm run -s cli -- <args>` from the repository, as the README tells operators to. */
function npmRunCli(
  args: string[],
  environment: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '-s', 'cli', '--', ...args], {
      cwd: ROOT,
      env: environment,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('operator CLI', () => {
  it('prints only JSON on stdout through `npm run -s cli`, so the output pipes into jq; --abilities all grants every ability', async () => {
    const team = await npmRunCli(['team', 'create', '--name', 'Piped'], env);
    expect(team.code, team.stderr).toBe(0);
    const created = JSON.parse(team.stdout) as { id: string; name: string }; // the whole of stdout is one JSON document
    expect(created).toMatchObject({ id: expect.any(String), name: 'Piped' });

    const token = await runCli(['token', 'create', '--team', created.id, '--abilities', 'all', '--name', 'ops'], env);
    expect(token.code, token.stderr).toBe(0);
    const minted = JSON.parse(token.stdout) as { abilities: string[]; scopes: string[]; token: string };
    expect([...minted.abilities].sort()).toEqual([...ABILITY_VALUES].sort());
    expect(minted.scopes).toEqual([`scope:team:${created.id}`]);
  });

  it('runs each command through the pipeline: the team’s log names the operator for every write, refusals included', async () => {
    const team = JSON.parse((await runCli(['team', 'create', '--name', 'Logged'], env)).stdout) as { id: string };
    const minted = await runCli(['token', 'create', '--team', team.id, '--abilities', 'project:view-any'], env);
    const token = JSON.parse(minted.stdout) as { id: string };
    expect((await runCli(['token', 'revoke', token.id], env)).code).toBe(0);
    expect((await runCli(['token', 'list', '--team', team.id], env)).code).toBe(0);
    expect((await runCli(['billing', 'set-tier', '--team', team.id, '--tier', 'pro'], env)).code).toBe(0);
    const unknownInvoice = ['billing', 'invoice-paid', '--team', team.id, '--invoice', crypto.randomUUID()];
    expect(JSON.parse((await runCli(unknownInvoice, env)).stderr)).toMatchObject({ code: 'NOT_FOUND' });
    // A team that does not exist gets no log: the command is refused before it runs.
    const elsewhere = await runCli(['billing', 'set-tier', '--team', crypto.randomUUID(), '--tier', 'pro'], env);
    expect(JSON.parse(elsewhere.stderr)).toMatchObject({ code: 'NOT_FOUND' });

    const { data } = await listActivity(store, team.id, { limit: 10 });
    expect(data.map(({ operation, outcome, status }) => ({ operation, outcome, status })).reverse()).toEqual([
      { operation: 'createTeam', outcome: 'ok', status: 200 },
      { operation: 'createToken', outcome: 'ok', status: 201 },
      { operation: 'revokeToken', outcome: 'ok', status: 200 },
      { operation: 'changeBillingTier', outcome: 'ok', status: 200 },
      { operation: 'markBillingInvoicePaid', outcome: 'NOT_FOUND', status: 404 },
    ]);
    for (const entry of data) expect(entry).toMatchObject({ surface: 'operator', token_id: null, member_id: null });
  });

  it('makes a dashboard sign-in link with `member sign-in-link` as createSignInLink: under --base-url, once, logged', async () => {
    const team = JSON.parse((await runCli(['team', 'create', '--name', 'Signing'], env)).stdout) as { id: string };
    const runtime = await createTestRuntime({ clock: systemClock, store });
    const owner = await ensureTeamOwner(runtime, team.id, { email: 'owner@signing.example', name: 'Owner' });
    const base = ['member', 'sign-in-link', '--team', team.id, '--base-url', 'https://members.example/'];

    const made = await runCli([...base, '--email', 'Owner@Signing.example'], env);
    expect(made.code, made.stderr).toBe(0);
    const { url } = JSON.parse(made.stdout) as { url: string; expires_at: string };
    expect(url).toMatch(/^https:\/\/members\.example\/dashboard\/sign-in\/link\?token=sil_/);
    const token = new URL(url).searchParams.get('token')!;
    await expect(consumeSignInLink(store, systemClock, token)).resolves.toEqual({
      teamId: team.id,
      memberId: owner.id,
    });
    const unknown = await runCli([...base, '--email', 'nobody@signing.example'], env);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr)).toMatchObject({ code: 'NOT_FOUND' });

    const { data } = await listActivity(store, team.id, { limit: 10, operation: 'createSignInLink' });
    expect(data.map(({ surface, outcome }) => [surface, outcome]).reverse()).toEqual([
      ['operator', 'ok'],
      ['operator', 'NOT_FOUND'],
    ]);
  });

  it('prints the usage on stdout and exits 0 for --help and -h, whatever the command', async () => {
    for (const args of [['--help'], ['-h'], ['token', 'create', '--help']]) {
      const help = await runCli(args, env);
      expect(help.code, args.join(' ')).toBe(0);
      expect(help.stdout).toMatch(/^Usage: npm run -s cli -- <command>/);
      expect(help.stdout).toContain('--abilities <a,b,...|all>');
      expect(help.stderr).toBe('');
    }
    const viaNpm = await npmRunCli(['--help'], env);
    expect(viaNpm.code).toBe(0);
    expect(viaNpm.stdout).toMatch(/^Usage: /); // no npm banner before it
  });

  it('says the store cannot be reached and asks whether `npm start` is running, when nothing listens', async () => {
    const port = await closedPort();
    const failed = await runCli(['team', 'create', '--name', 'Nowhere'], {
      ...env,
      DYNAMODB_ENDPOINT: `http://127.0.0.1:${port}`,
    });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    const problem = JSON.parse(failed.stderr) as { detail: string; hint: string };
    expect(problem.detail).toContain(`Could not reach DynamoDB at http://127.0.0.1:${port}`);
    expect(problem.detail).toContain('Is `npm start` running?');
    expect(`${problem.detail} ${problem.hint}`).not.toMatch(/idempotency/i);
  });

  it('says the tables are missing when the store answers without them', async () => {
    const failed = await runCli(['token', 'list', '--team', crypto.randomUUID()], {
      ...env,
      TABLE_NAME: 'no-such-table',
      DEAD_LETTER_TABLE_NAME: 'no-such-table-dead',
    });
    expect(failed.code).toBe(1);
    const problem = JSON.parse(failed.stderr) as { detail: string; hint: string };
    expect(problem.detail).toContain("without the service's tables");
    expect(problem.detail).toContain('Is `npm start` running');
    expect(problem.hint).not.toMatch(/idempotency/i);
  });
});
