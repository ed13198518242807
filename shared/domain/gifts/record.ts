import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { Team } from '../teams/schema.js';
import { Gift } from './schema.js';

/**
 * A gift's stored item (DESIGN D33): the public {@link Gift} plus its team and, between delivery and the e-mail that
 * carries it, the access code itself (`code`, a secret like an invitation token: removed once the recipient's e-mail
 * left, shown on the buyer's receipt page while it is held), and when the e-mail left (`emailed_at`).
 */
const StoredGift = z.object({
  ...Gift.shape,
  team_id: Team.shape.id,
  code: z.optional(z.string()),
  emailed_at: z.optional(z.nullable(z.string())),
});
/** A stored gift (see {@link StoredGift}). */
export type StoredGift = z.infer<typeof StoredGift>;

/** Parses a stored gift item. */
export const parseStoredGift = recordParser(entity.gift, StoredGift);

/** A gift's reference item: its project. */
export const parseGiftRef = recordParser(entity.giftRef, z.object({ team_id: Team.shape.id, project_id: z.string() }));

/** The public shape of a stored gift (never the code). */
export function toGift(stored: StoredGift): Gift {
  return Gift.parse(stored);
}
