/** @jsx h */
import { ProblemView } from '../../web/components.js';
import { h, type Html } from '../../web/html.js';
import { htmlResult } from '../../web/results.js';
import { runPublicOperation } from '../operations.js';
import { SIGN_IN_LINK_LIFETIME_MS } from '../../domain/portal-sessions/links.js';
import { Email } from '../../domain/subscribers/schema.js';
import { ProblemError, toProblem, type ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { formText } from '../../web/request.js';
import type { PublicRequest } from '../http.js';
import type { JoinContext } from '../join-context.js';
import { MemberPage } from './layout.js';

/**
 * "E-mail me a sign-in link" (DESIGN D32): the form on the join page and the signed-out portal, and its one answer.
 * The form posts the address to `…/sign-in-link` (with its page's CSRF token); `requestSignInLink` queues the link
 * and the page says the same for every address, known or not, within the limit or past it. No idempotency key: the
 * message's occasion already makes a repeat within 15 minutes send nothing.
 */

/** Minutes an e-mailed sign-in link works, as the pages say it. */
const LIFETIME_MINUTES = SIGN_IN_LINK_LIFETIME_MS / 60_000;

/** The "E-mail me a sign-in link" form posting to `action`, with its CSRF token and a labelled e-mail field. */
export function SignInLinkForm(props: { action: string; csrf: string; heading: string }): Html {
  return (
    <section class="card" aria-labelledby="sign-in-link-heading">
      <h2 id="sign-in-link-heading">{props.heading}</h2>
      <p class="hint">
        We e-mail a link that signs you in to your membership portal. It works once within {LIFETIME_MINUTES} minutes.
      </p>
      <form method="post" action={props.action}>
        <input type="hidden" name="csrf_token" value={props.csrf} />
        <div>
          <label for="sign-in-link-email">Your e-mail address</label>
          <input type="email" id="sign-in-link-email" name="email" required maxlength="254" autocomplete="email" />
        </div>
        <button type="submit">E-mail me a sign-in link</button>
      </form>
    </section>
  );
}

/** The one answer to a sign-in link request, whatever the address and the project. */
function SignInLinkSent(): Html {
  return (
    <MemberPage title="Check your inbox">
      <p role="status">
        If that address belongs to a membership here, a sign-in link is on its way; it works once within{' '}
        {LIFETIME_MINUTES} minutes.
      </p>
    </MemberPage>
  );
}

/** A refused request (a malformed address, a failure): the problem above the form again. */
function SignInLinkRefused(props: { problem: ProblemDocument; action: string; csrf: string }): Html {
  return (
    <MemberPage title="E-mail me a sign-in link">
      <ProblemView problem={props.problem} />
      <SignInLinkForm action={props.action} csrf={props.csrf} heading="Try again" />
    </MemberPage>
  );
}

/**
 * `POST …/sign-in-link` (the caller checked the form's CSRF token): runs `requestSignInLink` as the project's join
 * principal (surface `portal`) and answers the one page; `context` null (no such project) answers the same pages
 * without running anything. A malformed address shows the form again with its problem.
 */
export async function requestSignInLinkPage(
  request: PublicRequest,
  projectId: string,
  context: JoinContext | null,
  form: { action: string; csrf: string },
): Promise<ApiGatewayResult> {
  const email = formText(request.form, 'email') ?? '';
  if (!context && !Email.safeParse(email).success)
    return htmlResult(422, <SignInLinkRefused problem={malformed(request.requestId)} {...form} />);
  if (!context) return htmlResult(200, <SignInLinkSent />);
  const outcome = await runPublicOperation(request, context.principal, 'requestSignInLink', {
    project_id: projectId,
    email,
  });
  if (outcome.ok) return htmlResult(200, <SignInLinkSent />);
  const problem = outcome.problem.code === 'VALIDATION_FAILED' ? malformed(request.requestId) : outcome.problem;
  return htmlResult(problem.status, <SignInLinkRefused problem={problem} {...form} />);
}

/** The problem of an address that is not one (the same whether the project exists or not). */
function malformed(requestId: string): ProblemDocument {
  return toProblem(new ProblemError('VALIDATION_FAILED', 'Enter a valid e-mail address.'), requestId).problem;
}
