/**
 * The community platforms a project can run on.
 *
 * Source: interface "Tool-server resources" (`service://enums/platform-type`: every platform type,
 * plus the subset that the `create_project` tool accepts).
 */

/** The kind of platform. */
export type PlatformCategory = 'chat' | 'community' | 'content';

/**
 * Every platform type: `{ value, label, category, create_project_accepts, description }`.
 * `create_project_accepts` is false for platforms whose projects are only created from the
 * dashboard (they need an interactive connection flow).
 */
export const PLATFORM_TYPES = [
  { value: 'telegram', label: 'Telegram', category: 'chat', create_project_accepts: true, description: 'Telegram channels and groups managed by a bot.' },
  { value: 'discord', label: 'Discord', category: 'community', create_project_accepts: true, description: 'Discord servers, with roles granted by a bot.' },
  { value: 'slack', label: 'Slack', category: 'chat', create_project_accepts: true, description: 'Slack workspaces and channels managed by an app.' },
  { value: 'whatsapp', label: 'WhatsApp', category: 'chat', create_project_accepts: false, description: 'WhatsApp communities and groups; connected from the dashboard only.' },
  { value: 'circle', label: 'Circle', category: 'community', create_project_accepts: true, description: 'Circle community spaces.' },
  { value: 'discourse', label: 'Discourse', category: 'community', create_project_accepts: true, description: 'Discourse forums, with groups granted through the API.' },
  { value: 'youtube', label: 'YouTube', category: 'content', create_project_accepts: false, description: 'YouTube channel memberships; connected from the dashboard only.' },
  { value: 'web', label: 'Website', category: 'content', create_project_accepts: true, description: 'A creator\u2019s own website or members area, gated through the API.' },
] as const satisfies readonly {
  value: string;
  label: string;
  category: PlatformCategory;
  create_project_accepts: boolean;
  description: string;
}[];

/** One entry of {@link PLATFORM_TYPES}. */
export type PlatformTypeDefinition = (typeof PLATFORM_TYPES)[number];

/** Union of every platform type value, e.g. `'telegram'`. */
export type PlatformType = PlatformTypeDefinition['value'];

/** Every platform type value (a tuple usable with `z.enum`). */
export const PLATFORM_TYPE_VALUES = PLATFORM_TYPES.map((platform) => platform.value) as unknown as readonly [
  PlatformType,
  ...PlatformType[],
];

/** Union of the platform types that the `create_project` tool accepts. */
export type CreateProjectPlatformType = Extract<PlatformTypeDefinition, { create_project_accepts: true }>['value'];

/**
 * The platform types that the `create_project` tool (and `POST /v1/projects`) accepts, in catalogue
 * order, as a tuple usable with `z.enum` (interface "Tool-server resources", platform-type row).
 */
export const CREATE_PROJECT_PLATFORM_TYPES = PLATFORM_TYPES.filter((platform) => platform.create_project_accepts).map(
  (platform) => platform.value,
) as unknown as readonly [CreateProjectPlatformType, ...CreateProjectPlatformType[]];

/** True when `value` is a platform type of the catalogue. */
export function isPlatformType(value: string): value is PlatformType {
  return (PLATFORM_TYPE_VALUES as readonly string[]).includes(value);
}
