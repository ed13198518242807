import { defineModule } from '../../operations/definition.js';

/** The team members operations (DESIGN D13); filled in by the creator-side domain work. */
export const teamMembersModule = defineModule({
  folder: 'team-members',
  operations: {},
});
