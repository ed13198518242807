import type { Principal } from '../../auth/principal.js';
import { requireAbility, requireProjectAccess } from '../../auth/authorize.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { hasRedeemed, readBatchState, readCodeItem, readCodeLookup } from '../../store/access-codes/reads.js';
import { putRedemption, writeCodeUse } from '../../store/access-codes/writes.js';
import { ConditionFailedError, TransactionCanceledError } from '../../store/store.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { getPlan } from '../plans/repository.js';
import type { Plan } from '../plans/schema.js';
import { withinTierLimit } from '../billing/repository.js';
import { loadProject, toProject } from '../projects/repository.js';
import {
  getSubscriber,
  prepareSubscriber,
  visibleSubscriber,
  type PreparedSubscriber,
} from '../subscribers/repository.js';
import type { Subscriber } from '../subscribers/schema.js';
import { periodEnd } from '../subscriptions/lifecycle.js';
import { DAY_MS } from '../../clock.js';
import { applyPlatformAccess, type PlatformAccessFollowUp } from '../subscriptions/platform-access.js';
import { addSubscriptionCreation, newSubscription, requireSubscribable } from '../subscriptions/creation.js';
import type { Subscription } from '../subscriptions/schema.js';
import { toAccessCode } from './repository.js';
import type { AccessCode, AccessCodeRedemption, RedeemAccessCodeRequest } from './schema.js';

/**
 * Access-code redemption (D15, D18): one transaction creates the subscription, counts the use, records the redemption
 * (one per subscriber and code) and emits `subscription.created`, `access_code.redeemed` and, on the last use,
 * `access_code.expired`. The counter holds under any race: uses before the last `ADD` under `times_redeemed < M − 1`,
 * the last `SET` under `= M − 1`; failed conditions re-decide, conflicts retry up to {@link REDEEM_ATTEMPTS} times.
 */

/** Attempts of one redemption against concurrent redemptions of the same code (conflicts and lost counts). */
const REDEEM_ATTEMPTS = 60;
/** Longest jittered wait between two attempts after a transaction conflict, in MILLISECONDS. */
const MAX_BACKOFF_MS = 250;
/** Growth of that wait per attempt, in MILLISECONDS (attempt n waits a random 0 to min(n × step, max)). */
const BACKOFF_STEP_MS = 10;

/** The ability creating a subscriber needs; a redemption that creates one needs it too. */
const CREATE_SUBSCRIBER_ABILITY = 'project-user:update' as const;

/** The NOT_FOUND of a code that is not one of the project's (never says whether another project has it). */
const unknownCode = (projectId: string) =>
  new ProblemError(
    'NOT_FOUND',
    `No access code of project ${projectId} matches the code given; check its spelling (letters, digits and dashes).`,
  );

/** The CONFLICT of a code that cannot be redeemed any more, naming its status (`exhausted`, `revoked` or `expired`). */
function notRedeemable(code: AccessCode): ProblemError {
  const why =
    code.status === 'exhausted'
      ? `all ${code.max_redemptions} of its redemptions are used`
      : code.status === 'revoked'
        ? 'the creator revoked it'
        : `it expired${code.expires_at ? ` at ${code.expires_at}` : ''}`;
  return new ProblemError(
    'CONFLICT',
    `The access code is ${code.status}: ${why}; only an active code can be redeemed.`,
  );
}

/** The CONFLICT of a second redemption of a code by the same subscriber. */
const alreadyRedeemed = (subscriberId: string) =>
  new ProblemError(
    'CONFLICT',
    `Subscriber ${subscriberId} already redeemed this access code; a code can be redeemed once per subscriber.`,
  );

/** What the code's lookup item points at: the code item's key parts. */
interface CodeLocation {
  codeId: string;
  batchId: string;
}

/**
 * Finds the code `presented` among the project's codes (DESIGN D18: case-insensitive, by the SHA-256 of
 * its normalized form, keyed per project, so another project's codes are never found) in an active
 * batch. Errors: NOT_FOUND (unknown, or in a batch still being written).
 */
async function locateCode(
  runtime: UnitOfWorkRuntime,
  teamId: string,
  projectId: string,
  presented: string,
): Promise<CodeLocation> {
  const location = await readCodeLookup(runtime.store, teamId, projectId, presented);
  if (!location) throw unknownCode(projectId);
  if ((await readBatchState(runtime.store, teamId, projectId, location.batchId)) !== 'active')
    throw unknownCode(projectId);
  return location;
}

/** How a redemption takes its use of the code (see the module comment). */
type Take = 'unlimited' | 'before_last' | 'last';

/** The use a redemption takes of a code read with `times_redeemed` uses of `max_redemptions`. */
function takeOf(code: AccessCode): Take {
  if (code.max_redemptions === null) return 'unlimited';
  return code.times_redeemed + 1 >= code.max_redemptions ? 'last' : 'before_last';
}

/** True for an error that another redemption (or change) of the same items caused: try again. */
function isContention(error: unknown): boolean {
  return (
    error instanceof ConditionFailedError ||
    (error instanceof TransactionCanceledError &&
      error.reasons.some((reason) => reason === 'TransactionConflict' || reason === 'ThrottlingError'))
  );
}

