import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { Team } from '../teams/schema.js';
import { EventEnvelope } from './schema.js';

/**
 * An event item as stored by the unit of work's `tx.emit` (`EVENT#evt_<ULID>` in its team's partition, DESIGN D6): the
 * envelope and its team.
 */
const StoredEventRecord = z.extend(EventEnvelope, { team_id: Team.shape.id });

/** Parses an event item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredEvent = recordParser(entity.event, StoredEventRecord);
