/**
 * zod/mini (DESIGN D13: zod v4) with English issue messages, the one import of zod in `shared/`: route
 * bundles parse with the mini build (no JSON Schema generator, no method chains), and the messages of
 * VALIDATION_FAILED field errors (D1) are the classic build's.
 *
 * @module
 */
import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());

export * from 'zod/mini';
