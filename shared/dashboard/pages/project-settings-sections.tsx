/** @jsx h */
/** @jsxFrag Fragment */
import { PAYMENT_PROVIDERS } from '../../catalogues/payment-providers.js';
import { isConnectablePlatform, resourceKindsOf } from '../../catalogues/platform-types.js';
import type { ProblemDocument } from '../../errors.js';
import type { Project } from '../../domain/projects/schema.js';
import { Badge, CsrfField, DataTable, IdempotencyField, ProblemView, When, type Viewer } from '../components.js';
import { ActionButton, ActionForm } from '../form-controls.js';
import { Fragment, h, type Html } from '../../web/html.js';

/**
 * The parts of a project's settings page (DESIGN D16, D22, D26): which section a refused form belongs to, the copy
 * field, secret inputs, and the bot, payment provider and linked resources sections.
 */

/** Which section of the settings page a problem belongs to. */
export type SettingsSection = 'details' | 'bot' | 'provider' | 'resources';

/**
 * What the settings page shows besides the project: a notice, or a refused form's problem and its non-secret values.
 */
export interface SettingsExtra {
  notice?: Html;
  problem?: ProblemDocument;
  at?: SettingsSection;
  values?: Record<string, string | undefined>;
}

/**
 * A read-only text field with a Copy button (the dashboard script copies it; without the script the text can be
 * selected). A text area that wraps, so a long link shows whole on a phone.
 */
export function CopyField(props: { id: string; label: string; value: string; hint?: string }): Html {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <div class="secret">
        <textarea id={props.id} class="copy-value" rows="2" readonly>
          {props.value}
        </textarea>
        <button type="button" class="secondary" data-copy={props.id} aria-label={`Copy ${props.label.toLowerCase()}`}>
          Copy
        </button>
      </div>
      {props.hint ? <span class="hint">{props.hint}</span> : ''}
    </div>
  );
}

/** The problem of `section`, when the refused form was that one. */
export function ProblemAt(props: { extra?: SettingsExtra; section: SettingsSection }): Html {
  return props.extra?.problem && props.extra.at === props.section ? (
    <ProblemView problem={props.extra.problem} />
  ) : (
    <></>
  );
}

/** A password field that never carries a value back (write-only secrets). */
function SecretInput(props: { id: string; name: string; label: string; hint?: string; required?: boolean }): Html {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <input type="password" id={props.id} name={props.name} autocomplete="off" required={props.required ?? true} />
      {props.hint ? <span class="hint">{props.hint}</span> : ''}
    </div>
  );
}

/** The bot section: the connected bot, or the form that connects one (secrets never written back). */
export function BotSection(props: { viewer: Viewer; project: Project; extra?: SettingsExtra }): Html {
  const { project, viewer } = props;
  const base = `/dashboard/projects/${project.id}`;
  const values = props.extra?.at === 'bot' ? (props.extra.values ?? {}) : {};
  const discord = project.platform_type === 'discord';
  return (
    <section aria-labelledby="bot-heading">
      <h2 id="bot-heading">Bot</h2>
      <ProblemAt extra={props.extra} section="bot" />
      {project.bot ? (
        <>
          <p id="project-bot">
            <Badge color="green">connected</Badge>{' '}
            {project.bot.username ? `@${project.bot.username}` : project.bot.platform_bot_id} since{' '}
            <When at={project.bot.connected_at} />
          </p>
          <ActionForm
            viewer={viewer}
            action={`${base}/bot/disconnect`}
            ability="project:connect-bot"
            label="Disconnect the bot"
            secondary
          />
        </>
      ) : (
        <p id="project-bot">
          <Badge color="gray">not connected</Badge>
        </p>
      )}
      {!isConnectablePlatform(project.platform_type) ? (
        <p class="hint">A bot of this platform cannot be connected yet.</p>
      ) : (
        <form method="post" action={`${base}/bot`} class="stack" id="bot-form">
          <CsrfField viewer={viewer} />
          <IdempotencyField />
          <input type="hidden" name="platform" value={discord ? 'discord' : 'telegram'} />
          <SecretInput
            id="bot-token"
            name="token"
            label="Bot token"
            hint={
              discord
                ? 'The bot token of the Discord Developer Portal.'
                : 'The token @BotFather gave you (<bot id>:<secret>).'
            }
          />
          {discord ? (
            <>
              <div>
                <label for="bot-application-id">Application id</label>
                <input
                  type="text"
                  id="bot-application-id"
                  name="application_id"
                  required
                  inputmode="numeric"
                  value={values.application_id ?? ''}
                />
              </div>
              <div>
                <label for="bot-public-key">Public key</label>
                <input type="text" id="bot-public-key" name="public_key" required value={values.public_key ?? ''} />
              </div>
              <SecretInput
                id="bot-client-secret"
                name="client_secret"
                label="Client secret"
                hint="OAuth2 client secret (members link their Discord account with it)."
              />
            </>
          ) : (
            ''
          )}
          <div class="actions">
            <ActionButton
              viewer={viewer}
              ability="project:connect-bot"
              label={project.bot ? 'Replace the bot' : 'Connect the bot'}
            />
          </div>
        </form>
      )}
    </section>
  );
}

