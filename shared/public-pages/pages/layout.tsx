/** @jsx h */
import { Favicon, ProblemView } from '../../web/components.js';
import { h, type Child, type Html } from '../../web/html.js';
import type { ProblemDocument } from '../../errors.js';

/**
 * The layout of the public pages (DESIGN D26, D27): the dashboard's stylesheet and htmx (only the welcome
 * page uses it, to poll), no other script; one column that reads at 375 px. Every text is escaped by the
 * dashboard's JSX runtime.
 */

/** A public page: `title` as heading, `site` (the project's name) in the top bar, then the content. */
export function MemberPage(props: { title: string; site?: string; children?: Child }): Html {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="htmx-config" content='{"includeIndicatorStyles":false}' />
        <title>{props.site ? `${props.title} · ${props.site}` : props.title}</title>
        <Favicon />
        <link rel="stylesheet" href="/dashboard/assets/dashboard.css" />
        <script src="/dashboard/assets/htmx.min.js" defer></script>
      </head>
      <body>
        {props.site ? (
          <header class="top">
            <span class="brand">{props.site}</span>
          </header>
        ) : (
          ''
        )}
        <main class="center">
          <h1>{props.title}</h1>
          {props.children}
        </main>
      </body>
    </html>
  );
}

/**
 * The one "not found" page of every public route: no such project, not yours, an unknown or expired link all look the
 * same.
 */
export function NotFoundPage(): Html {
  return (
    <MemberPage title="Page not found">
      <p>This page does not exist, or the link has expired.</p>
    </MemberPage>
  );
}

/** A page for a refused or failed request: the problem's title, detail and hint (never a stack trace). */
export function ErrorPage(props: { problem: ProblemDocument }): Html {
  return (
    <MemberPage title={props.problem.title}>
      <ProblemView problem={props.problem} />
    </MemberPage>
  );
}
