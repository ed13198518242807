import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import type { IntegrationRuntime } from '../../integrations.js';
import type { PaymentProviderAdapters, ProviderDiscounts, ProviderFailure } from '../../providers/payment-provider.js';
import { retryPolicyOf, retryWhile } from '../../retry.js';
import { couponStore, type StoredCoupon } from '../../store/coupons.js';
import { keys } from '../../store/keys.js';
import type { Page } from '../../store/pages.js';
import type { Item } from '../../store/requests.js';
import type { Store } from '../../store/store.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { archivedConflict } from '../plans/decisions.js';
import { couponTermsErrors } from './decisions.js';
import { listPlans } from '../plans/repository.js';
import { loadProject, toProject } from '../projects/repository.js';
import type { Project } from '../projects/schema.js';
import type { Coupon, CreateCouponRequest, CreatePromotionCodeRequest, PromotionCode } from './schema.js';

/**
 * Coupon use cases (DESIGN D33): create (at Stripe first for a Stripe-connected project), list, read, archive, and
 * promotion codes. Stripe's ids: the coupon keeps ours; each code gets `provider_promotion_code_id`.
 */

/** What the coupon use cases need: the store, clock and events, the integration settings. */
export type CouponRuntime = UnitOfWorkRuntime & IntegrationRuntime;

/** The adapters the provider-first writes use (the handler passes `paymentProviderAdapters(runtime)`). */
export interface CouponOptions {
  adapters: PaymentProviderAdapters;
}

const notFound = (couponId: string) => new ProblemError('NOT_FOUND', `No coupon ${couponId}.`);
const codeTaken = (code: string) =>
  new ProblemError('CONFLICT', `The project already has a promotion code ${code}; choose another code.`);

/** A stored coupon item as its fields (the codes as their strings). */
function storedCoupon(item: Item): StoredCoupon {
  const { pk: _pk, sk: _sk, entity: _entity, team_id: _team, ...fields } = item;
  return fields as StoredCoupon;
}

/** A stored promotion code item as its public shape. */
function toPromotionCode(item: Item): PromotionCode {
  const { pk: _pk, sk: _sk, entity: _entity, team_id: _team, ...fields } = item;
  return fields as PromotionCode;
}

/** The public coupon of a stored one, with its codes read (one BatchGetItem). */
async function withCodes(store: Store, teamId: string, coupon: StoredCoupon): Promise<Coupon> {
  const items = await couponStore.readCodes(store, teamId, coupon.project_id, coupon.promotion_codes);
  const byCode = new Map(items.map((item) => [item.code as string, toPromotionCode(item)]));
  return {
    ...coupon,
    promotion_codes: coupon.promotion_codes.flatMap((code) => (byCode.has(code) ? [byCode.get(code)!] : [])),
  };
}

/** The provider that bills a project's discounts, or null when we apply them ourselves (manual, none). */
function discountsOf(project: Project, options: CouponOptions): ProviderDiscounts | null {
  if (project.payment_provider?.provider !== 'stripe') return null;
  const discounts = options.adapters.stripe?.discounts;
  if (!discounts)
    throw new ProblemError('PROVIDER_UNAVAILABLE', 'No Stripe adapter is available; nothing was created.');
  return discounts;
}

/**
 * Runs a provider call with the runtime's retry policy; its refusal is VALIDATION_FAILED (Stripe's reason), its absence
 * PROVIDER_UNAVAILABLE. Nothing is stored when it fails.
 */
async function atProvider<T extends { ok: true }>(
  runtime: IntegrationRuntime,
  call: () => Promise<T | ProviderFailure>,
): Promise<T> {
  const outcome = await retryWhile(retryPolicyOf(runtime), call, (result) => !result.ok && result.retryable);
  if (outcome.ok) return outcome;
  if (outcome.retryable)
    throw new ProblemError('PROVIDER_UNAVAILABLE', `${outcome.reason} Nothing was changed; retry later.`);
  throw new ProblemError('VALIDATION_FAILED', outcome.reason, { errors: [{ path: 'body', message: outcome.reason }] });
}

/** A new promotion code of `coupon`, created at the provider first when it bills discounts. */
async function newPromotionCode(
  runtime: CouponRuntime,
  teamId: string,
  coupon: Pick<Coupon, 'id' | 'project_id'>,
  request: CreatePromotionCodeRequest,
  discounts: ProviderDiscounts | null,
): Promise<PromotionCode> {
  const id = newUuid();
  const now = isoTime(runtime.clock.nowMs());
  const provider = discounts
    ? await atProvider(runtime, () =>
        discounts.createPromotionCode({
          team_id: teamId,
          project_id: coupon.project_id,
          coupon_id: coupon.id,
          code: request.code,
          first_time_transaction: request.first_time_transaction,
          max_redemptions: request.max_redemptions,
          expires_at: request.expires_at,
          idempotency_key: `promotion-code-${coupon.id}-${request.code}`,
        }),
      )
    : null;
  return {
    id,
    coupon_id: coupon.id,
    project_id: coupon.project_id,
    ...request,
    times_redeemed: 0,
    status: 'active',
    provider_promotion_code_id: provider?.provider_promotion_code_id ?? null,
    created_at: now,
    updated_at: now,
  };
}

