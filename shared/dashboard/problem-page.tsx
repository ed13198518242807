/** @jsx h */
import type { ProblemDocument } from '../errors.js';
import type { ApiGatewayResult } from '../http/api-gateway.js';
import { h } from '../web/html.js';
import { htmlResult } from '../web/results.js';
import { ProblemView } from './components.js';
import { PublicPage } from './layout.js';

/**
 * A problem as a page for a person (DESIGN D1, D21): the problem document's title, detail and field errors under
 * `title`, with its status, and one link onward (`back`: where to, and what it says).
 */
export function problemPage(
  title: string,
  problem: ProblemDocument,
  back: { href: string; text: string } = { href: '/dashboard', text: 'Back to the dashboard' },
): ApiGatewayResult {
  return htmlResult(
    problem.status,
    <PublicPage title={title}>
      <ProblemView problem={problem} />
      <p>
        <a href={back.href}>{back.text}</a>
      </p>
    </PublicPage>,
  );
}
