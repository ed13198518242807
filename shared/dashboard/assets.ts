import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';

/**
 * The dashboard's static files (DESIGN D21: no front-end build step): htmx 2 and the SimpleWebAuthn
 * browser bundle exactly as their packages ship them, one small stylesheet and one small script. On
 * Lambda the two vendor files are written into the bundle at build time (`DASHBOARD_VENDOR_FILES`,
 * `lib/function-code.ts`); elsewhere they are read from `node_modules` on first use.
 */

/** The vendor files served under `/dashboard/assets/`, by file name, with the package file each comes from. */
export const VENDOR_FILES = {
  'htmx.min.js': { package: 'htmx.org', file: 'dist/htmx.min.js' },
  'simplewebauthn-browser.min.js': { package: '@simplewebauthn/browser', file: 'dist/bundle/index.umd.min.js' },
} as const;

/** Written in by esbuild for the Lambda bundle: the vendor files' text by file name. */
declare const DASHBOARD_VENDOR_FILES: Record<keyof typeof VENDOR_FILES, string> | undefined;

let vendor: Record<string, string> | null = null;

/** Reads every vendor file's text from `node_modules` (used at build time and by the local server). */
export function readVendorFiles(): Record<keyof typeof VENDOR_FILES, string> {
  const require = createRequire(import.meta.url);
  // A package's `exports` may hide its files: find its folder from its main entry instead.
  const packageFolder = (name: string) => {
    let folder = dirname(require.resolve(name));
    while (
      !existsSync(join(folder, 'package.json')) ||
      (JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { name?: unknown }).name !== name
    ) {
      const parent = dirname(folder);
      if (parent === folder) throw new Error(`Cannot find the folder of the package ${name}`);
      folder = parent;
    }
    return folder;
  };
  return Object.fromEntries(
    Object.entries(VENDOR_FILES).map(([name, source]) => [
      name,
      readFileSync(join(packageFolder(source.package), source.file), 'utf8'),
    ]),
  ) as Record<keyof typeof VENDOR_FILES, string>;
}