/** The active project of the principal's scope, or NOT_FOUND / CONFLICT (archived). */
async function activeProject(store: Store, principal: Principal, projectId: string): Promise<Project> {
  const project = toProject(await loadProject(store, principal, projectId));
  if (project.status === 'archived') throw archivedConflict(project, 'changing its offers');
  return project;
}

/**
 * Creates a coupon and its promotion codes (DESIGN D33). A Stripe-connected project's coupon and codes are created at
 * Stripe first (our coupon id as Stripe's id, limited to the plans' Products), then stored. Errors: NOT_FOUND (project,
 * a plan of `applies_to_plans`), CONFLICT (archived project, a code the project has), VALIDATION_FAILED (Stripe's
 * refusal), PROVIDER_UNAVAILABLE.
 */
export async function createCoupon(
  runtime: CouponRuntime,
  principal: Principal,
  projectId: string,
  request: CreateCouponRequest,
  options: CouponOptions,
): Promise<Coupon> {
  const errors = couponTermsErrors(request);
  if (errors.length > 0)
    throw new ProblemError(
      'VALIDATION_FAILED',
      `The coupon's terms are inconsistent: ${errors.map((error) => `${error.path} ${error.message}`).join('; ')}.`,
      { errors },
    );
  const project = await activeProject(runtime.store, principal, projectId);
  if (request.applies_to_plans.length > 0) {
    const plans = await listPlans(runtime.store, principal, projectId, { limit: 100 });
    const known = new Set(plans.data.map((plan) => plan.id));
    const missing = request.applies_to_plans.filter((planId) => !known.has(planId));
    if (missing.length > 0)
      throw new ProblemError('NOT_FOUND', `No plan ${missing.join(', ')} in project ${projectId}.`);
  }
  const taken = await couponStore.readCodes(
    runtime.store,
    principal.teamId,
    projectId,
    request.promotion_codes.map((code) => code.code),
  );
  if (taken.length > 0) throw codeTaken(taken[0].code as string);
  const discounts = discountsOf(project, options);
  const id = newUuid();
  const { promotion_codes: codeRequests, ...terms } = request;
  const coupon = {
    id,
    project_id: projectId,
    name: terms.name,
    percent_off: terms.percent_off ?? null,
    amount_off: terms.amount_off ?? null,
    currency: terms.currency ?? null,
    duration: terms.duration,
    duration_in_months: terms.duration_in_months ?? null,
    max_redemptions: terms.max_redemptions,
    redeem_by: terms.redeem_by,
    applies_to_plans: terms.applies_to_plans,
  };
  if (discounts)
    await atProvider(runtime, () =>
      discounts.createCoupon({ team_id: principal.teamId, coupon_id: id, plan_ids: terms.applies_to_plans, ...coupon }),
    );
  const codes: PromotionCode[] = [];
  for (const codeRequest of codeRequests)
    codes.push(await newPromotionCode(runtime, principal.teamId, coupon, codeRequest, discounts));
  const now = isoTime(runtime.clock.nowMs());
  const stored: StoredCoupon = {
    ...coupon,
    times_redeemed: 0,
    status: 'active',
    provider: discounts ? 'stripe' : null,
    promotion_codes: codes.map((code) => code.code),
    created_at: now,
    updated_at: now,
  };
  return unitOfWork(runtime, principal.teamId, (tx) => {
    couponStore.create(tx, principal.teamId, stored);
    for (const code of codes) couponStore.createCode(tx, principal.teamId, code, () => codeTaken(code.code));
    return { ...stored, promotion_codes: codes };
  });
}

/** The stored coupon `couponId` of a project in the principal's scope, or NOT_FOUND. */
async function findCoupon(
  store: Store,
  principal: Principal,
  projectId: string,
  couponId: string,
): Promise<StoredCoupon> {
  await loadProject(store, principal, projectId);
  const item = await couponStore.read(store, principal.teamId, projectId, couponId);
  if (!item) throw notFound(couponId);
  return storedCoupon(item);
}

/** Reads one coupon with its promotion codes. Errors: NOT_FOUND (project or coupon, of another team or scope). */
export async function getCoupon(
  store: Store,
  principal: Principal,
  projectId: string,
  couponId: string,
): Promise<Coupon> {
  return withCodes(store, principal.teamId, await findCoupon(store, principal, projectId, couponId));
}

