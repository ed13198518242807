/** @jsx h */
/** @jsxFrag Fragment */
/**
 * The dashboard's page layouts (DESIGN D21): the signed-in page with its top bar, navigation and the CSRF
 * token for htmx, and the page without a session. Every text is escaped by the runtime.
 */
import { CsrfField, type Viewer } from './components.js';
import { Favicon } from '../web/components.js';
import { Fragment, h, type Child, type Html } from '../web/html.js';

const NAVIGATION: ReadonlyArray<{ section: string; links: ReadonlyArray<{ href: string; label: string }> }> = [
  { section: 'Overview', links: [{ href: '/dashboard', label: 'Home' }] },
  {
    section: 'Membership',
    links: [
      { href: '/dashboard/projects', label: 'Projects' },
      { href: '/dashboard/team-members', label: 'Team members' },
      { href: '/dashboard/roles', label: 'Roles and groups' },
      { href: '/dashboard/activity', label: 'Activity' },
      { href: '/dashboard/billing', label: 'Billing' },
    ],
  },
  {
    section: 'Settings',
    links: [
      { href: '/dashboard/webhooks', label: 'Webhooks' },
      { href: '/dashboard/webhooks/deliveries', label: 'Deliveries' },
      { href: '/dashboard/tokens', label: 'API tokens' },
      { href: '/dashboard/account', label: 'Your account' },
    ],
  },
];

/** The `<head>` and stylesheet of every page. */
function Head(props: { title: string; csrfToken?: string }): Html {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{props.title} · Membership dashboard</title>
      {props.csrfToken ? <meta name="csrf-token" content={props.csrfToken} /> : ''}
      <Favicon />
      <link rel="stylesheet" href="/dashboard/assets/dashboard.css" />
      <script src="/dashboard/assets/htmx.min.js" defer></script>
      <script src="/dashboard/assets/simplewebauthn-browser.min.js" defer></script>
      <script src="/dashboard/assets/dashboard.js" defer></script>
    </head>
  );
}

/**
 * A signed-in page: top bar (team, member, sign-out), navigation (`current` marks the link of this page)
 * and the content. The body carries the CSRF token for every htmx request (`hx-headers`).
 */
export function Page(props: { title: string; viewer: Viewer; current: string; children?: Child }): Html {
  const { viewer } = props;
  return (
    <html lang="en">
      <Head title={props.title} csrfToken={viewer.csrfToken} />
      <body hx-headers={JSON.stringify({ 'X-CSRF-Token': viewer.csrfToken })}>
        <header class="top">
          <span class="brand">{viewer.team.name}</span>
          <span class="hint">
            {viewer.member.name} ({viewer.member.email})
          </span>
          <form method="post" action="/dashboard/sign-out">
            <CsrfField viewer={viewer} />
            <button type="submit" class="secondary">
              Sign out
            </button>
          </form>
        </header>
        <div class="layout">
          <nav class="side" aria-label="Dashboard">
            {NAVIGATION.map((group) => (
              <>
                <h2>{group.section}</h2>
                <ul>
                  {group.links.map((link) => (
                    <li>
                      <a href={link.href} aria-current={link.href === props.current ? 'page' : undefined}>
                        {link.label}
                      </a>
                    </li>
                  ))}
                </ul>
              </>
            ))}
          </nav>
          <main id="main">
            <h1>{props.title}</h1>
            {props.children}
          </main>
        </div>
      </body>
    </html>
  );
}

/** A page without a session (sign-in, sign-in links, invitations). */
export function PublicPage(props: { title: string; children?: Child }): Html {
  return (
    <html lang="en">
      <Head title={props.title} />
      <body>
        <main class="center">
          <h1>{props.title}</h1>
          {props.children}
        </main>
      </body>
    </html>
  );
}
