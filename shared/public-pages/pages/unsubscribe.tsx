/** @jsx h */
import { h, type Html } from '../../web/html.js';
import { csrfRefusal } from '../../web/csrf.js';
import { htmlResult } from '../../web/results.js';
import { runPublicOperation } from '../operations.js';
import { UNSUBSCRIBE_PATH } from '../../domain/messages/paths.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { hasUnsubscribeCsrf, unsubscribeCsrfToken, type PublicRequest } from '../http.js';
import { ErrorPage, MemberPage, NotFoundPage } from './layout.js';

/**
 * The unsubscribe page (DESIGN D32) at `/messages/unsubscribe?token=msu_…`, the link of every non-essential e-mail.
 * GET only shows a confirmation with a button (mail scanners follow links: a GET never opts out, and reads nothing);
 * the button's POST carries the token and the page's CSRF token. RFC 8058 one-click: a POST whose body is
 * `List-Unsubscribe=One-Click` (what mail providers send, without cookies) opts out without a CSRF token — the one
 * exception to the public pages' CSRF check, safe because the secret token in the URL is the credential and opting
 * out is all it can do. Both run `unsubscribeFromMessages`; an unknown or expired token answers the one 404 page.
 */

/** The body of an RFC 8058 one-click unsubscribe POST. */
const ONE_CLICK_FIELD = 'List-Unsubscribe';
const ONE_CLICK_VALUE = 'One-Click';

/** The confirmation page: what unsubscribing means, and the button. */
function ConfirmView(props: { token: string; csrf: string }): Html {
  return (
    <MemberPage title="Unsubscribe from messages">
      <p>
        Stop reminders, news and other non-essential messages about this membership? You will still get essential
        notices: payment problems, access changes and the sign-in links you ask for.
      </p>
      <form method="post" action={UNSUBSCRIBE_PATH}>
        <input type="hidden" name="csrf_token" value={props.csrf} />
        <input type="hidden" name="token" value={props.token} />
        <button type="submit">Unsubscribe</button>
      </form>
    </MemberPage>
  );
}

/** The answer once opted out. */
function UnsubscribedView(): Html {
  return (
    <MemberPage title="You are unsubscribed">
      <p role="status">
        You will only get essential notices from now on: payment problems, access changes and the sign-in links you ask
        for.
      </p>
    </MemberPage>
  );
}

/**
 * `GET /messages/unsubscribe?token=`: the confirmation page (sets the CSRF cookie on a first visit); changes nothing.
 */
export function unsubscribePage(request: PublicRequest): ApiGatewayResult {
  const csrf = unsubscribeCsrfToken(request);
  const token = request.query.get('token') ?? '';
  return htmlResult(200, <ConfirmView token={token} csrf={csrf.token} />, csrf.cookies);
}

/**
 * `POST /messages/unsubscribe`: an RFC 8058 one-click POST (token in the URL) or the confirmation's button (token and
 * CSRF token in the form; 403 without the CSRF token). Opted out: the "unsubscribed" page; an unknown or expired token:
 * the 404 page, nothing changed.
 */
export async function unsubscribe(request: PublicRequest): Promise<ApiGatewayResult> {
  const oneClick = request.form.get(ONE_CLICK_FIELD) === ONE_CLICK_VALUE;
  if (!oneClick && !hasUnsubscribeCsrf(request))
    throw csrfRefusal('This form did not carry its security token; nothing was changed.');
  const token = request.form.get('token') ?? request.query.get('token') ?? '';
  const outcome = await runPublicOperation<{ unsubscribed: boolean }>(request, null, 'unsubscribeFromMessages', {
    token,
  });
  if (!outcome.ok && outcome.problem.code !== 'VALIDATION_FAILED')
    return htmlResult(outcome.problem.status, <ErrorPage problem={outcome.problem} />);
  return outcome.ok && outcome.result.unsubscribed
    ? htmlResult(200, <UnsubscribedView />)
    : htmlResult(404, <NotFoundPage />);
}