/** One page of a project's coupons with their codes. Errors: NOT_FOUND (project), VALIDATION_FAILED (cursor). */
export async function listCoupons(
  store: Store,
  principal: Principal,
  projectId: string,
  query: { limit: number; cursor?: string },
): Promise<Page<Coupon>> {
  await loadProject(store, principal, projectId);
  const page = await couponStore.listPage(store, principal.teamId, projectId, query);
  const data = await Promise.all(page.data.map((item) => withCodes(store, principal.teamId, storedCoupon(item))));
  return { data, next_cursor: page.next_cursor };
}

/**
 * Adds a promotion code to an active coupon (at Stripe first when it bills the coupon). Errors: NOT_FOUND, CONFLICT
 * (archived coupon or project, a code the project has), VALIDATION_FAILED (Stripe's refusal), PROVIDER_UNAVAILABLE.
 */
export async function addPromotionCode(
  runtime: CouponRuntime,
  principal: Principal,
  projectId: string,
  couponId: string,
  request: CreatePromotionCodeRequest,
  options: CouponOptions,
): Promise<Coupon> {
  const project = await activeProject(runtime.store, principal, projectId);
  const coupon = await findCoupon(runtime.store, principal, projectId, couponId);
  const archived = () => new ProblemError('CONFLICT', `Coupon ${couponId} is archived: it takes no new codes.`);
  if (coupon.status !== 'active') throw archived();
  if (await couponStore.readCode(runtime.store, principal.teamId, projectId, request.code))
    throw codeTaken(request.code);
  const discounts = coupon.provider === 'stripe' ? discountsOf(project, options) : null;
  const code = await newPromotionCode(runtime, principal.teamId, coupon, request, discounts);
  await unitOfWork(runtime, principal.teamId, (tx) => {
    couponStore.createCode(tx, principal.teamId, code, () => codeTaken(code.code));
    couponStore.appendCode(tx, principal.teamId, coupon, code.code, code.created_at, archived);
  });
  return getCoupon(runtime.store, principal, projectId, couponId);
}

/**
 * Archives a coupon and its codes: no new redemptions; discounts already given keep running (Stripe keeps applied
 * discounts when its coupon is deleted). At Stripe first. Errors: NOT_FOUND, CONFLICT (already archived), PROVIDER_*.
 */
export async function archiveCoupon(
  runtime: CouponRuntime,
  principal: Principal,
  projectId: string,
  couponId: string,
  options: CouponOptions,
): Promise<Coupon> {
  const coupon = await withCodes(
    runtime.store,
    principal.teamId,
    await findCoupon(runtime.store, principal, projectId, couponId),
  );
  if (coupon.status === 'archived')
    throw new ProblemError(
      'CONFLICT',
      `Coupon ${couponId} is archived already; only an active coupon can be archived.`,
    );
  const project = toProject(await loadProject(runtime.store, principal, projectId));
  if (coupon.provider === 'stripe') {
    const discounts = discountsOf(project, options);
    const providerIds = coupon.promotion_codes.flatMap((code) => code.provider_promotion_code_id ?? []);
    if (discounts)
      await atProvider(runtime, () =>
        discounts.archive({
          team_id: principal.teamId,
          project_id: projectId,
          coupon_id: couponId,
          provider_promotion_code_ids: providerIds,
        }),
      );
  }
  const now = isoTime(runtime.clock.nowMs());
  await unitOfWork(runtime, principal.teamId, (tx) => {
    couponStore.archive(tx, keys.coupon(principal.teamId, projectId, couponId), now);
    for (const code of coupon.promotion_codes)
      couponStore.archive(tx, keys.promotionCode(principal.teamId, projectId, code.code), now);
  });
  return getCoupon(runtime.store, principal, projectId, couponId);
}

/** A project's coupon without its codes (`promotion_codes` empty), or null when there is none. */
export async function readCoupon(
  store: Store,
  teamId: string,
  projectId: string,
  couponId: string,
): Promise<Coupon | null> {
  const item = await couponStore.read(store, teamId, projectId, couponId);
  return item ? { ...storedCoupon(item), promotion_codes: [] } : null;
}

/**
 * The coupon and active-or-not promotion code a buyer typed (`text`, any case) in a project, or null when the project
 * has no such code. Two strongly consistent GetItems.
 */
export async function findPromotionCode(
  store: Store,
  teamId: string,
  projectId: string,
  text: string,
): Promise<{ coupon: Coupon; code: PromotionCode } | null> {
  const code = text.trim().toUpperCase();
  const codeItem = await couponStore.readCode(store, teamId, projectId, code);
  if (!codeItem) return null;
  const promotionCode = toPromotionCode(codeItem);
  const couponItem = await couponStore.read(store, teamId, projectId, promotionCode.coupon_id);
  if (!couponItem) return null;
  return { coupon: { ...storedCoupon(couponItem), promotion_codes: [promotionCode] }, code: promotionCode };
}
