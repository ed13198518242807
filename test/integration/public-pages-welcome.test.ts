/**
 * The welcome page always ends somewhere (DESIGN D26): a free join on a project without a bot explains why there is no
 * invite link, stops polling and links to the portal; a Discord project's text agrees with what its portal shows; and
 * a page still waiting stops polling after a bound, saying what to do next.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createPlan } from '../../shared/domain/plans/creation.js';
import { CreatePlanRequest } from '../../shared/domain/plans/schema.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { joinFreePlanByEmail, runtime, serve, team, usePublicPagesFixture } from '../support/fixtures/public-pages.js';

usePublicPagesFixture();

/**
 * Joins the free plan of a new project on `platform` (no bot connected), confirms by e-mail, opens the welcome page.
 */
async function freeJoin(platform: 'telegram' | 'discord') {
  const project = await createProject(runtime, team.principal, { name: 'Night owls', platform_type: platform });
  const free = await createPlan(
    runtime,
    team.principal,
    project.id,
    CreatePlanRequest.parse({ name: 'Free', amount: 0, currency: 'EUR', interval: 'month' }),
  );
  const { joined, confirmed } = await joinFreePlanByEmail(free.id, 'fan@example.com', { projectId: project.id });
  expect(joined.statusCode).toBe(303);
  expect(confirmed.statusCode).toBe(303);
  const welcome = await serve('GET', confirmed.headers.Location);
  expect(welcome.statusCode).toBe(200);
  return { project, welcome: welcome.body };
}

/** The portal sign-in link the welcome page offers, if any. */
const manageLink = (body: string) => /href="([^"]*\/portal\/[^"]+)"[^>]*>\s*Manage your membership/.exec(body)?.[1];

describe('the welcome page', () => {
  it('explains a Telegram project without a bot, stops polling and links to the portal', async () => {
    const { project, welcome } = await freeJoin('telegram');
    expect(welcome).toContain('has not connected its Telegram bot yet');
    expect(welcome).toContain('<link rel="icon" href="data:image/svg+xml,');
    expect(welcome).not.toContain('on its way');
    expect(welcome).not.toContain('hx-trigger');
    expect(manageLink(welcome)).toContain(`/portal/${project.id}/sign-in?token=`);
  });

  it('says for a Discord project without a bot what its portal will offer, and links to the portal', async () => {
    const { project, welcome } = await freeJoin('discord');
    expect(welcome).toContain('has not connected its Discord server yet');
    expect(welcome).not.toContain('hx-trigger');
    const link = manageLink(welcome)!.replaceAll('&amp;', '&');
    const signedIn = await serve('GET', link);
    const portal =
      signedIn.statusCode === 303
        ? await serve('GET', signedIn.headers.Location, {
            cookies: [signedIn.cookies![0].split(';')[0]],
          })
        : signedIn;
    expect(portal.statusCode).toBe(200);
    expect(portal.body).toContain('Night owls');
    // No bot: the portal has no Discord section yet, as the welcome page said.
    expect(portal.body).not.toContain('Link your Discord account</a>');
    expect(project.bot).toBeNull();
  });

  it('polls every 2 seconds with a count, and after 90 polls stops and says what to do next', async () => {
    const { project } = await freeJoin('telegram');
    const waiting = await serve('GET', `/join/${project.id}/welcome?session_id=cs_test_${randomUUID()}`);
    expect(waiting.body).toContain('We are confirming your payment');
    expect(waiting.body).toMatch(/hx-get="[^"]*polls=1"/);
    const later = await serve('GET', `/join/${project.id}/welcome?session_id=cs_test_${randomUUID()}&polls=41`);
    expect(later.body).toMatch(/hx-get="[^"]*polls=42"/);
    const last = await serve('GET', `/join/${project.id}/welcome?session_id=cs_test_${randomUUID()}&polls=90`);
    expect(last.body).not.toContain('hx-trigger');
    expect(last.body).toContain('This is taking longer than usual');
  });
});
