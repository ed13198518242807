/** @jsx h */
/** @jsxFrag Fragment */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import type { Ability } from '../catalogues/abilities.js';
import { SUBSCRIPTION_STATUSES } from '../catalogues/subscription-statuses.js';
import type { ProblemDocument } from '../errors.js';
import type { ListPage } from './pages/kit.js';
import type { OperationOutcome } from './run-operation.js';
import { Fragment, h, type Child, type Html } from './html.js';

/**
 * The dashboard's shared markup (DESIGN D21): the page layout with navigation and the CSRF token, problem
 * details shown readably with their hint, buttons that a member without the operation's ability sees
 * disabled with the ability named, and small display helpers. Every text is escaped by the runtime.
 */

/** Who is looking at a page: the member, their team and principal, and the session's CSRF token. */
export interface Viewer {
  principal: Principal;
  member: { id: string; name: string; email: string };
  team: { id: string; name: string };
  csrfToken: string;
}

const NAVIGATION: ReadonlyArray<{ section: string; links: ReadonlyArray<{ href: string; label: string }> }> = [
  { section: 'Overview', links: [{ href: '/dashboard', label: 'Home' }] },
  {
    section: 'Membership',
    links: [
      { href: '/dashboard/projects', label: 'Projects' },
      { href: '/dashboard/team-members', label: 'Team members' },
      { href: '/dashboard/roles', label: 'Roles and groups' },
      { href: '/dashboard/activity', label: 'Activity' },
      { href: '/dashboard/billing', label: 'Billing' },
    ],
  },
  {
    section: 'Settings',
    links: [
      { href: '/dashboard/webhooks', label: 'Webhooks' },
      { href: '/dashboard/webhooks/deliveries', label: 'Deliveries' },
      { href: '/dashboard/tokens', label: 'API tokens' },
      { href: '/dashboard/account', label: 'Your account' },
    ],
  },
];

/** The `<head>` and stylesheet of every page. */
function Head(props: { title: string; csrfToken?: string }): Html {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{props.title} · Membership dashboard</title>
      {props.csrfToken ? <meta name="csrf-token" content={props.csrfToken} /> : ''}
      <link rel="stylesheet" href="/dashboard/assets/dashboard.css" />
      <script src="/dashboard/assets/htmx.min.js" defer></script>
      <script src="/dashboard/assets/simplewebauthn-browser.min.js" defer></script>
      <script src="/dashboard/assets/dashboard.js" defer></script>
    </head>
  );
}

/**
 * A signed-in page: top bar (team, member, sign-out), navigation (`current` marks the link of this page)
 * and the content. The body carries the CSRF token for every htmx request (`hx-headers`).
 */
export function Page(props: { title: string; viewer: Viewer; current: string; children?: Child }): Html {
  const { viewer } = props;
  return (
    <html lang="en">
      <Head title={props.title} csrfToken={viewer.csrfToken} />
      <body hx-headers={JSON.stringify({ 'X-CSRF-Token': viewer.csrfToken })}>
        <header class="top">
          <span class="brand">{viewer.team.name}</span>
          <span class="hint">
            {viewer.member.name} ({viewer.member.email})
          </span>
          <form method="post" action="/dashboard/sign-out">
            <CsrfField viewer={viewer} />
            <button type="submit" class="secondary">
              Sign out
            </button>
          </form>
        </header>
        <div class="layout">
          <nav class="side" aria-label="Dashboard">
            {NAVIGATION.map((group) => (
              <>
                <h2>{group.section}</h2>
                <ul>
                  {group.links.map((link) => (
                    <li>
                      <a href={link.href} aria-current={link.href === props.current ? 'page' : undefined}>
                        {link.label}
                      </a>
                    </li>
                  ))}
                </ul>
              </>
            ))}
          </nav>
          <main id="main">
            <h1>{props.title}</h1>
            {props.children}
          </main>
        </div>
      </body>
    </html>
  );
}

/** A page without a session (sign-in, sign-in links, invitations). */
export function PublicPage(props: { title: string; children?: Child }): Html {
  return (
    <html lang="en">
      <Head title={props.title} />
      <body>
        <main class="center">
          <h1>{props.title}</h1>
          {props.children}
        </main>
      </body>
    </html>
  );
}

/** The hidden CSRF field every form carries (DESIGN D21). */
export function CsrfField(props: { viewer: Viewer }): Html {
  return <input type="hidden" name="csrf_token" value={props.viewer.csrfToken} />;
}

