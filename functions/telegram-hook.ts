/** Inbound Telegram hook Lambda: `POST /hooks/telegram/{project_id}` (DESIGN D22). */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createHookHandler } from '../shared/hooks/hook.js';
import { telegramHook } from '../shared/hooks/telegram.js';

/** The Telegram hook Lambda's handler: API Gateway (HTTP API) requests to `POST /hooks/telegram/{project_id}`. */
export const handler = createHookHandler(awsRuntime, telegramHook);
