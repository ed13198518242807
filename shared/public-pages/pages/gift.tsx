/** @jsx h */
/** @jsxFrag Fragment */
import { timingSafeEqual } from 'node:crypto';
import { IdempotencyField } from '../../web/components.js';
import { Fragment, h, type Html } from '../../web/html.js';
import { formText } from '../../web/request.js';
import { htmlResult, redirectResult } from '../../web/results.js';
import { runPublicOperation } from '../operations.js';
import { dayIn } from '../../domain/gifts/dates.js';
import type { StoredGift } from '../../domain/gifts/record.js';
import { MAX_GIFT_DELAY_DAYS, MAX_GIFT_MESSAGE_LENGTH, type GiftCheckoutSession } from '../../domain/gifts/schema.js';
import type { Plan } from '../../domain/plans/schema.js';
import type { Project } from '../../domain/projects/schema.js';
import { ProblemError, toProblem } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { giftStore } from '../../store/gifts.js';
import { DAY_MS } from '../../clock.js';
import { JOIN_PATH, type PublicRequest } from '../http.js';
import { activePlans, type JoinContext } from '../join-context.js';
import { joinKind, joinPage } from './join.js';
import { MemberPage, NotFoundPage } from './layout.js';

/**
 * Gifts on the join page (DESIGN D33): a "Give as a gift" form per Stripe-synced paid plan, its POST (the
 * `createGiftCheckoutSession` operation as the join principal, then 303 to Stripe Checkout) and the buyer's receipt
 * page `/join/{project_id}/gifts/{gift_id}?session_id=` (the Checkout Session id Stripe sends the buyer back with is
 * the credential: any other answers the one 404).
 */

/** The "Give as a gift" form of one plan (delivery date: today in the project's time zone up to a year ahead). */
export function GiftForm(props: { project: Project; plan: Plan; csrf: string; nowMs: number }): Html {
  const { project, plan } = props;
  const id = (field: string) => `gift-${field}-${plan.id}`;
  const today = dayIn(props.nowMs, project.time_zone);
  const last = dayIn(props.nowMs + MAX_GIFT_DELAY_DAYS * DAY_MS, project.time_zone);
  return (
    <details>
      <summary>Give as a gift</summary>
      <form method="post" action={`${JOIN_PATH}/${project.id}/plans/${plan.id}/gift`}>
        <input type="hidden" name="csrf_token" value={props.csrf} />
        <IdempotencyField />
        <div>
          <label for={id('buyer')}>Your e-mail address</label>
          <input type="email" id={id('buyer')} name="buyer_email" required maxlength="254" autocomplete="email" />
        </div>
        <div>
          <label for={id('recipient')}>Their e-mail address</label>
          <input type="email" id={id('recipient')} name="recipient_email" required maxlength="254" />
        </div>
        <div>
          <label for={id('date')}>Deliver on</label>
          <input type="date" id={id('date')} name="deliver_on" value={today} min={today} max={last} required />
        </div>
        <div>
          <label for={id('message')}>Message (optional)</label>
          <textarea id={id('message')} name="message" maxlength={String(MAX_GIFT_MESSAGE_LENGTH)} rows="3"></textarea>
        </div>
        <button type="submit">Buy {plan.name} as a gift</button>
      </form>
    </details>
  );
}

/**
 * `POST /join/{project_id}/plans/{plan_id}/gift`: starts the gift's checkout and answers 303 to Stripe's page; a plan
 * that cannot be sold through Checkout answers the join page with the problem.
 */
export async function startGiftPurchase(
  request: PublicRequest,
  context: JoinContext,
  planId: string,
): Promise<ApiGatewayResult> {
  const plan = (await activePlans(context, request)).find((candidate) => candidate.id === planId);
  if (!plan || joinKind(context.project, plan) !== 'checkout')
    return joinPage(
      request,
      context,
      toProblem(new ProblemError('NOT_FOUND', 'This plan cannot be given as a gift here.'), request.requestId).problem,
    );
  const joinUrl = `${request.relyingParty.origin}${JOIN_PATH}/${context.project.id}`;
  const message = formText(request.form, 'message');
  const outcome = await runPublicOperation<GiftCheckoutSession>(
    request,
    context.principal,
    'createGiftCheckoutSession',
    {
      id: plan.id,
      buyer_email: formText(request.form, 'buyer_email'),
      recipient_email: formText(request.form, 'recipient_email'),
      deliver_on: formText(request.form, 'deliver_on') || undefined,
      ...(message ? { message } : {}),
      cancel_url: joinUrl,
    },
    request.form.get('idempotency_key') ?? undefined,
  );
  if (!outcome.ok) return joinPage(request, context, outcome.problem);
  return redirectResult(outcome.result.url);
}

/** True when `given` is the gift's Checkout Session id (compared in constant time). */
function sameSession(gift: StoredGift, given: string | null): boolean {
  const expected = gift.provider_checkout_session_id;
  if (!expected || !given || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

/** A time as a date people read in the project's time zone. */
function formatDay(iso: string, timeZone: string): string {
  return new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeZone }).format(new Date(iso));
}

/** What the receipt says of the gift's state; the code only while no e-mail carried it. */
function GiftState(props: { gift: StoredGift; project: Project }): Html {
  const { gift, project } = props;
  const day = formatDay(gift.deliver_at, project.time_zone);
  if (gift.status === 'pending_payment')
    return <p role="status">Waiting for your payment to be confirmed. Reload this page in a moment.</p>;
  if (gift.status === 'canceled') return <p>This gift was canceled.</p>;
  if (gift.status === 'paid')
    return (
      <p>
        Paid. {gift.recipient_email} will get the gift by e-mail on {day}.
      </p>
    );
  if (gift.code)
    return (
      <>
        <p>Your gift is ready, but it could not be e-mailed. Pass this one-use code on to {gift.recipient_email}:</p>
        <p>
          <strong>
            <code>{gift.code}</code>
          </strong>
        </p>
        <p class="hint">
          They redeem it on <a href={`${JOIN_PATH}/${project.id}`}>the join page</a> with their e-mail address.
        </p>
      </>
    );
  return <p>Delivered: {gift.recipient_email} got the gift by e-mail.</p>;
}

/** `GET /join/{project_id}/gifts/{gift_id}?session_id=`: the buyer's receipt (404 without the right session id). */
export async function giftReceiptPage(
  request: PublicRequest,
  context: JoinContext,
  giftId: string,
): Promise<ApiGatewayResult> {
  const gift = await giftStore.read(request.runtime.store, context.teamId, context.project.id, giftId);
  if (!gift || !sameSession(gift, request.query.get('session_id'))) return htmlResult(404, NotFoundPage());
  return htmlResult(
    200,
    <MemberPage title="Your gift" site={context.project.name}>
      <p>
        Thank you for giving {gift.recipient_email} a membership of {context.project.name}.
      </p>
      <GiftState gift={gift} project={context.project} />
    </MemberPage>,
  );
}
