/**
 * The fake Stripe API's list endpoints and its customers (used by `stripe-api.ts`): `GET /v1/products`, `/v1/prices`
 * (`expand[]=data.product` embeds the Product), `/v1/customers` and `/v1/subscriptions` (`status=all`, else without
 * canceled ones; `price`: those with an item of that price) with Stripe's pagination (`limit` 1–100, default 10;
 * `starting_after`; `has_more`), in creation order.
 * {@link FakeStripeLists.addSubscription} makes one Stripe subscription known (as a checkout would);
 * {@link FakeStripeLists.seedAccount} fills an account the way a creator's existing Stripe account looks: a few
 * products and prices and many customers, each with one subscription in a mix of statuses.
 */

type Answer = { status: number; body: unknown };

/** The mix of subscription states {@link FakeStripeLists.seedAccount} cycles through (Stripe's fields). */
const SEEDED_STATES = [
  { status: 'active' },
  { status: 'trialing' },
  { status: 'past_due' },
  { status: 'active', cancel_at_period_end: true },
  { status: 'active', pause_collection: { behavior: 'void', resumes_at: null } },
  { status: 'canceled' },
  { status: 'unpaid' },
  { status: 'incomplete' },
] as const;

/** A seeded account: its recurring prices, its skipped one-time price and its customers' ids. */
export interface SeededAccount {
  prices: string[];
  oneTimePrice: string;
  customers: string[];
  subscriptions: string[];
}

/** The list endpoints and customers of one fake Stripe API. */
export interface FakeStripeLists {
  customers: Map<string, Record<string, any>>;
  /** Answers a list request, or null for any other. */
  route: (method: string, path: string, params: Record<string, any>) => Answer | null;
  /**
   * Adds 3 recurring prices (monthly, yearly, weekly; on 2 products) and one one-time price, then `count` customers,
   * customer `i` with one subscription in state `SEEDED_STATES[i % 8]`, periods of 30 days started `i % 20` days ago.
   */
  seedAccount: (count: number) => SeededAccount;
  /**
   * Makes Stripe subscription `id` (of `customer`, on `priceId`) known, as a completed checkout would have created it.
   */
  addSubscription: (
    id: string,
    options: { priceId: string; customer?: string; status?: string },
  ) => Record<string, any>;
}