/**
 * The payment provider section: the connected provider with the Stripe webhook URL to paste, or the forms that connect
 * one.
 */
export function ProviderSection(props: {
  viewer: Viewer;
  project: Project;
  extra?: SettingsExtra;
  webhookUrl: string;
}): Html {
  const { project, viewer } = props;
  const base = `/dashboard/projects/${project.id}`;
  const connected = project.payment_provider;
  return (
    <section aria-labelledby="provider-heading">
      <h2 id="provider-heading">Payment provider</h2>
      <ProblemAt extra={props.extra} section="provider" />
      {connected ? (
        <>
          <p id="project-provider">
            <Badge color="green">
              {PAYMENT_PROVIDERS.find((provider) => provider.value === connected.provider)?.label ?? connected.provider}
            </Badge>
            {connected.livemode === null ? '' : connected.livemode ? ' live mode' : ' test mode'} since{' '}
            <When at={connected.connected_at} />
          </p>
          <ActionForm
            viewer={viewer}
            action={`${base}/payment-provider/disconnect`}
            ability="project:update"
            label="Disconnect the payment provider"
            secondary
          />
        </>
      ) : (
        <p id="project-provider">
          <Badge color="gray">none</Badge>
        </p>
      )}
      <h3>Stripe</h3>
      <CopyField
        id="stripe-webhook-url"
        label="Webhook URL"
        value={props.webhookUrl}
        hint="In Stripe, add a webhook endpoint with this URL, then paste its signing secret below."
      />
      <form method="post" action={`${base}/payment-provider`} class="stack" id="stripe-form">
        <CsrfField viewer={viewer} />
        <IdempotencyField />
        <input type="hidden" name="provider" value="stripe" />
        <SecretInput
          id="stripe-secret-key"
          name="secret_key"
          label="Restricted key"
          hint="rk_test_… or rk_live_… with the permissions docs/integrations.md lists."
        />
        <SecretInput
          id="stripe-webhook-secret"
          name="webhook_secret"
          label="Webhook signing secret"
          hint="whsec_… of the endpoint above."
        />
        <div class="actions">
          <ActionButton viewer={viewer} ability="project:update" label="Connect Stripe" />
        </div>
      </form>
      <h3>Manual</h3>
      <p class="hint">
        Payments you record yourself (cash, invoice, gift); subscriptions are granted from the dashboard.
      </p>
      <ActionForm
        viewer={viewer}
        action={`${base}/payment-provider`}
        ability="project:update"
        label="Connect the manual provider"
        secondary
        fields={{ provider: 'manual' }}
      />
    </section>
  );
}

/** The linked resources section: the chats, servers and roles linked to the project, and the form that links one. */
export function ResourcesSection(props: { viewer: Viewer; project: Project; extra?: SettingsExtra }): Html {
  const { project, viewer } = props;
  const base = `/dashboard/projects/${project.id}`;
  const values = props.extra?.at === 'resources' ? (props.extra.values ?? {}) : {};
  return (
    <section aria-labelledby="resources-heading">
      <h2 id="resources-heading">Linked resources</h2>
      <ProblemAt extra={props.extra} section="resources" />
      <DataTable
        id="project-resources"
        rows={project.resources}
        empty="No linked resources yet."
        columns={[
          { label: 'Kind', cell: (resource) => resource.kind },
          { label: 'Platform id', cell: (resource) => <code>{resource.platform_resource_id}</code> },
          { label: 'Name', cell: (resource) => resource.name ?? '—' },
          { label: 'Linked', cell: (resource) => <When at={resource.linked_at} /> },
          {
            label: 'Actions',
            cell: (resource) => (
              <ActionForm
                viewer={viewer}
                action={`${base}/resources/${resource.id}/unlink`}
                ability="project:link-resource"
                label={`Unlink ${resource.name ?? resource.platform_resource_id}`}
                secondary
              />
            ),
          },
        ]}
      />
      <form method="post" action={`${base}/resources`} class="stack" id="resource-form">
        <CsrfField viewer={viewer} />
        <IdempotencyField />
        <div>
          <label for="resource-kind">Kind</label>
          <select id="resource-kind" name="kind">
            {resourceKindsOf(project.platform_type).map((kind) => (
              <option value={kind} selected={values.kind === kind}>
                {kind}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="resource-id">Platform resource id</label>
          <input
            type="text"
            id="resource-id"
            name="platform_resource_id"
            required
            maxlength="256"
            value={values.platform_resource_id ?? ''}
          />
          <span class="hint">A Telegram chat id (e.g. -100…), a Discord server, channel or role id.</span>
        </div>
        <div>
          <label for="resource-name">Name (optional)</label>
          <input type="text" id="resource-name" name="name" maxlength="100" value={values.name ?? ''} />
        </div>
        <div class="actions">
          <ActionButton viewer={viewer} ability="project:link-resource" label="Link resource" />
        </div>
      </form>
    </section>
  );
}