const STYLESHEET = `
:root { --ink:#1a1f2b; --muted:#5b6475; --line:#d8dce4; --bg:#f6f7f9; --card:#fff; --accent:#3b4fd8; --accent-ink:#fff;
  --ok:#1d7a46; --warn:#8a5a00; --bad:#b42318; --info:#175cd3; --neutral:#4b5565; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
* { box-sizing: border-box; }
body { margin:0; color:var(--ink); background:var(--bg); font-size:15px; line-height:1.45; }
a { color:var(--accent); }
header.top { display:flex; flex-wrap:wrap; align-items:center; gap:.5rem 1rem; padding:.6rem 1rem; background:var(--card); border-bottom:1px solid var(--line); }
header.top .brand { font-weight:700; margin-right:auto; }
header.top form { margin:0; }
.layout { display:flex; flex-wrap:wrap; }
nav.side { flex:0 0 13rem; padding:1rem; }
nav.side ul { list-style:none; margin:0; padding:0; }
nav.side li a { display:block; padding:.35rem .5rem; border-radius:6px; text-decoration:none; color:var(--ink); }
nav.side li a[aria-current="page"] { background:#e4e8ff; font-weight:600; }
nav.side h2 { font-size:.75rem; text-transform:uppercase; letter-spacing:.05em; color:var(--muted); margin:1rem 0 .3rem; }
main { flex:1 1 20rem; min-width:0; padding:1rem 1.25rem 3rem; max-width:72rem; }
h1 { font-size:1.4rem; margin:.2rem 0 1rem; }
h2 { font-size:1.1rem; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:1rem; margin-bottom:1rem; }
.table-wrap { overflow-x:auto; }
table { width:100%; border-collapse:collapse; background:var(--card); }
th, td { text-align:left; padding:.45rem .6rem; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-size:.8rem; color:var(--muted); font-weight:600; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size:.85em; word-break:break-all; }
.badge { display:inline-block; padding:.05rem .5rem; border-radius:999px; font-size:.8rem; font-weight:600; border:1px solid currentColor; white-space:nowrap; }
.badge.green { color:var(--ok); } .badge.yellow, .badge.orange { color:var(--warn); } .badge.red { color:var(--bad); }
.badge.blue { color:var(--info); } .badge.gray, .badge.purple { color:var(--neutral); }
form.stack { display:grid; gap:.75rem; max-width:64rem; }
form.stack > div { max-width:40rem; }
label { font-weight:600; display:block; margin-bottom:.2rem; }
input[type=text], input[type=password], input[type=url], input[type=email], input[type=number], input[type=datetime-local], select, textarea {
  width:100%; padding:.45rem .55rem; border:1px solid #9aa3b2; border-radius:6px; font:inherit; background:#fff; }
fieldset { border:1px solid var(--line); border-radius:8px; padding:.5rem .75rem; margin:0; }
legend { font-weight:600; padding:0 .25rem; }
.events { display:grid; grid-template-columns:repeat(auto-fill, minmax(16rem, 1fr)); gap:.5rem; }
.events label, .checks label { font-weight:400; display:flex; gap:.4rem; align-items:baseline; margin:0; }
.hint { color:var(--muted); font-size:.85rem; font-weight:400; }
button, .button { display:inline-block; padding:.45rem .9rem; border-radius:6px; border:1px solid var(--accent); background:var(--accent); color:var(--accent-ink);
  font:inherit; font-weight:600; cursor:pointer; text-decoration:none; }
button.secondary, .button.secondary { background:#fff; color:var(--accent); }
button.danger { background:var(--bad); border-color:var(--bad); }
button:disabled { background:#e6e8ec; border-color:#c5cad3; color:#4b5565; cursor:not-allowed; }
.actions { display:flex; flex-wrap:wrap; gap:.5rem; align-items:center; margin:0 0 1rem; }
td .actions { margin:0; }
.actions form { margin:0; } form.stack .actions { margin:0; }
.problem { border:1px solid var(--bad); background:#fff1f0; color:#7a1712; border-radius:8px; padding:.75rem 1rem; margin-bottom:1rem; }
.problem strong { display:block; }
.notice { border:1px solid var(--ok); background:#ecfdf3; color:#0b4a2a; border-radius:8px; padding:.75rem 1rem; margin-bottom:1rem; }
.secret { display:flex; gap:.5rem; align-items:center; flex-wrap:wrap; }
#consent-abilities { columns: 2 16rem; margin:.25rem 0; } #consent-abilities li { break-inside: avoid; }
.secret textarea.copy-value { flex:1 1 14rem; min-width:0; overflow-wrap:anywhere; resize:none; field-sizing:content; font-family: ui-monospace, monospace; }
.secret output { font-family: ui-monospace, monospace; background:#f2f4f7; padding:.4rem .6rem; border-radius:6px; word-break:break-all; }
dl.facts { display:grid; grid-template-columns:max-content 1fr; gap:.3rem 1rem; margin:0; }
dl.facts dt { color:var(--muted); } dl.facts dd { margin:0; min-width:0; word-break:break-word; }
.filters { display:flex; flex-wrap:wrap; gap:.75rem; align-items:end; }
.filters > div { flex:1 1 10rem; }
ol.timeline { margin:0; padding-left:1.2rem; }
ol.timeline pre { white-space:pre-wrap; background:#f2f4f7; padding:.4rem; border-radius:6px; max-height:8rem; overflow:auto; }
.center { max-width:28rem; margin:4rem auto; }
.row { display:grid; grid-template-columns:repeat(auto-fit, minmax(12rem, 1fr)); gap:.75rem; }
form.stack > div.row { max-width:40rem; }
.inline-form { display:flex; flex-wrap:wrap; gap:.5rem; align-items:end; margin:0 0 .75rem; }
.inline-form label { flex-basis:100%; margin:0; }
.inline-form input[type=text] { flex:1 1 14rem; width:auto; }
fieldset.ability-group { margin-top:.5rem; }
fieldset.ability-group legend { text-transform:capitalize; font-weight:600; font-size:.9rem; }
fieldset:disabled { opacity:.7; }
ul.columns { columns:16rem; margin:0; padding-left:1.2rem; }
.card.stack { display:grid; gap:.5rem; }
dl.figures { display:grid; grid-template-columns:repeat(auto-fill, minmax(9rem, 1fr)); gap:.5rem; margin:0 0 1rem; }
dl.figures > div { border:1px solid var(--line); border-radius:8px; padding:.5rem .75rem; }
dl.figures dt { color:var(--muted); font-size:.8rem; } dl.figures dd { margin:0; font-size:1.35rem; font-weight:700; }
.charts { display:grid; grid-template-columns:repeat(auto-fit, minmax(min(100%, 22rem), 1fr)); gap:1rem; margin-top:1rem; }
figure.chart { margin:0; min-width:0; }
figure.chart figcaption { font-weight:600; font-size:.9rem; margin-bottom:.25rem; }
figure.chart svg { display:block; width:100%; height:8rem; overflow:visible; }
.chart-max, .chart-dates { color:var(--muted); font-size:.8rem; }
.chart-dates { display:flex; justify-content:space-between; gap:.5rem; }
.chart-grid { stroke:var(--line); stroke-dasharray:4 4; } .chart-axis-line { stroke:var(--muted); }
.chart-area { fill:var(--accent); fill-opacity:.15; } .chart-line { fill:none; stroke:var(--accent); stroke-width:2; stroke-linejoin:round; }
.chart-bar { fill:var(--ok); }
ul.attention { margin:0; padding-left:1.2rem; } ul.attention li { margin:.25rem 0; }
@media (max-width: 640px) { nav.side { flex-basis:100%; padding:.5rem 1rem 0; } nav.side ul { display:flex; flex-wrap:wrap; gap:.25rem; }
  nav.side h2 { display:none; } main { padding:.75rem; } th, td { padding:.35rem .4rem; }
  table.stacked thead { position:absolute; width:1px; height:1px; overflow:hidden; clip-path:inset(50%); }
  table.stacked tr { display:block; border-bottom:1px solid var(--line); padding:.4rem 0; }
  table.stacked td { display:flex; gap:.75rem; align-items:baseline; border:0; padding:.15rem .5rem; }
  table.stacked td { overflow-wrap:anywhere; }
  table.stacked td::before { content:attr(data-label); flex:0 0 8rem; color:var(--muted); font-size:.8rem; font-weight:600; }
  table.stacked td[colspan]::before { display:none; }
  table.stacked td:empty { display:none; }
  table.stacked td:first-child { font-weight:600; } }
`;

