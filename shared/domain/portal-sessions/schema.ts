import * as z from '../../schemas/zod.js';
import { Timestamp } from '../../schemas/common.js';

/**
 * A one-time link into the subscriber portal (DESIGN D27): hand `url` to the subscriber; it works once, until
 * `expires_at`.
 */
export const PortalSession = z
  .object({
    url: z
      .string()
      .check(
        z.describe(
          'The one-time sign-in link of the subscriber portal (`/portal/{project_id}/sign-in?token=...`); absolute when the service knows its public base URL.',
        ),
      ),
    expires_at: Timestamp.check(z.describe('When the link stops working (30 minutes after it was made).')),
  })
  .register(z.globalRegistry, { id: 'PortalSession' });
