import * as z from '../../schemas/zod.js';
import { Timestamp } from '../../schemas/common.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { MessageTemplate } from './schema.js';

/**
 * A saved message template as stored (`TEAM#<team>`, `MESSAGE_TEMPLATE#<project>#<kind>`; DESIGN D32): the public
 * fields of a template, with when it was saved.
 */
const StoredMessageTemplate = z.extend(
  z.pick(MessageTemplate, { kind: true, delivery: true, email: true, bot: true }),
  {
    updated_at: Timestamp,
  },
);

/** Parses a saved template item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredMessageTemplate = recordParser(entity.messageTemplate, StoredMessageTemplate);
