import { FACTS } from '../domain/facts.js';
import type { AbilityFact, AbilityGroup } from '../domain/define-facts.js';
import type { BuiltInRoleName } from '../domain/roles/built-in.js';

/**
 * Ability catalogue (interface "Bearer tokens", "Tool-server authorization"): the modules' `facts.ts` abilities plus
 * `mcp:full` (a gate granting no data), served as `service://enums/ability`. Names `<object>:<verb>`: `view-any` lists,
 * `view` reads one; `project-user:view` also unlocks contact details.
 */

/** The tool server's gate (interface "Tool-server authorization"): no object's ability, so it is declared here. */
const MCP = {
  category: 'mcp',
  label: 'Tool server (MCP)',
  entries: [
    {
      value: 'mcp:full',
      description: 'Use the tool server. A gate only: it grants no data access; each tool checks its own ability.',
      roles: ['developer', 'analyst', 'support'],
    },
  ],
} as const satisfies AbilityGroup;

type Group = (typeof FACTS)[number] extends infer F
  ? (F extends { readonly abilities: infer G } ? G : never) | typeof MCP
  : never;

const GROUPS: readonly Group[] = [
  ...FACTS.flatMap((facts): Group[] => ('abilities' in facts ? [facts.abilities] : [])),
  MCP,
];

/** The domain an ability belongs to (the `category` field of the ability resource items). */
export type AbilityCategory = Group['category'];

/** Every ability, grouped by domain: `{ value, category, description }`. */
export const ABILITIES: readonly {
  readonly value: Group['entries'][number]['value'];
  readonly category: AbilityCategory;
  readonly description: string;
}[] = GROUPS.flatMap(({ category, entries }) =>
  entries.map(({ value, description }) => ({ value, category, description })),
);

/** The built-in roles (DESIGN D19) holding each ability besides `owner`, which holds every ability. */
export const ABILITY_HOLDERS: ReadonlyMap<Ability, readonly Exclude<BuiltInRoleName, 'owner'>[]> = new Map(
  GROUPS.flatMap(({ entries }) =>
    entries.map(
      (entry: AbilityFact) =>
        [entry.value as Ability, entry.ownerOnly ? entry.roles : ['admin', ...entry.roles]] as const,
    ),
  ),
);

/** How each ability category is headed (the dashboard's role form). */
export const ABILITY_CATEGORY_LABELS = Object.fromEntries(
  GROUPS.flatMap((group: AbilityGroup) => (group.label ? [[group.category, group.label]] : [])),
) as Readonly<Record<AbilityCategory, string>>;

/** One entry of {@link ABILITIES}. */
type AbilityDefinition = (typeof ABILITIES)[number];

/** Union of every ability string, e.g. `'project-user:view-any'`. */
export type Ability = AbilityDefinition['value'];

/** Every ability string, in catalogue order (a tuple usable with `z.enum`). */
export const ABILITY_VALUES = ABILITIES.map((ability) => ability.value) as unknown as readonly [Ability, ...Ability[]];

const ABILITY_SET: ReadonlySet<string> = new Set<string>(ABILITY_VALUES);

/** True when `value` is an ability of the catalogue (interface "Bearer tokens"). */
export function isAbility(value: string): value is Ability {
  return ABILITY_SET.has(value);
}

/**
 * True for an ability that only reads (`:view`, `:view-any`, `activity:read`): the read-only preset of tokens and
 * OAuth's default scope.
 */
export function isReadAbility(ability: Ability): boolean {
  return /:view(-any)?$/.test(ability) || ability === 'activity:read';
}
