// The agents table (home view): one row per agent, trouble first, with the
// admin actions.
import { api, get } from './api.js';
import { h, cell, ago, until, badge, fail, dialog, showToken, describe, words, keepFocus } from './ui.js';
import { reachBadge } from './reach.js';

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

export function agentsView(root) {
  const err = h('p', { class: 'error', role: 'alert', hidden: true });
  const body = h('tbody');
  const count = h('span', { class: 'muted' });
  const name = h('input', { id: 'new-name', name: 'name', required: true, pattern: '[a-z0-9][a-z0-9._\\-]{0,62}', spellcheck: 'false', placeholder: 'e.g. writer-1' });
  const role = h('input', { id: 'new-role', name: 'role', placeholder: 'optional' });
  // Projects: the filter over the table, and the project of a new agent.
  const filter = h('select', { id: 'project-filter', onchange: () => { last = ''; refresh(); } });
  const newProject = h('select', { id: 'new-project', name: 'project' });
  let list = [];
  let projects = [];

  const create = h('form', {
    class: 'inline',
    onsubmit: async (ev) => {
      ev.preventDefault();
      fail(err, null);
      try {
        const r = await api('POST', '/v1/admin/agents', { name: name.value.trim(), role: role.value.trim(), project: newProject.value });
        name.value = '';
        role.value = '';
        await showToken('Agent created', r.agent.name, r.token);
        await refresh();
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
    h('div', { class: 'bar' }, h('h2', {}, 'Agents ', count),
      h('span', { class: 'inline' }, h('label', { for: 'project-filter' }, 'Show'), filter), create),
    err,
    h('div', { class: 'tablewrap' }, h('table', { class: 'agents cards' },
      h('thead', {}, h('tr', {}, ['Agent', 'Presence', 'Health', 'Last activity', 'Deep work', 'Beats', 'Unread', 'Wait', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))),
      body)),
  );

  function render() {
    count.textContent = `(${list.length})`;
    if (!list.length) {
      body.replaceChildren(h('tr', {}, h('td', { colspan: 9, class: 'muted' }, (filter.value ? 'No agents in this project yet' : 'No agents yet') + ': create one above, or with hubctl agent add.')));
      return;
    }
    body.replaceChildren(...list.map((o) => {
      const a = o.agent;
      const hl = o.health || {};
      return h('tr', { 'data-agent': a.name, 'data-key': 'agent:' + a.name, class: 'row-' + (hl.state || 'healthy') },
        cell('Agent', h('a', { href: '#/agent/' + encodeURIComponent(a.name) }, a.name),
          a.role ? h('span', { class: 'role' }, ' ' + a.role) : '',
          projects.length > 1 ? h('span', { class: 'muted project' }, ' · ' + a.project) : ''),
        cell('Presence', badge(presenceWord(a.presence), presenceWord(a.presence)), ' ', reachBadge(a)),
        cell('Health', healthCell(hl)),
        cell('Last activity', ago(hl.last_activity_at)),
        cell('Deep work', deepWorkText(hl.deep_work) || h('span', { class: 'muted' }, '—')),
        cell('Beats', String(a.since_last ?? 0)),
        cell('Unread', String(o.unread_count || 0), o.mention_count > 0 ? h('span', { class: 'muted' }, ` (${o.mention_count} @)`) : ''),
        cell('Wait', o.parked_waits > 0 ? badge('parked', 'parked') : h('span', { class: 'muted' }, 'no')),
        cell('Actions', agentActions(o, err, refresh)),
      );
    }));
  }

  // setOptions fills a select with the projects, keeping its choice.
  function setOptions(sel, first) {
    const keep = sel.value;
    sel.replaceChildren(...first.concat(projects.map((p) => [p.name, p.name]))
      .map(([v, label]) => h('option', { value: v }, label)));
    sel.value = [...sel.options].some((o) => o.value === keep) ? keep : sel.options[0].value;
  }

  let last = '';
  async function refresh() {
    const ps = (await get('/v1/admin/projects')).projects || [];
    if (JSON.stringify(ps.map((p) => p.name)) !== JSON.stringify(projects.map((p) => p.name))) {
      projects = ps;
      setOptions(filter, [['', 'All projects']]);
      setOptions(newProject, []);
      newProject.value = 'default';
      last = '';
    }
    const r = await get('/v1/admin/agent-overviews', { project: filter.value });
    // evaluated_at is the time of the call: leave it out of the comparison.
    const now = JSON.stringify(r.agents || [], (k, v) => (k === 'evaluated_at' ? undefined : v));
    if (now === last) return; // nothing moved: keep the DOM
    last = now;
    list = sortTroubleFirst(r.agents || []);
    keepFocus(render);
  }

  return { refresh, tick: () => keepFocus(render), error: (e) => fail(err, e) };
}
