// The agents table (home view): one row per agent, trouble first, with the
// admin actions; a page of rows at a time, with a search and filters. The
// rows are the roster's (roster.js), kept current by the stream.
import { api, get } from './api.js';
import { h, cell, ago, until, badge, fail, dialog, showToken, describe, words, keepFocus } from './ui.js';
import { reachBadge } from './reach.js';
import * as roster from './roster.js';
import { waitingBadge, watchWaiting } from './inbox.js';
import { spendToday, usd, tokens } from './spend.js';

const rank = { anomaly: 0, warning: 1, healthy: 2 };
const presenceRank = { offline: 0, idle: 1, active: 2, waiting: 2 };

// presenceWord maps the API's presence to what a watcher reads.
export function presenceWord(p) {
  return { active: 'online', waiting: 'online', idle: 'idle', offline: 'offline' }[p] || p || 'unknown';
}

// healthCell shows the state and the reason in words.
export function healthCell(health) {
  const state = health?.state || 'healthy';
  const reasons = (health?.findings || []).map((f) => f.text || words(f.kind));
  return [badge(state), reasons.length ? h('span', { class: 'reason' }, ' ' + reasons.join('; ')) : ''];
}

// deepWorkText describes an active deep work declaration.
export function deepWorkText(dw) {
  if (!dw || dw.state !== 'active') return '';
  const left = dw.mode === 'strict' && dw.ends_at ? ' · ' + until(dw.ends_at).replace(/^in /, '') + ' left' : '';
  return dw.mode + ' · ' + dw.planned_activity + left;
}

// agentActions returns the action buttons for one agent; done is called
// after a successful action.
export function agentActions(o, err, done) {
  const a = o.agent;
  const act = (label, fn, cls) => h('button', {
    type: 'button', class: cls || 'small',
    onclick: async () => {
      fail(err, null);
      try {
        await fn();
        done();
      } catch (e) {
        fail(err, { status: e.status, message: label.toLowerCase() + ' ' + a.name + ': ' + describe(e) });
      }
    },
  }, label);
  const dw = o.health?.deep_work;
  return h('span', { class: 'actions' },
    act('Nudge', () => api('POST', `/v1/admin/agents/${a.name}:nudge`, {})),
    dw && dw.state === 'active' ? act('End deep work', async () => {
      if (await dialog('End deep work', h('p', {}, `End ${a.name}'s deep work "${dw.planned_activity}"? Every health check resumes at once.`), { confirm: true, okText: 'End deep work' })) {
        await api('POST', `/v1/admin/agents/${a.name}/deep-work:end`, {});
      }
    }) : '',
    act('Rotate token', async () => {
      if (await dialog('Rotate token', h('p', {}, `Issue a new token for ${a.name}? Its current token stops working now.`), { confirm: true, okText: 'Rotate' })) {
        const r = await api('POST', `/v1/admin/agents/${a.name}:rotateToken`, {});
        await showToken('New token', a.name, r.token);
      }
    }),
    act('Revoke token', async () => {
      if (await dialog('Revoke token', h('p', {}, `Revoke ${a.name}'s token? The agent is refused until you rotate it.`), { confirm: true, okText: 'Revoke' })) {
        await api('POST', `/v1/admin/agents/${a.name}:revokeToken`, {});
      }
    }, 'small danger'),
  );
}

function sortTroubleFirst(list) {
  return list.sort((x, y) =>
    (rank[x.health?.state] ?? 2) - (rank[y.health?.state] ?? 2) ||
    (presenceRank[x.agent.presence] ?? 2) - (presenceRank[y.agent.presence] ?? 2) ||
    x.agent.name.localeCompare(y.agent.name));
}

// PAGE is how many rows the table shows at once; the filters and the
// search find the others.
const PAGE = 200;

const presenceFilters = [['', 'Any presence'], ['online', 'Online'], ['idle', 'Idle'], ['offline', 'Offline']];
const healthFilters = [['', 'Any health'], ['trouble', 'Warning or anomaly'], ['anomaly', 'Anomaly'], ['warning', 'Warning'], ['healthy', 'Healthy']];

