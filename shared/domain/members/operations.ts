import { defineModule } from '../../operations/definition.js';

/** The members operations (DESIGN D13); filled in by the subscriber-side domain work. */
export const membersModule = defineModule({
  folder: 'members',
  operations: {},
});
