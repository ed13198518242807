import { defineModule } from '../../operations/definition.js';

/** The groups operations (DESIGN D13); filled in by the creator-side domain work. */
export const groupsModule = defineModule({
  folder: 'groups',
  operations: {},
});
