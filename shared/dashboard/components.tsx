/** @jsx h */
import type { Principal } from '../auth/principal.js';
import type { Ability } from '../catalogues/abilities.js';
import type { ListPage } from './pages/kit.js';
import type { OperationOutcome } from '../web/run-operation.js';
import { ProblemView } from '../web/components.js';
import { h, type Child, type Html } from '../web/html.js';

/**
 * The dashboard's own markup (DESIGN D21): who is looking, the hidden CSRF field, notices, lists the member may not
 * read and secrets shown once; what the public pages share (problems, tables, badges) is in `../web/components.tsx`.
 * Layouts are in `./layout.tsx`, ability-gated controls in `./form-controls.tsx`. Every text is escaped by the runtime.
 */

/** Who is looking at a page: the member, their team and principal, and the session's CSRF token. */
export interface Viewer {
  principal: Principal;
  member: { id: string; name: string; email: string };
  team: { id: string; name: string };
  csrfToken: string;
}

/** The hidden CSRF field every form carries (DESIGN D21). */
export function CsrfField(props: { viewer: Viewer }): Html {
  return <input type="hidden" name="csrf_token" value={props.viewer.csrfToken} />;
}

/** A success message. */
export function Notice(props: { children?: Child }): Html {
  return (
    <div class="notice" role="status">
      {props.children}
    </div>
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
export function Listing<T>(props: {
  outcome: OperationOutcome<ListPage<T>>;
  what: string;
  ability: Parameters<typeof Forbidden>[0]['ability'];
  render: (items: T[]) => Html;
}): Html {
  const { outcome } = props;
  if (outcome.ok) return props.render(outcome.result.data);
  if (outcome.problem.code === 'TOKEN_MISSING_ABILITY') return <Forbidden ability={props.ability} what={props.what} />;
  return <ProblemView problem={outcome.problem} />;
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

export {
  DataTable,
  IdempotencyField,
  ProblemView,
  SubscriptionStatusBadge,
  When,
  Badge,
  type Column,
} from '../web/components.js';
