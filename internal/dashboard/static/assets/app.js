// The dashboard shell: sign-in, the router (#/inbox, #/agents,
// #/agent/NAME, #/messages, #/orchestrator, #/tasks, #/spend) and the live stream that
// tells the shown view what changed. Plain ES modules served as they are: no build step.
import { api, token, setToken, clearToken, openStream } from './api.js';
import { h, describe } from './ui.js';
import { agentsView } from './agents.js';
import { agentView } from './agent.js';
import { messagesView } from './messages.js';
import { orchestratorView } from './orchestrator.js';
import { tasksView } from './tasks.js';
import { spendView } from './spend.js';
import { inboxView, inboxWatcher } from './inbox.js';
import * as roster from './roster.js';

const $ = (id) => document.getElementById(id);
const hub = { info: null }; // GetHubInfo, read at sign-in: version, time zone
let stream = null;
let current = null; // {view, refresh(topics)}
let running = false;
let pending = new Set();
let watchInbox = null; // keeps the nav's count of open inbox items

function route() {
  const parts = (location.hash.replace(/^#\/?/, '') || 'agents').split('/').map(decodeURIComponent);
  switch (parts[0]) {
    case 'agent': return { name: 'agents', make: (root) => agentView(root, parts[1], hub, schedule) };
    case 'messages': return { name: 'messages', make: (root) => messagesView(root, parts.slice(1), hub) };
    case 'orchestrator': return { name: 'orchestrator', make: (root) => orchestratorView(root, hub) };
    case 'tasks': return { name: 'tasks', make: (root) => tasksView(root, hub) };
    case 'inbox': return { name: 'inbox', make: (root) => inboxView(root, hub) };
    case 'spend': return { name: 'spend', make: (root) => spendView(root) };
    default: return { name: 'agents', make: (root) => agentsView(root, hub) };
  }
}

function show() {
  const r = route();
  for (const a of document.querySelectorAll('#nav a[data-view]')) {
    if (a.dataset.view === r.name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const root = h('div', { class: 'view' });
  $('content').replaceChildren(root);
  current?.close?.();
  current = r.make(root);
  schedule(['all']);
}

// schedule refreshes the current view for topics; changes arriving during
// a refresh are merged into one more refresh after it.
function schedule(topics) {
  if (watchInbox && (topics.includes('inbox') || topics.includes('all'))) watchInbox();
  for (const t of topics) pending.add(t);
  if (running || !current) return;
  running = true;
  (async () => {
    while (pending.size && current) {
      const ts = pending;
      pending = new Set();
      const view = current;
      try {
        await view.refresh(ts);
      } catch (e) {
        if (e.status === 401) { signOut(true); return; }
        view.error?.(e);
      }
    }
    running = false;
  })();
}

function setLive(state) {
  const el = $('live');
  el.dataset.state = state;
  el.textContent = { live: 'live', reconnecting: 'reconnecting…', refused: 'token refused' }[state] || '';
  if (state === 'refused') signOut(true);
}

async function signIn(tok) {
  setToken(tok);
  try {
    hub.info = await api('GET', '/v1/admin/info');
  } catch (e) {
    clearToken();
    throw e;
  }
  $('signin').hidden = true;
  $('nav').hidden = false;
  $('signout').hidden = false;
  watchInbox = inboxWatcher($('inbox-count'));
  // The inbox is the first view when anything waits for a person.
  if (!location.hash && (await watchInbox()) > 0) history.replaceState(null, '', '#/inbox');
  roster.setBeat(hub.info.beat);
  stream = openStream((topics) => {
    if (topics.includes('all')) roster.invalidate(); // changes may have been missed
    schedule(topics);
  }, setLive, (ev) => roster.apply(ev));
  show();
}

function signOut(refused) {
  if (stream) stream.close();
  stream = null;
  current?.close?.();
  current = null;
  watchInbox = null;
  roster.invalidate();
  clearToken();
  $('content').replaceChildren();
  $('nav').hidden = true;
  $('signout').hidden = true;
  $('live').textContent = '';
  $('signin').hidden = false;
  if (refused) refusal({ status: 401, message: 'the token is no longer accepted' });
  $('token').focus();
}

function refusal(e) {
  const el = $('signin-error');
  el.hidden = false;
  el.textContent = e.status === 401
    ? 'The hub refused this admin token. Use the content of admin.token in the hub\'s data dir.'
    : 'Sign-in failed: ' + describe(e);
}

$('signin-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const tok = $('token').value.trim();
  $('signin-error').hidden = true;
  try {
    await signIn(tok);
    $('token').value = '';
  } catch (e) {
    refusal(e);
  }
});
$('signout').addEventListener('click', () => signOut(false));
window.addEventListener('hashchange', () => { if (token()) show(); });
// Relative times ("4 min ago") age between changes; nothing is fetched.
setInterval(() => current?.tick?.(), 30000);

if (token()) {
  signIn(token()).catch((e) => { $('signin').hidden = false; refusal(e); });
} else {
  $('signin').hidden = false;
  $('token').focus();
}
