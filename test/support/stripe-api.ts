/**
 * A loopback fake of the Stripe API (DESIGN §6: integrations are tested with their real SDKs pointed at loopback
 * fakes): the `stripe` SDK talks to it through `STRIPE_API_BASE_URL` (`IntegrationSettings. stripeApiBaseUrl` = {@link
 * FakeStripeApi.url}). It binds 127.0.0.1 on a free port and implements just what the service calls: the lists of
 * Products, Prices, Customers and Subscriptions (stripe-lists.ts), Products create (with a given `id`) and update,
 * Prices create, retrieve and update (`transfer_lookup_key` moves a lookup key), Refunds create, Subscriptions
 * retrieve, update and cancel (of subscriptions added with {@link FakeStripeApi.addSubscription}), Checkout Sessions
 * create and Billing Portal sessions create (stored, with a URL on the fake itself). Its hosted checkout page (`GET
 * /checkout/<id>`, no key) has a "Pay" form whose `POST /checkout/<id>/pay` does what Stripe does when a buyer pays: it
 * signs and delivers `checkout.session.completed` and (subscription mode) `invoice.paid` to the hook given to {@link
 * FakeStripeApi.deliverEventsTo}, makes the Stripe subscription known, and answers 303 to the session's `success_url`;
 * trials and their end are there too (stripe-hosted.ts). Form bodies are parsed with `qs` (Stripe's bracket keys:
 * `metadata[plan_id]`, `recurring[interval]`); a POST with an `Idempotency-Key` seen before answers the first response
 * again, as Stripe does.
 *
 * Keys: only keys given to {@link FakeStripeApi.addKey} are accepted (else 401 with Stripe's message,
 * which names the key masked but for its last 4 characters, as Stripe does). Every request is recorded
 * (method, path, parsed params, the idempotency key, and the ACCOUNT the key belongs to — never the key).
 * {@link FakeStripeApi.failNext} makes the next N requests (optionally of one method and path) answer a
 * 5xx, a 4xx with a Stripe error body, or drop the connection. Unref'd, so it never keeps a test process
 * alive; `stop()` closes it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import qs from 'qs';
import { fakeStripeDiscounts, type FakeStripeDiscounts } from './stripe-discounts.js';
import { fakeStripeLists, type FakeStripeLists } from './stripe-lists.js';
import { hostedStripe, type HostedStripe } from './stripe-hosted.js';

/** One recorded request. */
interface StripeApiRequest {
  method: string;
  /** The path without the query, e.g. `/v1/prices/price_3`. */
  path: string;
  /** The form body of a POST, or the query of a GET, parsed with Stripe's bracket syntax. */
  params: Record<string, any>;
  /** The `Idempotency-Key` header, if sent. */
  idempotency_key: string | null;
  /** Whether an `Authorization` header was sent. */
  authorization: boolean;
  /** The account of the key used (from {@link FakeStripeApi.addKey}), or null for an unknown key. */
  account: string | null;
}

/** A Stripe error body (`{ error: { type, code, message } }`). */
interface StripeErrorBody {
  type: string;
  code?: string;
  message: string;
}

/** How an injected failure answers: an HTTP status with a Stripe error, or a dropped connection. */
type StripeFailure = { status: number; error: StripeErrorBody } | { refuse: true };

