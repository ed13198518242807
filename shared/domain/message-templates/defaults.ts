import type { MessageKind } from '../../catalogues/message-kinds.js';

/**
 * The service's default text of every message kind (DESIGN D32), in English: what a project sends until its creator
 * saves a template of its own. Liquid over the documented variables (docs/messages.md); optional links are guarded.
 */

/** A default template's texts. */
interface DefaultTexts {
  subject: string;
  email: string;
  bot: string;
}

const SIGNATURE = `— {{ project.name }}`;
const PORTAL = `{% if links.portal %}Manage your membership: {{ links.portal }}{% endif %}`;

/** The default texts by kind. */
export const DEFAULT_TEXTS: Record<MessageKind, DefaultTexts> = {
  welcome: {
    subject: 'Welcome to {{ project.name }}',
    email: `Hi {{ subscriber.name }},

welcome to {{ project.name }}!{% if plan %} Your {{ plan.name }} membership ({{ plan.price }}, {{ plan.interval }}) is active.{% endif %}

How to get in: the invite links and the bot's messages take you to the community. You can also open your members' portal at any time to find them again.

${PORTAL}

${SIGNATURE}`,
    bot: `Welcome to {{ project.name }}, {{ subscriber.name }}!{% if plan %} Your {{ plan.name }} membership is active.{% endif %}{% if links.portal %} Your portal: {{ links.portal }}{% endif %}`,
  },
  trial_ending: {
    subject: 'Your free trial of {{ project.name }} ends soon',
    email: `Hi {{ subscriber.name }},

your free trial of {{ project.name }} ends on {{ subscription.trial_ends_on }}.{% if plan %} After that, {{ plan.name }} continues at {{ plan.price }} ({{ plan.interval }}).{% endif %}

Nothing to do if you want to stay. To change or cancel before you are charged, use your portal.

${PORTAL}

${SIGNATURE}`,
    bot: `Your free trial of {{ project.name }} ends on {{ subscription.trial_ends_on }}.{% if links.portal %} Manage it: {{ links.portal }}{% endif %}`,
  },
  renewal_reminder: {
    subject:
      '{% if subscription.renews_on %}Your {{ project.name }} membership renews soon{% else %}Your {{ project.name }} access ends soon{% endif %}',
    email: `Hi {{ subscriber.name }},

{% if subscription.renews_on %}your {{ plan.name }} membership renews on {{ subscription.renews_on }} for {{ plan.price }}.{% else %}your access to {{ project.name }} ends on {{ subscription.ends_on }}.{% endif %}

{% if subscription.renews_on %}Nothing to do if you want to stay; you can change or cancel it in your portal.{% else %}Renew from your portal to keep your access.{% endif %}

${PORTAL}

${SIGNATURE}`,
    bot: `{% if subscription.renews_on %}Your {{ project.name }} membership renews on {{ subscription.renews_on }} for {{ plan.price }}.{% else %}Your access to {{ project.name }} ends on {{ subscription.ends_on }}.{% endif %}{% if links.portal %} Manage it: {{ links.portal }}{% endif %}`,
  },
  payment_failed: {
    subject: 'Your payment for {{ project.name }} failed',
    email: `Hi {{ subscriber.name }},

we could not take the payment for your {{ project.name }} membership{% if plan %} ({{ plan.name }}, {{ plan.price }}){% endif %}.

{% if grace %}You keep your access until {{ grace.ends_on }} ({{ grace.days_left }} days left). {% endif %}Please update your payment method to keep it:
{{ links.recovery }}

${SIGNATURE}`,
    bot: `Your payment for {{ project.name }} failed.{% if grace %} You keep access until {{ grace.ends_on }}.{% endif %} Update your payment method: {{ links.recovery }}`,
  },
  grace_ending: {
    subject: 'Your access to {{ project.name }} ends tomorrow',
    email: `Hi {{ subscriber.name }},

the payment for your {{ project.name }} membership is still missing, so your access ends on {{ grace.ends_on }}.

Update your payment method to keep it:
{{ links.recovery }}

${SIGNATURE}`,
    bot: `Your access to {{ project.name }} ends on {{ grace.ends_on }}: the payment is still missing. Update your payment method: {{ links.recovery }}`,
  },
  access_removed: {
    subject: 'Your access to {{ project.name }} has ended',
    email: `Hi {{ subscriber.name }},

your access to {{ project.name }} has ended{% if subscription %} (your membership is {{ subscription.status }}){% endif %}.

{% if links.join %}You are welcome back at any time: {{ links.join }}{% endif %}

${SIGNATURE}`,
    bot: `Your access to {{ project.name }} has ended.{% if links.join %} Join again at any time: {{ links.join }}{% endif %}`,
  },
  cancellation_scheduled: {
    subject: 'Your {{ project.name }} membership will end',
    email: `Hi {{ subscriber.name }},

your {{ project.name }} membership is canceled: you keep your access until {{ subscription.ends_on }}, and you will not be charged again.

Changed your mind? You can resume it in your portal before then.

${PORTAL}

${SIGNATURE}`,
    bot: `Your {{ project.name }} membership ends on {{ subscription.ends_on }}; you will not be charged again.{% if links.portal %} Changed your mind? {{ links.portal }}{% endif %}`,
  },
  paused: {
    subject: 'Your {{ project.name }} membership is paused',
    email: `Hi {{ subscriber.name }},

your {{ project.name }} membership is paused: you will not be charged while it is paused.

${PORTAL}

${SIGNATURE}`,
    bot: `Your {{ project.name }} membership is paused; you will not be charged while it is paused.`,
  },
  resumed: {
    subject: 'Your {{ project.name }} membership is active again',
    email: `Hi {{ subscriber.name }},

welcome back: your {{ project.name }} membership is active again.{% if subscription.renews_on %} It next renews on {{ subscription.renews_on }}.{% endif %}

${PORTAL}

${SIGNATURE}`,
    bot: `Welcome back: your {{ project.name }} membership is active again.`,
  },
  sign_in_link: {
    subject: 'Your sign-in link for {{ project.name }}',
    email: `Hi {{ subscriber.name }},

here is your link to sign in to your {{ project.name }} portal. It works once, for 15 minutes:
{{ links.sign_in }}

If you did not ask for it, ignore this message.

${SIGNATURE}`,
    bot: `Your sign-in link for {{ project.name }} (one use, 15 minutes): {{ links.sign_in }}`,
  },
  join_confirmation: {
    subject: 'Confirm your e-mail address to join {{ project.name }}',
    email: `Hello,

someone, hopefully you, asked to join {{ project.name }}{% if plan %} ({{ plan.name }}){% endif %} with this address. Open this link within 23 hours to confirm it and start your membership (it works once):
{{ links.confirm }}

If you did not ask for it, ignore this message: nothing starts without the link.

${SIGNATURE}`,
    bot: `Confirm your address to join {{ project.name }}: {{ links.confirm }}`,
  },
  gift: {
    subject: 'A gift for you: {{ plan.name }} at {{ project.name }}',
    email: `Hello,

{{ gift.from }} gave you {{ plan.name }} at {{ project.name }}.
{% if gift.message %}
Their message: {{ gift.message }}
{% endif %}
Your one-use code: {{ gift.code }}

Redeem it on the join page with your e-mail address:
{{ gift.redeem_url }}

${SIGNATURE}`,
    bot: `{{ gift.from }} gave you {{ plan.name }} at {{ project.name }}. Your one-use code: {{ gift.code }} (redeem it at {{ gift.redeem_url }}).`,
  },
  broadcast: {
    subject: '{{ broadcast.subject }}',
    email: '{{ broadcast.body }}',
    bot: '{{ broadcast.body }}',
  },
};