function matches(o, f) {
  const a = o.agent;
  const state = o.health?.state || 'healthy';
  if (f.project && a.project !== f.project) return false;
  if (f.presence && presenceWord(a.presence) !== f.presence) return false;
  if (f.health === 'trouble' ? state === 'healthy' : f.health && state !== f.health) return false;
  return !f.text || a.name.includes(f.text) || (a.role || '').toLowerCase().includes(f.text);
}

export function agentsView(root) {
  const err = h('p', { class: 'error', role: 'alert', hidden: true });
  const body = h('tbody');
  const count = h('span', { class: 'muted' });
  const name = h('input', { id: 'new-name', name: 'name', required: true, pattern: '[a-z0-9][a-z0-9._\\-]{0,62}', spellcheck: 'false', placeholder: 'e.g. writer-1' });
  const role = h('input', { id: 'new-role', name: 'role', placeholder: 'optional' });
  let page = 0;
  const again = () => { page = 0; render(); };
  // The filters over the table, and the project of a new agent.
  const search = h('input', { id: 'agent-search', type: 'search', placeholder: 'name or role', spellcheck: 'false', oninput: again });
  const filter = h('select', { id: 'project-filter', onchange: again });
  const presence = h('select', { id: 'presence-filter', onchange: again }, presenceFilters.map(([v, l]) => h('option', { value: v }, l)));
  const health = h('select', { id: 'health-filter', onchange: again }, healthFilters.map(([v, l]) => h('option', { value: v }, l)));
  const newProject = h('select', { id: 'new-project', name: 'project' });
  const shown = h('span', { class: 'muted', role: 'status' });
  const prev = h('button', { type: 'button', class: 'small', onclick: () => { page--; render(); } }, 'Previous');
  const next = h('button', { type: 'button', class: 'small', onclick: () => { page++; render(); } }, 'Next');
  let projects = [];
  let spent = new Map(); // today's spend by agent (spendToday)

  const create = h('form', {
    class: 'inline',
    onsubmit: async (ev) => {
      ev.preventDefault();
      fail(err, null);
      try {
        const r = await api('POST', '/v1/admin/agents', { name: name.value.trim(), role: role.value.trim(), project: newProject.value });
        name.value = '';
        role.value = '';
        await showToken('Agent created', r.agent.name, r.token); // its row comes on the stream
      } catch (e) {
        fail(err, { status: e.status, message: 'create agent: ' + describe(e) });
      }
    },
  },
  h('label', { for: 'new-name' }, 'New agent'), name,
  h('label', { for: 'new-role' }, 'Role'), role,
  h('label', { for: 'new-project' }, 'Project'), newProject,
  h('button', { type: 'submit' }, 'Create agent'));

  root.append(
    h('div', { class: 'bar' }, h('h2', {}, 'Agents ', count), create),
    h('div', { class: 'bar filters' },
      h('span', { class: 'inline' }, h('label', { for: 'agent-search' }, 'Find'), search),
      h('span', { class: 'inline' }, h('label', { for: 'project-filter' }, 'Show'), filter),
      h('label', { for: 'presence-filter', class: 'visually-hidden' }, 'Presence'), presence,
      h('label', { for: 'health-filter', class: 'visually-hidden' }, 'Health'), health),
    err,
    h('div', { class: 'tablewrap' }, h('table', { class: 'agents cards' },
      h('thead', {}, h('tr', {}, ['Agent', 'Presence', 'Health', 'Last activity', 'Deep work', 'Beats', 'Unread', 'Wait', 'Today', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))),
      body)),
    h('p', { class: 'pager' }, prev, ' ', shown, ' ', next),
  );

  function render() {
    const f = { project: filter.value, presence: presence.value, health: health.value, text: search.value.trim().toLowerCase() };
    const total = roster.size();
    const list = sortTroubleFirst([...roster.all()].filter((o) => matches(o, f)));
    count.textContent = list.length === total ? `(${total})` : `(${list.length} of ${total})`;
    const pages = Math.max(1, Math.ceil(list.length / PAGE));
    page = Math.min(Math.max(page, 0), pages - 1);
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
    prev.parentElement.hidden = pages === 1;
    shown.textContent = `rows ${list.length ? page * PAGE + 1 : 0}–${Math.min(list.length, (page + 1) * PAGE)} of ${list.length}`;
    if (!list.length) {
      const none = total ? 'No agent matches these filters.' : (filter.value ? 'No agents in this project yet' : 'No agents yet') + ': create one above, or with hubctl agent add.';
      body.replaceChildren(h('tr', {}, h('td', { colspan: 10, class: 'muted' }, none)));
      return;
    }
    body.replaceChildren(...list.slice(page * PAGE, (page + 1) * PAGE).map((o) => {
      const a = o.agent;
      const hl = o.health || {};
      const sp = spent.get(a.name);
      return h('tr', { 'data-agent': a.name, 'data-key': 'agent:' + a.name, class: 'row-' + (hl.state || 'healthy') },
        cell('Agent', h('a', { href: '#/agent/' + encodeURIComponent(a.name) }, a.name),
          a.role ? h('span', { class: 'role' }, ' ' + a.role) : '',
          projects.length > 1 ? h('span', { class: 'muted project' }, ' · ' + a.project) : ''),
        cell('Presence', badge(presenceWord(a.presence), presenceWord(a.presence)), ' ', reachBadge(a), ' ', waitingBadge(a.name)),
        cell('Health', healthCell(hl)),
        cell('Last activity', ago(hl.last_activity_at)),
        cell('Deep work', deepWorkText(hl.deep_work) || h('span', { class: 'muted' }, '—')),
        cell('Beats', String(roster.sinceLast(o))),
        cell('Unread', String(o.unread_count || 0), o.mention_count > 0 ? h('span', { class: 'muted' }, ` (${o.mention_count} @)`) : ''),
        cell('Wait', o.parked_waits > 0 ? badge('parked', 'parked') : h('span', { class: 'muted' }, 'no')),
        cell('Today', sp ? h('span', { title: `${tokens(sp).toLocaleString('en-US')} tokens, ${sp.requests} requests today (UTC)` }, usd(sp.cost_usd)) : h('span', { class: 'muted' }, '—')),
        cell('Actions', agentActions(o, err, () => {})),
      );
    }));
  }

  // Renders are merged into one per frame: the stream may bring rows
  // several times a second.
  let frame = 0;
  const later = () => { if (!frame) frame = requestAnimationFrame(() => { frame = 0; keepFocus(render); }); };

  // setOptions fills a select with the projects, keeping its choice.
  function setOptions(sel, first) {
    const keep = sel.value;
    sel.replaceChildren(...first.concat(projects.map((p) => [p.name, p.name]))
      .map(([v, label]) => h('option', { value: v }, label)));
    sel.value = [...sel.options].some((o) => o.value === keep) ? keep : sel.options[0].value;
  }

  async function loadProjects() {
    const ps = (await get('/v1/admin/projects')).projects || [];
    if (JSON.stringify(ps.map((p) => p.name)) !== JSON.stringify(projects.map((p) => p.name))) {
      projects = ps;
      setOptions(filter, [['', 'All projects']]);
      setOptions(newProject, []);
      newProject.value = 'default';
    }
  }

  // A row in a project the page does not know yet: the list is re-read.
  const unwatch = roster.watch((names) => {
    if (names && [...names].some((n) => { const p = roster.one(n)?.agent.project; return p && !projects.some((x) => x.name === p); })) {
      loadProjects().then(later, (e) => fail(err, e));
    }
    later();
  });

  // The rows come from the roster (roster.js); a full read only after the
  // stream (re)connected, when topics hold "all".
  async function refresh(topics) {
    if (!topics.has('all')) return;
    await loadProjects();
    await roster.ensure();
    spent = await spendToday();
    keepFocus(render);
  }

  // Usage announces nothing on the stream: today's spend is read again
  // at each tick.
  async function tick() {
    try {
      spent = await spendToday();
    } catch (e) {
      fail(err, e);
    }
    keepFocus(render);
  }

  // A row shows whether its agent waits for a person (the inbox's open items).
  const unwaiting = watchWaiting(later);

  return { refresh, tick, error: (e) => fail(err, e), close: () => { unwatch(); unwaiting(); } };
}
