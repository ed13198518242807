import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ABILITY_VALUES } from '../catalogues/abilities.js';
import { manualClock, type Clock } from '../clock.js';
import { relayOutbox } from '../domain/webhook-deliveries/sweeper.js';
import { authenticate } from '../auth/principal.js';
import { ProblemError } from '../errors.js';
import { mintToken } from '../domain/tokens/repository.js';
import { createTeam, findTeam, getTeam } from '../domain/teams/repository.js';
import type { Team } from '../domain/teams/schema.js';
import { DAY_MS } from '../clock.js';
import { demoSeedMarker } from '../store/demo-seed-marker.js';
import { ConditionFailedError, type Store } from '../store/store.js';
import { listProjects } from '../domain/projects/repository.js';
import { JOIN_PATH } from '../public-pages/http.js';
import { storeOnlyRuntime, type Runtime } from '../runtime.js';
import { operatorPrincipal } from '../auth/operator.js';
import type { Project } from '../domain/projects/schema.js';
import type { Plan } from '../domain/plans/schema.js';
import { demoOperator } from './demo-operator.js';
import { DEMO_HISTORY_DAYS, DEMO_PLANS } from './demo-calendar.js';
import { seedDemoHistory } from './demo-history.js';

/** The demo team seeded once into a fresh store (fixed id, so a kept DATA_DIR is not seeded twice). */
export const DEMO_TEAM_ID = '00000000-0000-4000-8000-000000000001';
/** The demo team's owner: the team member `npm start` prints a one-time dashboard sign-in link for (DESIGN §5, D21). */
export const DEMO_OWNER = { email: 'owner@demo.example', name: 'Demo owner' } as const;
/** File name of the kept demo token inside the data directory. */
export const DEMO_TOKEN_FILE = 'demo-token';

/** Seeds the demo team once (a marker item guards it). */
async function seedDemoTeam(store: Store, clock: Clock): Promise<{ team: Team; created: boolean }> {
  let team = await findTeam(store, DEMO_TEAM_ID);
  if (team) return { team, created: false };
  try {
    await demoSeedMarker.put(store, new Date(clock.nowMs()).toISOString());
    team = await createTeam(store, clock, { id: DEMO_TEAM_ID, name: 'Demo team' });
    return { team, created: true };
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    return { team: await getTeam(store, DEMO_TEAM_ID), created: false };
  }
}

/**
 * Demo team data (§5): `business` tier (D20), a project, three plans (one free), five access codes, each an operation
 * run as the operator ({@link demoOperator}). With `history` they date from {@link DEMO_HISTORY_DAYS} days ago, the
 * manual provider is connected, and the returned step (null without `history`) fills the days since with
 * {@link seedDemoHistory} and answers the seconds it took.
 */
async function seedDemoData(store: Store, clock: Clock, history: boolean): Promise<(() => Promise<number>) | null> {
  const principal = (await operatorPrincipal(store, DEMO_TEAM_ID))!;
  const seedRuntime = storeOnlyRuntime(store, clock, 'The demo seed');
  await demoOperator(seedRuntime, principal)('changeBillingTier', { tier: 'business' });
  const nowMs = clock.nowMs();
  const runtime = { ...seedRuntime, clock: manualClock(history ? nowMs - DEMO_HISTORY_DAYS * DAY_MS : nowMs) };
  const operate = demoOperator(runtime, principal);
  const project = await operate<Project>('createProject', {
    name: 'Book club',
    platform_type: 'telegram',
    description: 'A monthly reading circle (demo data).',
  });
  const plan = (request: object) => operate<Plan>('createPlan', { project_id: project.id, ...request });
  const monthly = await plan(DEMO_PLANS.monthly);
  const yearly = await plan(DEMO_PLANS.yearly);
  const free = await plan(DEMO_PLANS.free);
  const codes = await operate<{ codes: Array<{ code: string }> }>('generateAccessCodes', {
    project_id: project.id,
    plan_id: monthly.id,
    count: 5,
    prefix: 'DEMO',
  });
  if (!history) return null;
  await operate('connectProjectPaymentProvider', { project_id: project.id, provider: 'manual' });
  return async () => {
    const begun = performance.now();
    await seedDemoHistory(
      runtime,
      operate,
      { teamId: DEMO_TEAM_ID, id: project.id, monthly, yearly, free, accessCode: codes.codes[0].code },
      nowMs,
    );
    // The history is past: its events are fanned out now without messages to its subscribers (DESIGN D32), so the
    // inbox does not fill with 60 days of welcomes and no reminder comes due at start. The demo team has no endpoint.
    await relayOutbox({ store, clock, deliveryQueue: { send: async () => undefined } }, nowMs, { messages: false });
    return (performance.now() - begun) / 1000;
  };
}