/**
 * Redeems a code for `subscriber_id` or a new `subscriber` (D15, D18): `free_access` → `active` until now +
 * `access_days` (null: one plan period); `trial` → `trialing`. Errors: NOT_FOUND, CONFLICT (code not redeemable,
 * already redeemed, archived/inactive/banned, contended), TOKEN_MISSING_ABILITY.
 */
export async function redeemAccessCode(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  input: RedeemAccessCodeRequest,
): Promise<AccessCodeRedemption> {
  const teamId = principal.teamId;
  requireProjectAccess(principal, projectId);
  if (input.subscriber) requireAbility(principal, CREATE_SUBSCRIBER_ABILITY);
  const project = toProject(await loadProject(runtime.store, principal, projectId));
  const location = await locateCode(runtime, teamId, projectId, input.code);
  const existing = input.subscriber_id ? await getSubscriber(runtime.store, principal, input.subscriber_id) : null;
  let plan: Plan | undefined;

  const { answer, followUp } = await retryOnLostRace(
    async () => {
      const [item, earlier] = await Promise.all([
        readCodeItem(runtime.store, teamId, { projectId, ...location }),
        existing ? hasRedeemed(runtime.store, teamId, location.codeId, existing.id) : false,
      ]);
      if (!item) throw unknownCode(projectId);
      if (earlier) throw alreadyRedeemed(existing!.id);
      const nowMs = runtime.clock.nowMs();
      const code = toAccessCode(item, nowMs);
      if (code.status !== 'active') throw notRedeemable(code);
      plan ??= await getPlan(runtime.store, principal, code.plan_id);
      requireSubscribable(project, plan, existing);
      // No e-mail index: `subscriber` always creates a new one; `subscriber_id` redeems for someone who exists.
      const prepared: PreparedSubscriber | undefined = input.subscriber
        ? await prepareSubscriber(runtime, principal, projectId, input.subscriber)
        : undefined;
      const subscriber: Subscriber = existing ?? prepared!.subscriber;

      const take = takeOf(code);
      const now = isoTime(nowMs);
      // Under concurrent uses of a code not yet exhausted, `times_redeemed` counts at least the uses committed before
      // this one.
      const used: AccessCode = {
        ...code,
        times_redeemed: code.times_redeemed + 1,
        status: take === 'last' ? 'exhausted' : 'active',
        updated_at: now,
      };
      const subscription = subscriptionOf(code, plan, subscriber, nowMs);
      // D10: the answer's subscriber carries contact data only for a principal holding `project-user:view`.
      const answer: AccessCodeRedemption = {
        access_code: used,
        subscriber: visibleSubscriber(principal, subscriber),
        subscription,
      };
      let followUp: PlatformAccessFollowUp | null = null;
      // D20: a subscriber created with the redemption counts against the tier's limit (in `prepared.write`).
      await withinTierLimit(runtime, teamId, 'subscribers', () =>
        unitOfWork(runtime, teamId, async (tx) => {
          const redemption = {
            projectId,
            codeId: code.id,
            subscriberId: subscriber.id,
            subscriptionId: subscription.id,
            now,
          };
          putRedemption(tx, teamId, redemption, () => alreadyRedeemed(subscriber.id));
          writeCodeUse(tx, teamId, code, take, now);
          const added = await addSubscriptionCreation(tx, runtime, principal, {
            subscription,
            subscriber,
            plan: plan!,
            accessCode: used,
            newSubscriber: prepared,
            ...(input.subscriber ? { trialEmail: input.subscriber.email ?? null } : {}),
          });
          followUp = added.followUp;
          answer.subscription = added.subscription;
          tx.emit({
            type: 'access_code.redeemed',
            projectId,
            data: { access_code: used, subscriber, subscription: added.subscription },
          });
          if (take === 'last') tx.emit({ type: 'access_code.expired', projectId, data: { access_code: used } });
          return answer;
        }),
      );
      return { answer, followUp: followUp as PlatformAccessFollowUp | null };
    },
    {
      attempts: REDEEM_ATTEMPTS,
      retryable: isContention,
      // A lost count re-reads at once; a transaction cancelled by a concurrent one waits a jittered, growing moment
      // first.
      waitMs: (error, attempt) =>
        error instanceof ConditionFailedError ? 0 : Math.random() * Math.min(MAX_BACKOFF_MS, BACKOFF_STEP_MS * attempt),
      exhausted: () =>
        new ProblemError(
          'CONFLICT',
          'The access code kept changing while this redemption ran (many redemptions at once); retry.',
        ),
    },
  );
  await applyPlatformAccess(runtime, teamId, followUp);
  return answer;
}

/**
 * The new subscription a redemption of `code` creates at `nowMs` (epoch MILLISECONDS); see {@link redeemAccessCode}.
 */
function subscriptionOf(code: AccessCode, plan: Plan, subscriber: Subscriber, nowMs: number): Subscription {
  const lengthEndMs = code.access_days !== null ? nowMs + code.access_days * DAY_MS : periodEnd(plan, nowMs, null);
  const trial = code.effect === 'trial';
  return newSubscription({
    projectId: code.project_id,
    subscriberId: subscriber.id,
    plan,
    source: 'access_code',
    nowMs,
    startMs: nowMs,
    trialEndMs: trial ? lengthEndMs : null,
    endsAtMs: trial ? null : lengthEndMs,
  });
}
