import { defineModule } from '../../operations/definition.js';

/** The plans operations (DESIGN D13); filled in by the creator-side domain work. */
export const plansModule = defineModule({
  folder: 'plans',
  operations: {},
});