/** A fresh idempotency key for a form: a double-clicked submit sends it twice and runs once (DESIGN D3). */
export function IdempotencyField(): Html {
  return <input type="hidden" name="idempotency_key" value={randomUUID()} />;
}

/**
 * One ability as a checkbox of a form field `abilities` (roles, tokens): its name, ticked when `checked`,
 * and disabled — with "(you do not hold it)" — when the viewer does not hold it (a role or token never
 * grants more than its maker holds, DESIGN D19).
 */
export function AbilityChoice(props: { viewer: Viewer; ability: { value: Ability; description: string }; checked: boolean }): Html {
  const held = props.viewer.principal.abilities.has(props.ability.value);
  return (
    <label title={props.ability.description}>
      <input type="checkbox" name="abilities" value={props.ability.value} checked={props.checked} disabled={!held} />
      <span>
        <code>{props.ability.value}</code>
        {held ? '' : <span class="hint"> (you do not hold it)</span>}
      </span>
    </label>
  );
}

/** The "Project scope" fieldset of a form (roles, tokens): a checkbox `project_ids` per project, `hint` saying what none ticked means. */
export function ProjectScopeField(props: { projects: readonly { id: string; name: string }[]; chosen: ReadonlySet<string>; hint: string }): Html {
  return (
    <fieldset>
      <legend>Project scope</legend>
      <p class="hint">{props.hint}</p>
      <div class="checks">
        {props.projects.length === 0 ? <span class="hint">No projects.</span> : ''}
        {props.projects.map((project) => (
          <label>
            <input type="checkbox" name="project_ids" value={project.id} checked={props.chosen.has(project.id)} /> {project.name}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/** The `name` (required, ≤ 100 characters) and optional `description` (≤ 1,000) fields of a form, their ids prefixed by `idPrefix`. */
export function NameDescriptionFields(props: { idPrefix: string; values?: { name?: string; description?: string | null } }): Html {
  return (
    <>
      <div>
        <label for={`${props.idPrefix}-name`}>Name</label>
        <input type="text" id={`${props.idPrefix}-name`} name="name" required maxlength="100" value={props.values?.name ?? ''} />
      </div>
      <div>
        <label for={`${props.idPrefix}-description`}>Description (optional)</label>
        <input type="text" id={`${props.idPrefix}-description`} name="description" maxlength="1000" value={props.values?.description ?? ''} />
      </div>
    </>
  );
}

/** A problem document as a readable message: title, detail, field errors and the catalogue's hint. */
export function ProblemView(props: { problem: ProblemDocument }): Html {
  const { problem } = props;
  return (
    <div class="problem" role="alert">
      <strong>
        {problem.title} ({problem.code})
      </strong>
      <p>{problem.detail}</p>
      {problem.errors?.length ? (
        <ul>
          {problem.errors.map((error) => (
            <li>
              <code>{error.path}</code>: {error.message}
            </li>
          ))}
        </ul>
      ) : (
        ''
      )}
      <p class="hint">What to do: {problem.hint}</p>
    </div>
  );
}

/** A success message. */
export function Notice(props: { children?: Child }): Html {
  return (
    <div class="notice" role="status">
      {props.children}
    </div>
  );
}

/**
 * A form with one submit button that runs an operation: posts to `action` with the CSRF token and an
 * idempotency key. When the member lacks `ability`, the button is disabled and says which ability it needs.
 */
export function ActionForm(props: { viewer: Viewer; action: string; ability: Ability; label: string; danger?: boolean; secondary?: boolean; fields?: Record<string, string> }): Html {
  const allowed = props.viewer.principal.abilities.has(props.ability);
  return (
    <form method="post" action={props.action}>
      <CsrfField viewer={props.viewer} />
      <IdempotencyField />
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <ActionButton viewer={props.viewer} ability={props.ability} label={props.label} danger={props.danger} secondary={props.secondary} allowed={allowed} />
    </form>
  );
}

/** A submit button, disabled with the missing ability named when the member lacks it. */
export function ActionButton(props: { viewer: Viewer; ability: Ability; label: string; danger?: boolean; secondary?: boolean; allowed?: boolean }): Html {
  const allowed = props.allowed ?? props.viewer.principal.abilities.has(props.ability);
  const className = props.danger ? 'danger' : props.secondary ? 'secondary' : undefined;
  if (allowed) {
    return (
      <button type="submit" class={className}>
        {props.label}
      </button>
    );
  }
  return (
    <button type="submit" disabled title={`Needs the ability ${props.ability}`} aria-label={`${props.label} (needs ${props.ability})`}>
      {props.label} — needs {props.ability}
    </button>
  );
}

/** A link styled as a button that leads to a form; disabled (as a button) when the member lacks `ability`. */
export function ActionLink(props: { viewer: Viewer; href: string; ability: Ability; label: string; secondary?: boolean }): Html {
  if (props.viewer.principal.abilities.has(props.ability)) {
    return (
      <a class={props.secondary ? 'button secondary' : 'button'} href={props.href}>
        {props.label}
      </a>
    );
  }
  return (
    <button type="button" disabled title={`Needs the ability ${props.ability}`}>
      {props.label} — needs {props.ability}
    </button>
  );
}

/** A message in place of a list the member may not read. */
export function Forbidden(props: { ability: Ability; what: string }): Html {
  return (
    <p class="hint">
      You cannot see {props.what}: it needs the ability <code>{props.ability}</code>.
    </p>
  );
}

/** A list outcome as a table, or the missing ability, or the problem. */
export function Listing<T>(props: { outcome: OperationOutcome<ListPage<T>>; what: string; ability: Parameters<typeof Forbidden>[0]['ability']; render: (items: T[]) => Html }): Html {
  const { outcome } = props;
  if (outcome.ok) return props.render(outcome.result.data);
  if (outcome.problem.code === 'TOKEN_MISSING_ABILITY') return <Forbidden ability={props.ability} what={props.what} />;
  return <ProblemView problem={outcome.problem} />;
}

/** A timestamp shown in UTC, or a dash. */
export function When(props: { at: string | null | undefined }): Html {
  if (!props.at) return <span class="hint">—</span>;
  return (
    <time datetime={props.at}>
      {props.at
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC')
        .replace(/Z$/, ' UTC')}
    </time>
  );
}

/** A coloured badge. */
export function Badge(props: { color: string; children?: Child }): Html {
  return <span class={`badge ${props.color}`}>{props.children}</span>;
}

/** A subscription status with the catalogue's label and colour (`service://enums/subscription-status`). */
export function SubscriptionStatusBadge(props: { status: string }): Html {
  const definition = SUBSCRIPTION_STATUSES.find((status) => status.value === props.status);
  return <Badge color={definition?.color ?? 'gray'}>{definition?.label ?? props.status}</Badge>;
}

/** A secret shown once, with a copy button. */
export function SecretOnce(props: { id: string; label: string; value: string }): Html {
  return (
    <div class="card">
      <p>
        <strong>{props.label}</strong> — shown only now. Copy it and keep it somewhere safe; it cannot be shown again.
      </p>
      <div class="secret">
        <output id={props.id}>{props.value}</output>
        <button type="button" class="secondary" data-copy={props.id}>
          Copy
        </button>
      </div>
    </div>
  );
}

/**
 * The table behind {@link DataTable}: a header row of `head` over `children` rows; at 640 px and below each
 * row becomes a card of label and value pairs (its cells carry `data-label` with their column's name, which
 * DataTable writes from its column list), DESIGN D21.
 */
function Table(props: { caption?: string; head: readonly string[]; children?: Child; id?: string }): Html {
  return (
    <div class="table-wrap" id={props.id}>
      <table class="stacked">
        {props.caption ? <caption class="hint">{props.caption}</caption> : ''}
        <thead>
          <tr>
            {props.head.map((cell) => (
              <th scope="col">{cell}</th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/** One column of a {@link DataTable}: its name (the header, and each cell's `data-label`), its cell for a row, and an optional class for the cells. */
export interface Column<T> {
  label: string;
  cell: (row: T) => Child;
  class?: string;
}

/**
 * A {@link Table} whose column names are written once: `columns` gives the header and, for each row of
 * `rows`, the cells with their column's name in `data-label`, so at 640 px and below each row becomes a
 * card of label and value pairs instead of scrolling sideways (DESIGN D21). With no rows, one cell across
 * the table says `empty`.
 */
export function DataTable<T>(props: { id?: string; caption?: string; columns: readonly Column<T>[]; rows: readonly T[]; empty: string }): Html {
  return (
    <Table id={props.id} caption={props.caption} head={props.columns.map((column) => column.label)}>
      {props.rows.length === 0 ? (
        <tr>
          <td colspan={String(props.columns.length)} class="hint">
            {props.empty}
          </td>
        </tr>
      ) : (
        props.rows.map((row) => (
          <tr>
            {props.columns.map((column) => (
              <td data-label={column.label} class={column.class}>
                {column.cell(row)}
              </td>
            ))}
          </tr>
        ))
      )}
    </Table>
  );
}