/** True when `token` authenticates against `store` as a demo-team token holding every ability of the catalogue. */
async function isWorkingDemoToken(store: Store, token: string): Promise<boolean> {
  try {
    const principal = await authenticate(store, `Bearer ${token}`);
    return principal.teamId === DEMO_TEAM_ID && ABILITY_VALUES.every((ability) => principal.abilities.has(ability));
  } catch (error) {
    if (error instanceof ProblemError) return false;
    throw error;
  }
}

/**
 * Seeds the demo team once and returns a token with every ability, and — with `history`, on the first start only — the
 * step that writes the demo history (the caller runs it, e.g. after the service is up; null otherwise). With
 * `dataDirectory` the token in `demo-token` (mode 0600, the only cleartext copy: the store keeps a hash, D2) is reused
 * while it works; otherwise a new one is minted and shown once (§5).
 */
export async function seedDemo(
  store: Store,
  clock: Clock,
  options: { dataDirectory?: string; history: boolean },
): Promise<{ token: string; file: string | null; history: (() => Promise<number>) | null }> {
  const { team, created } = await seedDemoTeam(store, clock);
  const { dataDirectory } = options;
  const file = dataDirectory ? join(dataDirectory, DEMO_TOKEN_FILE) : null;
  if (file) {
    const kept = (await readFile(file, 'utf8').catch(() => '')).trim();
    if (kept && (await isWorkingDemoToken(store, kept))) return { token: kept, file, history: null };
  }
  const minted = await mintToken(store, clock, {
    teamId: DEMO_TEAM_ID,
    team,
    abilities: ABILITY_VALUES,
    name: 'demo (npm start)',
  });
  const history = created ? await seedDemoData(store, clock, options.history) : null;
  if (file) {
    await mkdir(dataDirectory!, { recursive: true });
    await writeFile(file, `${minted.token}\n`, { mode: 0o600 });
    await chmod(file, 0o600); // an existing file keeps its old mode on write
  }
  return { token: minted.token, file, history };
}

/**
 * Where a newcomer starts (§5): a one-time dashboard sign-in link of the demo owner (made a team member first, under
 * `dashboardOrigin`; both operations run as the operator) and the join page of the demo team's first project under
 * `baseUrl` (null without one).
 */
export async function demoEntryPoints(
  runtime: Runtime,
  token: string,
  urls: { baseUrl: string; dashboardOrigin: string },
): Promise<{ demoSignInLink: { url: string; expires_at: string }; demoJoinUrl: string | null }> {
  const { store } = runtime;
  const operate = demoOperator(runtime, (await operatorPrincipal(store, DEMO_TEAM_ID))!);
  const owner = await operate<{ email: string }>('addTeamOwner', DEMO_OWNER);
  const link = await operate<{ path: string; expires_at: string }>('createSignInLink', { email: owner.email });
  const [project] = (await listProjects(store, await authenticate(store, `Bearer ${token}`), { limit: 1 })).data;
  return {
    demoSignInLink: { url: `${urls.dashboardOrigin}${link.path}`, expires_at: link.expires_at },
    demoJoinUrl: project ? `${urls.baseUrl}${JOIN_PATH}/${project.id}` : null,
  };
}