/** A running fake Stripe API. */
export interface FakeStripeApi {
  /** The base URL to give the SDK (`http://127.0.0.1:<port>`). */
  url: string;
  /** Every request, in order. */
  requests: StripeApiRequest[];
  /** The requests of one method whose path starts with `pathPrefix`, in order. */
  requestsTo(method: string, pathPrefix: string): StripeApiRequest[];
  /** Accepts `key` from now on, as a key of `account`. */
  addKey(key: string, account?: string): void;
  /**
   * The next `times` requests (matching `method` and starting with `pathPrefix`, when given) answer `failure`.
   * A dropped connection is tried once more by the SDK itself (it re-sends once on a connection closed
   * under it), so an outage is best set with a large `times` and ended with {@link FakeStripeApi.clearFailures}.
   */
  failNext(failure: StripeFailure, options?: { times?: number; method?: string; pathPrefix?: string }): void;
  /** Ends every injected failure (Stripe is back). */
  clearFailures(): void;
  /** Stored objects: products and prices by id, refunds in order. */
  products: Map<string, Record<string, any>>;
  prices: Map<string, Record<string, any>>;
  refunds: Record<string, any>[];
  /**
   * Subscriptions by id (as Stripe returns them: `status`, `cancel_at_period_end`, `pause_collection`, `items`,
   * `metadata`).
   */
  subscriptions: Map<string, Record<string, any>>;
  /**
   * Makes Stripe subscription `id` (of `customer`, on `priceId`) known, as a completed checkout would have created it.
   */
  addSubscription(id: string, options: { priceId: string; customer?: string; status?: string }): Record<string, any>;
  /** Checkout Sessions by id, with the parameters they were created with. */
  checkoutSessions: Map<string, Record<string, any>>;
  /** Coupons and promotion codes by id. */
  discounts: Pick<FakeStripeDiscounts, 'coupons' | 'promotionCodes'>;
  /** Customers by id, and an account seeded with many of them (stripe-lists.ts). */
  customers: FakeStripeLists['customers'];
  seedAccount: FakeStripeLists['seedAccount'];
  /** Billing Portal sessions in order. */
  billingPortalSessions: Record<string, any>[];
  /** Opens an invoice of Stripe subscription `subscription` (a failed renewal); returns its hosted invoice URL. */
  openInvoice(subscription: string): string;
  /**
   * Where the hosted checkout delivers the events of a payment (the service's Stripe hook URL, or a function posting to
   * the hook in-process), signed with `webhookSecret`.
   */
  deliverEventsTo: HostedStripe['deliverEventsTo'];
  /** The events the hosted checkout delivered, in order, with the hook's answer status. */
  deliveredEvents: HostedStripe['deliveredEvents'];
  /** Pays a Checkout Session as its buyer would on the hosted page (see stripe-hosted.ts). */
  payCheckout: HostedStripe['pay'];
  /** Ends a Stripe subscription's trial now, delivering the events Stripe would (see stripe-hosted.ts). */
  endTrial: HostedStripe['endTrial'];
  /** A renewal of a Stripe subscription fails: an open invoice and `invoice.payment_failed` (see stripe-hosted.ts). */
  failRenewal: HostedStripe['failRenewal'];
  /** The buyer pays the open invoice of a failed renewal: `invoice.paid` (see stripe-hosted.ts). */
  payOpenInvoice: HostedStripe['payOpenInvoice'];
  stop(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Stripe's booleans arrive as form text. */
const bool = (value: unknown, fallback: boolean) =>
  value === undefined ? fallback : value === true || value === 'true';

/**
 * Starts the fake Stripe API on 127.0.0.1 (a free port); `options.nowMs` is its clock (default real time): give the
 * test's injected clock to move with it.
 */
export async function startFakeStripeApi(options: { nowMs?: () => number } = {}): Promise<FakeStripeApi> {
  const keys = new Map<string, string>();
  const failures: { failure: StripeFailure; times: number; method?: string; pathPrefix?: string }[] = [];
  const requests: StripeApiRequest[] = [];
  const products = new Map<string, Record<string, any>>();
  const prices = new Map<string, Record<string, any>>();
  const refunds: Record<string, any>[] = [];
  const subscriptions = new Map<string, Record<string, any>>();
  const checkoutSessions = new Map<string, Record<string, any>>();
  const billingPortalSessions: Record<string, any>[] = [];
  const openInvoices: Record<string, any>[] = [];
  let baseUrl = '';
  const idempotent = new Map<string, { status: number; body: unknown }>();
  let sequence = 0;
  const nextId = (prefix: string) => `${prefix}_fake${String(++sequence).padStart(6, '0')}`;
  const created = () => Math.floor((options.nowMs?.() ?? Date.now()) / 1000);
  const discounts = fakeStripeDiscounts(nextId, created);
  const lists = fakeStripeLists({ products, prices, subscriptions }, nextId, created);

  const addSubscription = lists.addSubscription;

  /** Opens an invoice of `subscription` that Stripe hosts (`GET /i/<id>` shows it): its id and hosted URL. */
  const openInvoice = (subscription: string) => {
    const id = nextId('in');
    const hostedUrl = `${baseUrl}/i/${id}`;
    openInvoices.push({ id, object: 'invoice', status: 'open', subscription, hosted_invoice_url: hostedUrl });
    return { id, hostedUrl };
  };

  const hosted = hostedStripe({
    prices,
    subscriptions,
    checkoutSessions,
    addSubscription,
    nextId,
    created,
    openInvoice,
    closeInvoice: (id) => {
      const index = openInvoices.findIndex((invoice) => invoice.id === id);
      if (index >= 0) openInvoices.splice(index, 1);
    },
    redeem: discounts.redeem,
    applyTypedCode: discounts.applyTypedCode,
  });

  const missing = (kind: string, id: string) => ({
    status: 404,
    body: {
      error: {
        type: 'invalid_request_error',
        code: 'resource_missing',
        param: 'id',
        message: `No such ${kind}: '${id}'`,
      },
    },
  });

  /** Answers one authorised request: status and JSON body. */
  const route = (method: string, path: string, params: Record<string, any>): { status: number; body: unknown } => {
    let match: RegExpExecArray | null;
    const discounted = discounts.route(method, path, params) ?? lists.route(method, path, params);
    if (discounted) return discounted;
    if (method === 'GET' && path === '/v1/invoices') {
      const data = openInvoices.filter(
        (invoice) => invoice.subscription === params.subscription && (!params.status || params.status === 'open'),
      );
      return { status: 200, body: { object: 'list', data, has_more: false, url: '/v1/invoices' } };
    }
    if (method === 'POST' && path === '/v1/products') {
      const id = (params.id as string | undefined) ?? nextId('prod');
      const exists = {
        type: 'invalid_request_error',
        code: 'resource_already_exists',
        message: 'Product already exists.',
      };
      if (products.has(id)) return { status: 400, body: { error: exists } };
      const product = {
        id,
        object: 'product',
        name: params.name,
        description: params.description || null,
        active: bool(params.active, true),
        metadata: params.metadata ?? {},
        livemode: false,
        created: created(),
      };
      products.set(id, product);
      return { status: 200, body: product };
    }
    if ((match = /^\/v1\/products\/([^/]+)$/.exec(path)) && method === 'POST') {
      const product = products.get(match[1]);
      if (!product) return missing('product', match[1]);
      if (params.name !== undefined) product.name = params.name;
      if (params.description !== undefined) product.description = params.description || null;
      if (params.active !== undefined) product.active = bool(params.active, true);
      if (params.metadata !== undefined) product.metadata = { ...product.metadata, ...params.metadata };
      return { status: 200, body: product };
    }
    if (method === 'POST' && path === '/v1/prices') {
      if (!products.has(params.product)) return missing('product', String(params.product));
      if (params.lookup_key && bool(params.transfer_lookup_key, false)) {
        for (const other of prices.values()) if (other.lookup_key === params.lookup_key) other.lookup_key = null;
      }
      const price = {
        id: nextId('price'),
        object: 'price',
        product: params.product,
        currency: params.currency,
        unit_amount: Number(params.unit_amount),
        recurring: params.recurring
          ? { interval: params.recurring.interval, interval_count: Number(params.recurring.interval_count ?? 1) }
          : null,
        type: params.recurring ? 'recurring' : 'one_time',
        active: true,
        lookup_key: params.lookup_key ?? null,
        metadata: params.metadata ?? {},
        livemode: false,
        created: created(),
      };
      prices.set(price.id, price);
      return { status: 200, body: price };
    }
    if ((match = /^\/v1\/prices\/([^/]+)$/.exec(path))) {
      const price = prices.get(match[1]);
      if (!price) return missing('price', match[1]);
      if (method === 'POST') {
        if (params.active !== undefined) price.active = bool(params.active, true);
        if (params.metadata !== undefined) price.metadata = { ...price.metadata, ...params.metadata };
      }
      return { status: 200, body: price };
    }
    if (method === 'POST' && path === '/v1/refunds') {
      const refund = {
        id: nextId('re'),
        object: 'refund',
        amount: Number(params.amount),
        payment_intent: params.payment_intent,
        status: 'succeeded',
        metadata: params.metadata ?? {},
        created: created(),
      };
      refunds.push(refund);
      return { status: 200, body: refund };
    }
    if ((match = /^\/v1\/subscriptions\/([^/]+)$/.exec(path))) {
      const subscription = subscriptions.get(match[1]);
      if (!subscription) return missing('subscription', match[1]);
      if (method === 'DELETE') {
        if (subscription.status === 'canceled')
          return {
            status: 400,
            body: {
              error: {
                type: 'invalid_request_error',
                code: 'resource_missing',
                message: `No such subscription: '${match[1]}'`,
              },
            },
          };
        Object.assign(subscription, { status: 'canceled', canceled_at: created() });
      } else if (method === 'POST') {
        if (subscription.status === 'canceled') {
          return {
            status: 400,
            body: {
              error: {
                type: 'invalid_request_error',
                message: 'A canceled subscription can only update its cancellation_details and metadata.',
              },
            },
          };
        }
        if (params.cancel_at_period_end !== undefined)
          subscription.cancel_at_period_end = bool(params.cancel_at_period_end, false);
        if (params.pause_collection !== undefined)
          subscription.pause_collection =
            params.pause_collection === '' ? null : { behavior: params.pause_collection.behavior, resumes_at: null };
        if (params.metadata !== undefined) subscription.metadata = { ...subscription.metadata, ...params.metadata };
        if (params.proration_behavior !== undefined) subscription.last_proration_behavior = params.proration_behavior;
        for (const item of (params.items ?? []) as Record<string, any>[]) {
          const price = prices.get(item.price) ?? { id: item.price };
          const existing = subscription.items.data.find((entry: Record<string, any>) => entry.id === item.id);
          if (existing) existing.price = price;
          else subscription.items.data.push({ id: nextId('si'), object: 'subscription_item', price });
        }
      }
      return { status: 200, body: subscription };
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      const id = nextId('cs_test');
      const session = {
        id,
        object: 'checkout.session',
        status: 'open',
        url: `${baseUrl}/checkout/${id}`,
        expires_at: created() + 24 * 3600,
        created: created(),
        ...params,
      };
      checkoutSessions.set(id, session);
      return { status: 200, body: session };
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      const session = {
        id: nextId('bps'),
        object: 'billing_portal.session',
        customer: params.customer,
        return_url: params.return_url,
        url: `${baseUrl}/billing-portal/${nextId('p')}`,
        created: created(),
      };
      billingPortalSessions.push(session);
      return { status: 200, body: session };
    }
    return {
      status: 404,
      body: { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` } },
    };
  };

  /** Stripe's hosted invoice page (`/i/{id}`): a page naming the invoice, or 404. */
  const hostedInvoice = (path: string, response: ServerResponse): boolean => {
    const match = /^\/i\/([^/]+)$/.exec(path);
    if (!match) return false;
    const found = openInvoices.find((invoice) => invoice.id === match[1]);
    response
      .writeHead(found ? 200 : 404, { 'Content-Type': 'text/html; charset=utf-8' })
      .end(
        found ? `<!doctype html><title>Invoice ${found.id}</title><h1>Pay invoice ${found.id}</h1>` : 'No such invoice',
      );
    return true;
  };

  const server: Server = createServer((request, response) => {
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { 'Content-Type': 'application/json', 'Request-Id': `req_fake${sequence}` });
      response.end(JSON.stringify(body));
    };
    readBody(request).then(
      (text) => {
        const url = new URL(request.url ?? '/', 'http://fake');
        const method = request.method ?? 'GET';
        if (hosted.serve(method, url.pathname, text, response)) return;
        if (method === 'GET' && hostedInvoice(url.pathname, response)) return;
        const params = qs.parse(method === 'GET' ? url.search.slice(1) : text, {
          depth: 10,
          arrayLimit: 100,
        }) as Record<string, any>;
        const authorization = request.headers.authorization;
        const key = authorization?.startsWith('Bearer ') ? authorization.slice(7) : null;
        const account = key !== null ? (keys.get(key) ?? null) : null;
        const idempotencyKey = (request.headers['idempotency-key'] as string | undefined) ?? null;
        requests.push({
          method,
          path: url.pathname,
          params,
          idempotency_key: idempotencyKey,
          authorization: authorization !== undefined,
          account,
        });
        const failure = failures.find(
          (entry) =>
            entry.times > 0 &&
            (!entry.method || entry.method === method) &&
            (!entry.pathPrefix || url.pathname.startsWith(entry.pathPrefix)),
        );
        if (failure) {
          failure.times--;
          if ('refuse' in failure.failure) {
            request.socket.destroy();
            return;
          }
          return answer(failure.failure.status, { error: failure.failure.error });
        }
        if (account === null) {
          const shown = key
            ? `${key.slice(0, key.indexOf('_', 3) + 1)}${'*'.repeat(Math.max(0, key.length - 12))}${key.slice(-4)}`
            : '';
          return answer(401, {
            error: {
              type: 'invalid_request_error',
              message: key ? `Invalid API Key provided: ${shown}` : 'You did not provide an API key.',
            },
          });
        }
        const cacheKey = method === 'POST' && idempotencyKey ? `${account}:${idempotencyKey}` : null;
        const replay = cacheKey ? idempotent.get(cacheKey) : undefined;
        if (replay) return answer(replay.status, replay.body);
        const result = route(method, url.pathname, params);
        if (cacheKey && result.status < 500) idempotent.set(cacheKey, result);
        return answer(result.status, result.body);
      },
      () => answer(400, { error: { type: 'invalid_request_error', message: 'Unreadable body.' } }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}`;
  return {
    url: baseUrl,
    requests,
    requestsTo: (method, pathPrefix) =>
      requests.filter((entry) => entry.method === method && entry.path.startsWith(pathPrefix)),
    addKey: (key, account = 'acct_fake') => void keys.set(key, account),
    failNext: (failure, options = {}) =>
      void failures.push({
        failure,
        times: options.times ?? 1,
        method: options.method,
        pathPrefix: options.pathPrefix,
      }),
    clearFailures: () => void failures.splice(0),
    products,
    prices,
    refunds,
    subscriptions,
    addSubscription,
    checkoutSessions,
    discounts,
    customers: lists.customers,
    seedAccount: lists.seedAccount,
    billingPortalSessions,
    openInvoice: (subscription) => openInvoice(subscription).hostedUrl,
    deliverEventsTo: hosted.deliverEventsTo,
    deliveredEvents: hosted.deliveredEvents,
    payCheckout: hosted.pay,
    endTrial: hosted.endTrial,
    failRenewal: hosted.failRenewal,
    payOpenInvoice: hosted.payOpenInvoice,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
