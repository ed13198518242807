import type { Principal } from '../../auth/principal.js';
import { CONNECTABLE_PAYMENT_PROVIDERS, isConnectablePaymentProvider } from '../../catalogues/payment-providers.js';
import { isoTime } from '../../clock.js';
import { deleteCredential, putCredential, sealCredential } from '../../credentials/repository.js';
import { ProblemError, type FieldError } from '../../errors.js';
import { integrationsOf, type IntegrationRuntime } from '../../integrations.js';
import { STRIPE_CREDENTIAL, verifyStripeKey } from '../../providers/stripe.js';
import { isLiveModeKey } from '../../providers/stripe-keys.js';
import type { Transaction, UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { archivedConflict, changeProject } from './changes.js';
import { liveSubscriptionsOf, loadProject, toProject } from './repository.js';
import type { ConnectPaymentProviderRequest, Project, ProjectPaymentProvider } from './schema.js';

/**
 * A project's payment-provider connection (DESIGN D16, D22): connecting `manual` or `stripe`
 * (whose key is checked with Stripe and whose secrets are stored as the project's `stripe` credential)
 * and disconnecting. Kept apart from the other project modules, so only these two routes carry the
 * Stripe SDK for the connection check (DESIGN D23).
 */

/** The credential fields of a connection request, by the providers that need them. */
const STRIPE_FIELDS = ['secret_key', 'webhook_secret'] as const;

/**
 * Checks that `input` carries exactly what its provider needs: `stripe` both `secret_key` and
 * `webhook_secret`; `manual` neither. Errors: VALIDATION_FAILED naming each missing or refused field
 * (never its value).
 */
function requireProviderFields(input: ConnectPaymentProviderRequest): void {
  const errors: FieldError[] = [];
  if (input.provider === 'stripe') {
    for (const field of STRIPE_FIELDS)
      if (input[field] === undefined) errors.push({ path: field, message: 'is required to connect stripe' });
    if (errors.length) {
      throw new ProblemError(
        'VALIDATION_FAILED',
        'Connecting stripe needs secret_key (a restricted key rk_... or secret key sk_...) and webhook_secret (the whsec_... signing secret of the Stripe webhook endpoint).',
        { errors },
      );
    }
    return;
  }
  for (const field of STRIPE_FIELDS)
    if (input[field] !== undefined)
      errors.push({ path: field, message: `is only for stripe; ${input.provider} takes no credentials` });
  if (errors.length)
    throw new ProblemError(
      'VALIDATION_FAILED',
      `${input.provider} takes no credentials: leave out ${errors.map((error) => error.path).join(' and ')}.`,
      { errors },
    );
}

/**
 * Connects a payment provider (D16) with `project.payment_provider_connected` (never a secret). `stripe`: key checked
 * by one call outside the transaction, secrets sealed; re-connecting rotates keys (`project.updated` only on a
 * live/test change). Errors: NOT_FOUND, VALIDATION_FAILED (key redacted), CONFLICT, PROVIDER_UNAVAILABLE (502,
 * unchanged).
 */
export async function connectPaymentProvider(
  runtime: UnitOfWorkRuntime & IntegrationRuntime,
  principal: Principal,
  projectId: string,
  input: ConnectPaymentProviderRequest,
): Promise<Project> {
  const provider = input.provider;
  if (!isConnectablePaymentProvider(provider)) {
    throw new ProblemError(
      'VALIDATION_FAILED',
      `${String(provider)} cannot be connected yet; connectable providers: ${CONNECTABLE_PAYMENT_PROVIDERS.join(', ')}.`,
      {
        errors: [{ path: 'provider', message: `connectable providers: ${CONNECTABLE_PAYMENT_PROVIDERS.join(', ')}` }],
      },
    );
  }
  requireProviderFields(input);
  const refuse = (project: Project): void => {
    if (project.status === 'archived') throw archivedConflict(project, 'connecting a payment provider');
    const current = project.payment_provider;
    if (current && current.provider !== provider) {
      throw new ProblemError(
        'CONFLICT',
        `Project ${projectId} already has ${current.provider} connected; disconnect it first (DELETE /v1/projects/${projectId}/payment-provider).`,
      );
    }
  };
  // Refusals that need no provider call come first: a refused request never reaches Stripe.
  refuse(toProject(await loadProject(runtime.store, principal, projectId)));

  let writes: ((tx: Transaction) => void) | undefined;
  let livemode: boolean | null = null;
  if (provider === 'stripe') {
    const secretKey = input.secret_key!;
    const settings = integrationsOf(runtime);
    const verified = await verifyStripeKey(settings, secretKey);
    if (!verified.ok) {
      if (verified.retryable)
        throw new ProblemError('PROVIDER_UNAVAILABLE', `${verified.reason} Nothing was changed; retry later.`);
      throw new ProblemError('VALIDATION_FAILED', verified.reason, {
        errors: [
          {
            path: 'secret_key',
            message: verified.code ? `Stripe refused this key (${verified.code})` : 'Stripe refused this key',
          },
        ],
      });
    }
    livemode = isLiveModeKey(secretKey);
    const ref = { teamId: principal.teamId, projectId, kind: STRIPE_CREDENTIAL };
    const credential = await sealCredential(
      settings.keyEncryptionKey,
      ref,
      { secret_key: secretKey, webhook_secret: input.webhook_secret! },
      { livemode: String(livemode) },
      isoTime(runtime.clock.nowMs()),
    );
    writes = (tx) => putCredential(tx, credential);
  }

  return changeProject(runtime, principal, projectId, (project, _item, nowIso) => {
    refuse(project);
    const current = project.payment_provider;
    if (current) {
      if (current.livemode === livemode) return { writes, result: (next) => next };
      const changed: ProjectPaymentProvider = { ...current, livemode };
      return {
        set: { payment_provider: changed },
        writes,
        events: [{ type: 'project.updated', data: (next) => ({ project: next }) }],
        result: (next) => next,
      };
    }
    return {
      set: { payment_provider: { provider, connected_at: nowIso, livemode } },
      writes,
      events: [
        { type: 'project.payment_provider_connected', data: (next) => ({ project: next, payment_provider: provider }) },
      ],
      result: (next) => next,
    };
  });
}

/**
 * Disconnects the project's payment provider (`DELETE /v1/projects/{id}/payment-provider`) and emits
 * `project.payment_provider_disconnected`; Stripe's stored credential is deleted in the same transaction
 * (nothing is called at Stripe: the webhook endpoint there is the creator's to remove).
 * Errors: NOT_FOUND; CONFLICT (none connected, or live subscriptions still billed through it — checked
 * in the transaction).
 */
export async function disconnectPaymentProvider(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
): Promise<Project> {
  return changeProject(runtime, principal, projectId, (project, item) => {
    const current = project.payment_provider;
    if (!current) throw new ProblemError('CONFLICT', `Project ${projectId} has no payment provider connected.`);
    const live = liveSubscriptionsOf(item);
    if (live > 0)
      throw new ProblemError(
        'CONFLICT',
        `Project ${projectId} has ${live} live subscription(s) billed through ${current.provider}; they must end before it can be disconnected.`,
      );
    return {
      set: { payment_provider: null },
      noLiveSubscriptions: true,
      writes: current.provider === 'stripe' ? (tx) => deleteCredential(tx, projectId, STRIPE_CREDENTIAL) : undefined,
      events: [
        {
          type: 'project.payment_provider_disconnected',
          data: (next) => ({ project: next, payment_provider: current.provider }),
        },
      ],
      result: (next) => next,
    };
  });
}
