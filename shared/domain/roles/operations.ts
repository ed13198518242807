import { defineModule } from '../../operations/definition.js';

/** The roles operations (DESIGN D13); filled in by the creator-side domain work. */
export const rolesModule = defineModule({
  folder: 'roles',
  operations: {},
});