/**
 * The dashboard's own script (no build step): copies a secret to the clipboard, reads an invitation
 * token from the URL fragment into its form, and runs passkey registration and sign-in with the
 * SimpleWebAuthn browser bundle, posting to the dashboard's JSON endpoints with the page's CSRF token.
 */
const SCRIPT = `
(function () {
  function csrf() { var m = document.querySelector('meta[name="csrf-token"]'); return m ? m.content : ''; }
  function post(url, body) {
    return fetch(url, { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf() }, body: JSON.stringify(body || {}) })
      .then(function (r) { return r.json().then(function (j) { if (!r.ok) throw new Error((j && (j.detail || j.title)) || ('HTTP ' + r.status)); return j; }); });
  }
  function say(id, text) { var el = document.getElementById(id); if (el) { el.textContent = text; el.hidden = false; } }
  document.addEventListener('click', function (event) {
    var button = event.target.closest && event.target.closest('[data-copy]');
    if (!button) return;
    var target = document.getElementById(button.getAttribute('data-copy'));
    if (target && navigator.clipboard) navigator.clipboard.writeText((typeof target.value === 'string' ? target.value : target.textContent).trim()).then(function () { button.textContent = 'Copied'; });
  });
  document.addEventListener('DOMContentLoaded', function () {
    var invitation = document.getElementById('invitation-token');
    if (invitation && location.hash.indexOf('token=') >= 0) invitation.value = decodeURIComponent(location.hash.split('token=')[1]);
    var register = document.getElementById('register-passkey');
    if (register) register.addEventListener('click', function () {
      register.disabled = true;
      post('/dashboard/passkeys/registration-options').then(function (start) {
        return SimpleWebAuthnBrowser.startRegistration({ optionsJSON: start.options }).then(function (response) {
          return post('/dashboard/passkeys/register', { challenge_id: start.challenge_id, response: response });
        });
      }).then(function () { location.href = '/dashboard'; }, function (error) { register.disabled = false; say('passkey-error', 'Passkey registration failed: ' + error.message); });
    });
    var signIn = document.getElementById('passkey-sign-in');
    if (signIn) signIn.addEventListener('click', function () {
      signIn.disabled = true;
      post('/dashboard/sign-in/passkey-options').then(function (start) {
        return SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: start.options }).then(function (response) {
          return post('/dashboard/sign-in/passkey', { challenge_id: start.challenge_id, response: response });
        });
      }).then(function () { var back = signIn.getAttribute('data-return-to') || ''; location.href = /^\\/dashboard([\\/?]|$)/.test(back) && back.indexOf('//') < 0 ? back : '/dashboard'; }, function (error) { signIn.disabled = false; say('passkey-error', 'Sign-in failed: ' + error.message); });
    });
  });
})();
`;

/** A static file of the dashboard: its body and content type. */
export interface Asset {
  body: string;
  contentType: string;
}

/** The static file `name` under `/dashboard/assets/`, or null. */
export function assetNamed(name: string): Asset | null {
  if (name === 'dashboard.css') return { body: STYLESHEET, contentType: 'text/css; charset=utf-8' };
  if (name === 'dashboard.js') return { body: SCRIPT, contentType: 'text/javascript; charset=utf-8' };
  if (name in VENDOR_FILES) {
    vendor ??= typeof DASHBOARD_VENDOR_FILES !== 'undefined' ? DASHBOARD_VENDOR_FILES : readVendorFiles();
    return { body: vendor[name], contentType: 'text/javascript; charset=utf-8' };
  }
  return null;
}
