/** @jsx h */
/** @jsxFrag Fragment */
/**
 * The dashboard's form controls (DESIGN D19, D21): buttons, forms and links that a member without the
 * operation's ability sees disabled with the ability named, and the fields shared by several forms.
 */
import type { Ability } from '../catalogues/abilities.js';
import { CsrfField, IdempotencyField, type Viewer } from './components.js';
import { Fragment, h, type Html } from '../web/html.js';

/**
 * One ability as a checkbox of a form field `abilities` (roles, tokens): its name, ticked when `checked`,
 * and disabled — with "(you do not hold it)" — when the viewer does not hold it (a role or token never
 * grants more than its maker holds, DESIGN D19).
 */
export function AbilityChoice(props: {
  viewer: Viewer;
  ability: { value: Ability; description: string };
  checked: boolean;
}): Html {
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

/**
 * The "Project scope" fieldset of a form (roles, tokens): a checkbox `project_ids` per project, `hint` saying what none
 * ticked means.
 */
export function ProjectScopeField(props: {
  projects: readonly { id: string; name: string }[];
  chosen: ReadonlySet<string>;
  hint: string;
}): Html {
  return (
    <fieldset>
      <legend>Project scope</legend>
      <p class="hint">{props.hint}</p>
      <div class="checks">
        {props.projects.length === 0 ? <span class="hint">No projects.</span> : ''}
        {props.projects.map((project) => (
          <label>
            <input type="checkbox" name="project_ids" value={project.id} checked={props.chosen.has(project.id)} />{' '}
            {project.name}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/**
 * The `name` (required, ≤ 100 characters) and optional `description` (≤ 1,000) fields of a form, their ids prefixed by
 * `idPrefix`.
 */
export function NameDescriptionFields(props: {
  idPrefix: string;
  values?: { name?: string; description?: string | null };
}): Html {
  return (
    <>
      <div>
        <label for={`${props.idPrefix}-name`}>Name</label>
        <input
          type="text"
          id={`${props.idPrefix}-name`}
          name="name"
          required
          maxlength="100"
          value={props.values?.name ?? ''}
        />
      </div>
      <div>
        <label for={`${props.idPrefix}-description`}>Description (optional)</label>
        <input
          type="text"
          id={`${props.idPrefix}-description`}
          name="description"
          maxlength="1000"
          value={props.values?.description ?? ''}
        />
      </div>
    </>
  );
}

/**
 * A form with one submit button that runs an operation: posts to `action` with the CSRF token and an
 * idempotency key. When the member lacks `ability`, the button is disabled and says which ability it needs.
 */
export function ActionForm(props: {
  viewer: Viewer;
  action: string;
  ability: Ability;
  label: string;
  danger?: boolean;
  secondary?: boolean;
  fields?: Record<string, string>;
}): Html {
  const allowed = props.viewer.principal.abilities.has(props.ability);
  return (
    <form method="post" action={props.action}>
      <CsrfField viewer={props.viewer} />
      <IdempotencyField />
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <ActionButton
        viewer={props.viewer}
        ability={props.ability}
        label={props.label}
        danger={props.danger}
        secondary={props.secondary}
        allowed={allowed}
      />
    </form>
  );
}

/** A submit button, disabled with the missing ability named when the member lacks it. */
export function ActionButton(props: {
  viewer: Viewer;
  ability: Ability;
  label: string;
  danger?: boolean;
  secondary?: boolean;
  allowed?: boolean;
}): Html {
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
    <button
      type="submit"
      disabled
      title={`Needs the ability ${props.ability}`}
      aria-label={`${props.label} (needs ${props.ability})`}
    >
      {props.label} — needs {props.ability}
    </button>
  );
}

/** A link styled as a button that leads to a form; disabled (as a button) when the member lacks `ability`. */
export function ActionLink(props: {
  viewer: Viewer;
  href: string;
  ability: Ability;
  label: string;
  secondary?: boolean;
}): Html {
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
