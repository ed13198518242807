/**
 * The tool server's icons (MCP `icons`: `{ src, mimeType, sizes }`, DESIGN D5): one SVG for the server and one per tool
 * group (the OpenAPI tag of the tool's operation), each a 24×24 line drawing served inline as a `data:` URI, so no
 * client fetches anything.
 */
import type { Icon } from '@modelcontextprotocol/server';
import type { ToolDefinition } from '../catalogues/tools.js';
import { operationById } from '../operations/registry.js';

/** An icon of one or more SVG path outlines (`d` attributes), drawn with `currentColor`. */
function svgIcon(...paths: string[]): Icon {
  const svg =
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" ' +
    `stroke-linecap="round" stroke-linejoin="round">${paths.map((d) => `<path d="${d}"/>`).join('')}</svg>`;
  return {
    src: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`,
    mimeType: 'image/svg+xml',
    sizes: ['any'],
  };
}

/** The server's icon: a membership card. */
export const SERVER_ICON: Icon = svgIcon('M3 6h18v12H3z', 'M7 10h4', 'M7 14h7', 'M16 10h2');

/** One icon per tool group, keyed by the group's name (the tag of its operations). */
const GROUP_ICONS: Readonly<Record<string, Icon>> = {
  Teams: svgIcon(
    'M9 11a3 3 0 1 0 0-6 3 3 0 0 0 0 6z',
    'M3 20c0-3 3-5 6-5s6 2 6 5',
    'M16 5a3 3 0 0 1 0 6',
    'M18 15c2 1 3 3 3 5',
  ),
  'Team members': svgIcon('M12 11a4 4 0 1 0 0-8 4 4 0 0 0 0 8z', 'M4 21c0-4 4-6 8-6s8 2 8 6'),
  Roles: svgIcon('M12 3l8 3v6c0 5-3.5 8-8 9-4.5-1-8-4-8-9V6z'),
  Groups: svgIcon('M4 4h7v7H4z', 'M13 4h7v7h-7z', 'M4 13h7v7H4z', 'M13 13h7v7h-7z'),
  Projects: svgIcon('M3 7h7l2 2h9v10H3z'),
  Plans: svgIcon('M5 3h14v18H5z', 'M9 8h6', 'M9 12h6', 'M9 16h3'),
  'Access codes': svgIcon('M8 15a4 4 0 1 0 0-8 4 4 0 0 0 0 8z', 'M12 11h9', 'M18 11v3', 'M21 11v2'),
  Subscribers: svgIcon('M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8z', 'M5 21c0-4 3-6 7-6', 'M16 18l2 2 4-4'),
  Subscriptions: svgIcon('M21 12a9 9 0 1 1-3-6.7', 'M21 4v5h-5'),
  Payments: svgIcon('M2 6h20v12H2z', 'M2 10h20', 'M6 15h4'),
  Tokens: svgIcon('M15 7a4 4 0 1 1-4 4', 'M11 11l-8 8', 'M6 16l2 2'),
  Activity: svgIcon('M3 12h4l3-8 4 16 3-8h4'),
  Webhooks: svgIcon('M10 13a5 5 0 0 0 7 0l3-3a5 5 0 0 0-7-7l-1 1', 'M14 11a5 5 0 0 0-7 0l-3 3a5 5 0 0 0 7 7l1-1'),
};

/** The icon of `tool`'s group; undefined for a group without one (the catalogue test keeps every group covered). */
export function toolIcon(tool: Pick<ToolDefinition, 'operationId'>): Icon | undefined {
  return GROUP_ICONS[operationById(tool.operationId).tag];
}
