import { mailConfig } from '../../config.js';
import { integrationsOf } from '../../integrations.js';
import { logger } from '../../logger.js';
import { mailSenderOf } from '../../mail/nodemailer.js';
import type { Runtime } from '../../runtime.js';
import { projectStore } from '../../store/projects.js';
import { renderMessage } from '../message-templates/render.js';
import { loadMessageTemplate } from '../message-templates/templates.js';
import { sendThroughChannel } from '../messages/channels.js';
import type { Plan } from '../plans/schema.js';
import { toProject } from '../projects/repository.js';
import type { Gift } from './schema.js';

/**
 * The recipient's `gift` e-mail (DESIGN D32, D33): the project's `gift` template (or the default) rendered with the
 * buyer, their message, the plan, the code and the join page that redeems it, sent through the messages' e-mail
 * channel. Loaded on demand by the delivery (it pulls in the mail transports).
 */

/** True when the runtime can send e-mail: a sender given to it, or `SMTP_URL` / `MAIL_FROM` set. */
function canSendEmail(runtime: Pick<Runtime, 'mail'>): boolean {
  if (runtime.mail) return true;
  const { smtpUrl, mailFrom } = mailConfig();
  return Boolean(smtpUrl || mailFrom);
}

/**
 * Sends `gift`'s code to its recipient once; resolves true when the e-mail left, false when e-mail is not configured
 * or the send failed (logged without the code; the code then waits on the buyer's receipt page). Throws on store
 * errors.
 */
export async function sendGiftMessage(
  runtime: Runtime,
  teamId: string,
  gift: Gift,
  plan: Plan,
  code: string,
): Promise<boolean> {
  if (!canSendEmail(runtime)) return false;
  const projectItem = await projectStore.read(runtime.store, teamId, gift.project_id);
  if (!projectItem) return false;
  const join = `${integrationsOf(runtime).publicBaseUrl ?? ''}/join/${gift.project_id}`;
  const template = await loadMessageTemplate(runtime, teamId, gift.project_id, 'gift');
  const rendered = renderMessage(template, 'email', {
    project: toProject(projectItem),
    subscriber: { display_name: null },
    plan,
    subscription: null,
    links: { portal: null, recovery: null, sign_in: null, confirm: null, unsubscribe: null, join },
    grace: null,
    broadcast: null,
    gift: {
      from: gift.buyer_email,
      message: gift.message,
      code,
      redeem_url: `${join}?${new URLSearchParams({ code })}`,
    },
  });
  const failure = await sendThroughChannel(runtime, mailSenderOf(runtime), {
    teamId,
    projectId: gift.project_id,
    kind: 'gift',
    channel: 'email',
    recipient: gift.recipient_email,
    subject: rendered.subject,
    text: rendered.text,
    html: rendered.html,
    unsubscribeUrl: null,
  });
  if (failure) logger.warn('gift e-mail not sent', { gift_id: gift.id, failure_kind: failure.kind });
  return failure === null;
}
