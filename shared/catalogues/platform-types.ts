/**
 * The community platforms a project can run on.
 *
 * Source: interface "Tool-server resources" (`service://enums/platform-type`: every platform type,
 * plus the subset that the `create_project` tool accepts).
 */

/** The kind of platform. */
export type PlatformCategory = 'chat' | 'community' | 'content';

/**
 * The kinds of platform resource a project can link (channels, groups, servers, roles, spaces,
 * forums, pages), written once; each platform accepts a subset (`resource_kinds`).
 */
export const PLATFORM_RESOURCE_KINDS = ['channel', 'group', 'server', 'role', 'space', 'forum', 'page'] as const;
/** A platform resource kind (see {@link PLATFORM_RESOURCE_KINDS}). */
export type PlatformResourceKind = (typeof PLATFORM_RESOURCE_KINDS)[number];

/**
 * Every platform type: `{ value, label, category, create_project_accepts, resource_kinds, description }`.
 * `create_project_accepts` is false for platforms whose projects are only created from the
 * dashboard (they need an interactive connection flow). `resource_kinds` are the kinds of platform
 * resource a project on that platform can link (`POST /v1/projects/{project_id}/resources`).
 */
export const PLATFORM_TYPES = [
  {
    value: 'telegram',
    label: 'Telegram',
    category: 'chat',
    create_project_accepts: true,
    connectable: true,
    resource_kinds: ['channel', 'group'],
    description: 'Telegram channels and groups managed by a bot.',
  },
  {
    value: 'discord',
    label: 'Discord',
    category: 'community',
    create_project_accepts: true,
    connectable: true,
    resource_kinds: ['server', 'channel', 'role'],
    description: 'Discord servers, with roles granted by a bot.',
  },
  {
    value: 'slack',
    label: 'Slack',
    category: 'chat',
    create_project_accepts: true,
    connectable: false,
    resource_kinds: ['channel', 'group'],
    description: 'Slack workspaces and channels managed by an app.',
  },
  {
    value: 'whatsapp',
    label: 'WhatsApp',
    category: 'chat',
    create_project_accepts: false,
    connectable: false,
    resource_kinds: ['group', 'channel'],
    description: 'WhatsApp communities and groups; connected from the dashboard only.',
  },
  {
    value: 'circle',
    label: 'Circle',
    category: 'community',
    create_project_accepts: true,
    connectable: false,
    resource_kinds: ['space'],
    description: 'Circle community spaces.',
  },
  {
    value: 'discourse',
    label: 'Discourse',
    category: 'community',
    create_project_accepts: true,
    connectable: false,
    resource_kinds: ['group', 'forum'],
    description: 'Discourse forums, with groups granted through the API.',
  },
  {
    value: 'youtube',
    label: 'YouTube',
    category: 'content',
    create_project_accepts: false,
    connectable: false,
    resource_kinds: ['channel'],
    description: 'YouTube channel memberships; connected from the dashboard only.',
  },
  {
    value: 'web',
    label: 'Website',
    category: 'content',
    create_project_accepts: true,
    connectable: false,
    resource_kinds: ['page'],
    description: 'A creator\u2019s own website or members area, gated through the API.',
  },
] as const satisfies readonly {
  value: string;
  label: string;
  category: PlatformCategory;
  create_project_accepts: boolean;
  connectable: boolean;
  resource_kinds: readonly PlatformResourceKind[];
  description: string;
}[];

/** One entry of {@link PLATFORM_TYPES}. */
type PlatformTypeDefinition = (typeof PLATFORM_TYPES)[number];

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

/** The resource kinds a project on `platform` can link (see {@link PLATFORM_TYPES}). */
export function resourceKindsOf(platform: PlatformType): readonly PlatformResourceKind[] {
  return PLATFORM_TYPES.find((entry) => entry.value === platform)?.resource_kinds ?? [];
}

/** The platforms whose bot a project can connect now (`connectable: true`), in catalogue order (DESIGN D22). */
export const CONNECTABLE_PLATFORM_TYPES: readonly PlatformType[] = PLATFORM_TYPES.filter(
  (platform) => platform.connectable,
).map((platform) => platform.value);

/** True when a project on `platform` can connect its bot now. */
export function isConnectablePlatform(platform: PlatformType): boolean {
  return CONNECTABLE_PLATFORM_TYPES.includes(platform);
}
