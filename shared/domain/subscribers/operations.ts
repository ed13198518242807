import { defineModule } from '../../operations/definition.js';

/** The subscribers operations (DESIGN D13); filled in by the subscriber-side domain work. */
export const subscribersModule = defineModule({
  folder: 'subscribers',
  operations: {},
});
