import { defineModule } from '../../operations/definition.js';

/** The subscriptions operations (DESIGN D13); filled in by the subscriber-side domain work. */
export const subscriptionsModule = defineModule({
  folder: 'subscriptions',
  operations: {},
});
