/** @jsx h */
import type { ProblemDocument } from '../../errors.js';
import {
  MAX_BODY_LENGTH,
  MAX_SUBJECT_LENGTH,
  MESSAGE_DELIVERIES,
  type MessagePreview,
  type MessageTemplate,
} from '../../domain/message-templates/schema.js';
import { CsrfField, IdempotencyField, ProblemView } from '../components.js';
import { ActionButton } from '../form-controls.js';
import { h, type Html } from '../../web/html.js';
import type { SignedInRequest } from '../http.js';

/** The message forms (DESIGN D32): a template's values, form and preview, and the delivery field broadcasts share. */

/** The texts of the form, as typed. */
export interface TemplateValues {
  delivery: string;
  subject: string;
  email: string;
  bot: string;
}

/** The form texts of a stored template, to show it for editing. */
export const valuesOfTemplate = (template: MessageTemplate): TemplateValues => ({
  delivery: template.delivery,
  subject: template.email.subject,
  email: template.email.body,
  bot: template.bot.body,
});

/** The form texts of a posted form; a missing field is empty, a missing delivery `preferred`. */
export const valuesOfForm = (form: URLSearchParams): TemplateValues => ({
  delivery: form.get('delivery') ?? 'preferred',
  subject: form.get('email_subject') ?? '',
  email: form.get('email_body') ?? '',
  bot: form.get('bot_body') ?? '',
});

/** The operation input of the form's texts. */
export const inputOf = (values: TemplateValues) => ({
  delivery: values.delivery,
  email: { subject: values.subject, body: values.email },
  bot: { body: values.bot },
});

/** The rendered preview (the element htmx swaps), or an empty placeholder. */
export function PreviewView(props: { preview?: MessagePreview; problem?: ProblemDocument }): Html {
  return (
    <section id="message-preview" aria-live="polite">
      {props.problem ? <ProblemView problem={props.problem} /> : ''}
      {props.preview ? (
        <div class="card">
          <h2>Preview</h2>
          <p>
            <strong>Subject:</strong> <span id="preview-subject">{props.preview.email.subject}</span>
          </p>
          <h3>E-mail</h3>
          <pre id="preview-email">{props.preview.email.text}</pre>
          <h3>Bot message</h3>
          <pre id="preview-bot">{props.preview.bot.text}</pre>
        </div>
      ) : (
        ''
      )}
    </section>
  );
}

/** The `delivery` select of a message form (a template's, a broadcast's): the bot when possible, or every channel. */
export function DeliveryField(props: { id: string; value: string }): Html {
  return (
    <div>
      <label for={props.id}>Delivery</label>
      <select id={props.id} name="delivery">
        {MESSAGE_DELIVERIES.map((delivery) => (
          <option value={delivery} selected={props.value === delivery}>
            {delivery === 'preferred' ? 'the bot when possible, else e-mail' : 'every reachable channel'}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The edit form of one kind, with Save and Preview (htmx posts the form to the preview and swaps it in). */
export function TemplateForm(props: {
  request: SignedInRequest;
  base: string;
  back: string;
  values: TemplateValues;
}): Html {
  const { request, base, values } = props;
  return (
    <form method="post" action={base} class="stack" id="message-template-form">
      <CsrfField viewer={request.viewer} />
      <IdempotencyField />
      <DeliveryField id="template-delivery" value={values.delivery} />
      <div>
        <label for="template-subject">E-mail subject</label>
        <input
          type="text"
          id="template-subject"
          name="email_subject"
          required
          maxlength={String(MAX_SUBJECT_LENGTH)}
          value={values.subject}
        />
      </div>
      <div>
        <label for="template-email">E-mail text</label>
        <textarea id="template-email" name="email_body" rows="12" required maxlength={String(MAX_BODY_LENGTH)}>
          {values.email}
        </textarea>
      </div>
      <div>
        <label for="template-bot">Bot message</label>
        <textarea id="template-bot" name="bot_body" rows="4" required maxlength={String(MAX_BODY_LENGTH)}>
          {values.bot}
        </textarea>
      </div>
      <div class="actions">
        <ActionButton viewer={request.viewer} ability="project:update" label="Save template" />
        <button
          type="submit"
          class="secondary"
          formaction={`${base}/preview`}
          hx-post={`${base}/preview`}
          hx-target="#message-preview"
          hx-select="#message-preview"
          hx-swap="outerHTML"
        >
          Preview
        </button>
        <a href={props.back}>Back to messages</a>
      </div>
    </form>
  );
}
