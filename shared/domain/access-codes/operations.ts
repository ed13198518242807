import { defineModule } from '../../operations/definition.js';

/** The access codes operations (DESIGN D13); filled in by the creator-side domain work. */
export const accessCodesModule = defineModule({
  folder: 'access-codes',
  operations: {},
});