/** The list routes over `stores` (the fake's maps); `nextId` makes ids, `created` unix seconds. */
export function fakeStripeLists(
  stores: {
    products: Map<string, Record<string, any>>;
    prices: Map<string, Record<string, any>>;
    subscriptions: Map<string, Record<string, any>>;
  },
  nextId: (prefix: string) => string,
  created: () => number,
): FakeStripeLists {
  const customers = new Map<string, Record<string, any>>();
  const lists: Record<string, () => Record<string, any>[]> = {
    '/v1/products': () => [...stores.products.values()],
    '/v1/prices': () => [...stores.prices.values()],
    '/v1/customers': () => [...customers.values()],
    '/v1/subscriptions': () => [...stores.subscriptions.values()],
  };

  const route = (method: string, path: string, params: Record<string, any>): Answer | null => {
    const all = method === 'GET' ? lists[path] : undefined;
    if (!all) return null;
    let objects = all();
    if (path === '/v1/subscriptions' && params.status !== 'all')
      objects = objects.filter((subscription) =>
        params.status ? subscription.status === params.status : subscription.status !== 'canceled',
      );
    if (path === '/v1/subscriptions' && params.price)
      objects = objects.filter((subscription) =>
        subscription.items.data.some((item: { price: { id: string } }) => item.price.id === params.price),
      );
    const limit = Math.min(100, Math.max(1, Number(params.limit ?? 10)));
    const start = params.starting_after ? objects.findIndex((object) => object.id === params.starting_after) + 1 : 0;
    if (params.starting_after && start === 0)
      return {
        status: 400,
        body: { error: { type: 'invalid_request_error', message: `No such object: '${params.starting_after}'` } },
      };
    const expandProduct = path === '/v1/prices' && [params.expand ?? []].flat().includes('data.product');
    const data = objects
      .slice(start, start + limit)
      .map((object) =>
        expandProduct ? { ...object, product: stores.products.get(object.product) ?? object.product } : object,
      );
    return { status: 200, body: { object: 'list', data, has_more: start + limit < objects.length, url: path } };
  };

  const addSubscription = (id: string, options: { priceId: string; customer?: string; status?: string }) => {
    const subscription = {
      id,
      object: 'subscription',
      customer: options.customer ?? nextId('cus'),
      status: options.status ?? 'active',
      cancel_at_period_end: false,
      cancel_at: null,
      canceled_at: null,
      pause_collection: null,
      metadata: {},
      items: {
        object: 'list',
        data: [
          {
            id: nextId('si'),
            object: 'subscription_item',
            price: stores.prices.get(options.priceId) ?? { id: options.priceId },
          },
        ],
        has_more: false,
      },
      created: created(),
    };
    stores.subscriptions.set(id, subscription);
    return subscription;
  };

  const product = (name: string) => {
    const item = { id: nextId('prod'), object: 'product', name, active: true, metadata: {}, created: created() };
    stores.products.set(item.id, item);
    return item.id;
  };
  const price = (productId: string, amount: number, recurring: Record<string, any> | null) => {
    const item = {
      id: nextId('price'),
      object: 'price',
      product: productId,
      currency: 'usd',
      unit_amount: amount,
      billing_scheme: 'per_unit',
      nickname: null,
      recurring: recurring && { interval_count: 1, usage_type: 'licensed', trial_period_days: null, ...recurring },
      type: recurring ? 'recurring' : 'one_time',
      active: true,
      metadata: {},
      created: created(),
    };
    stores.prices.set(item.id, item);
    return item;
  };

  const seedAccount = (count: number): SeededAccount => {
    const club = product('Supporters club');
    const workshop = product('Weekly workshop');
    const prices = [price(club, 900, { interval: 'month' }), price(club, 9000, { interval: 'year' })];
    prices.push(price(workshop, 500, { interval: 'week' }));
    const oneTime = price(workshop, 2500, null);
    const now = created();
    const seeded: SeededAccount = {
      prices: prices.map((item) => item.id),
      oneTimePrice: oneTime.id,
      customers: [],
      subscriptions: [],
    };
    for (let index = 0; index < count; index++) {
      const customer = {
        id: nextId('cus'),
        object: 'customer',
        email: `member${index}@example.com`,
        name: `Member ${index}`,
        metadata: {},
        created: now,
      };
      customers.set(customer.id, customer);
      const state = SEEDED_STATES[index % SEEDED_STATES.length];
      const periodStart = now - (index % 20) * 86_400;
      const periodEnd = periodStart + 30 * 86_400;
      const subscription = {
        id: nextId('sub'),
        object: 'subscription',
        customer: customer.id,
        status: state.status,
        cancel_at_period_end: 'cancel_at_period_end' in state,
        cancel_at: null,
        canceled_at: state.status === 'canceled' ? now : null,
        pause_collection: 'pause_collection' in state ? state.pause_collection : null,
        start_date: periodStart,
        trial_start: state.status === 'trialing' ? periodStart : null,
        trial_end: state.status === 'trialing' ? periodEnd : null,
        metadata: {},
        items: {
          object: 'list',
          data: [
            {
              id: nextId('si'),
              object: 'subscription_item',
              price: prices[index % prices.length],
              current_period_start: periodStart,
              current_period_end: periodEnd,
            },
          ],
          has_more: false,
        },
        created: periodStart,
      };
      stores.subscriptions.set(subscription.id, subscription);
      seeded.customers.push(customer.id);
      seeded.subscriptions.push(subscription.id);
    }
    return seeded;
  };

  return { customers, route, seedAccount, addSubscription };
}
