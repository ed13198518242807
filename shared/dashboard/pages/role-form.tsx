/** @jsx h */
import { ABILITIES, ABILITY_CATEGORY_LABELS, type Ability, type AbilityCategory } from '../../catalogues/abilities.js';
import type { Project } from '../../domain/projects/schema.js';
import { CsrfField, IdempotencyField, type Viewer } from '../components.js';
import { AbilityChoice, ActionButton, NameDescriptionFields, ProjectScopeField } from '../form-controls.js';
import { h, type Html } from '../../web/html.js';
import { formText, formValues } from '../http.js';

/**
 * The role form of the roles pages (DESIGN D19): name, description, the catalogue's abilities as checkboxes grouped
 * by domain (only abilities the member holds can be ticked) and an optional project scope.
 */

/** The catalogue's abilities by category, in catalogue order. */
function abilitiesByCategory(): Array<[AbilityCategory, Array<(typeof ABILITIES)[number]>]> {
  const groups = new Map<AbilityCategory, Array<(typeof ABILITIES)[number]>>();
  for (const ability of ABILITIES) groups.set(ability.category, [...(groups.get(ability.category) ?? []), ability]);
  return [...groups.entries()];
}

/** What a role form holds (a role being edited, or what was submitted). */
export interface RoleValues {
  name?: string;
  description?: string | null;
  abilities?: readonly string[];
  project_ids?: readonly string[] | null;
}

/** The role form: name, description, abilities grouped by domain (only held ones can be ticked), project scope. */
export function RoleForm(props: {
  viewer: Viewer;
  action: string;
  projects: Project[];
  values?: RoleValues;
  submit: string;
  ability: Ability;
  /** Where Cancel leads. */
  cancel: string;
}): Html {
  const { viewer } = props;
  const chosen = new Set(props.values?.abilities ?? []);
  const scoped = new Set(props.values?.project_ids ?? []);
  return (
    <form method="post" action={props.action} class="stack" id="role-form">
      <CsrfField viewer={viewer} />
      <IdempotencyField />
      <NameDescriptionFields idPrefix="role" values={props.values} />
      <fieldset>
        <legend>Abilities</legend>
        <p class="hint">A role never grants more than you hold: abilities you do not hold cannot be ticked.</p>
        {abilitiesByCategory().map(([category, abilities]) => (
          <fieldset class="ability-group">
            <legend>{ABILITY_CATEGORY_LABELS[category]}</legend>
            <div class="events">
              {abilities.map((ability) => (
                <AbilityChoice viewer={viewer} ability={ability} checked={chosen.has(ability.value)} />
              ))}
            </div>
          </fieldset>
        ))}
      </fieldset>
      <ProjectScopeField
        projects={props.projects}
        chosen={scoped}
        hint="Leave all unticked for a role that applies in every project."
      />
      <div class="actions">
        <ActionButton viewer={viewer} ability={props.ability} label={props.submit} />
        <a href={props.cancel}>Cancel</a>
      </div>
    </form>
  );
}

/** The role form's values as submitted. */
export function roleValuesOf(form: URLSearchParams): RoleValues {
  const projectIds = formValues(form, 'project_ids');
  return {
    name: formText(form, 'name'),
    description: formText(form, 'description') ?? null,
    abilities: formValues(form, 'abilities'),
    project_ids: projectIds.length ? projectIds : null,
  };
}
