import type { SendMailOptions } from 'nodemailer';
import type { OutgoingMail } from './port.js';

/** The nodemailer message of `mail` from `from`: text, optional HTML, and the extra headers as given. */
export function messageOf(mail: OutgoingMail, from: string): SendMailOptions {
  return { from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, headers: mail.headers };
}
