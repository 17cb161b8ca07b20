// What agents spend, as their hosts report it: the daily budgets and
// where each stands, the top spenders of the UTC day, and the fleet's
// spend per day over the last week.
import { get } from './api.js';
import { h, cell, badge, fail, section, keepFocus } from './ui.js';

const stateWords = { ok: 'ok', warned: 'warned (80 %)', reached: 'reached: no tasks', lifted: 'lifted for the day' };
const stateClass = { ok: 'healthy', warned: 'warning', reached: 'anomaly', lifted: 'warning' };

const usd = (n) => '$' + Number(n || 0).toFixed(2);
const num = (n) => Number(n || 0).toLocaleString('en-US');

// limit writes a day's spend against a limit ("—": none).
function limit(spent, max, fmt) {
  return Number(max) ? `${fmt(spent)} of ${fmt(max)}` : '—';
}

export function spendView(root) {
  const err = h('p', { class: 'error', role: 'alert', hidden: true });
  const budgets = h('tbody');
  const top = h('tbody');
  const days = h('tbody');
  const table = (cols, body) => h('div', { class: 'tablewrap' }, h('table', { class: 'cards' }, h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col' }, c)))), body));
  root.append(
    h('h2', {}, 'Spend'), err,
    h('p', { class: 'muted' }, 'As the agents\' hosts report it over OTLP; days are UTC days. Budgets are set with hubctl budgets set.'),
    section('Budgets', table(['Budget of', 'Dollars today', 'Tokens today', 'State', 'Set by'], budgets)),
    section('Top spenders today', table(['Agent', 'Dollars', 'Tokens', 'Requests'], top)),
    section('The last 7 days', table(['Day', 'Dollars', 'Tokens', 'Requests'], days)),
  );
  let data = null;

  function render() {
    const { b, t, d } = data;
    budgets.replaceChildren(...(b.length ? b.map((x) => h('tr', { 'data-budget': x.agent ? 'agent:' + x.agent : 'project:' + x.project },
      cell('Budget of', x.agent ? ['agent ', h('a', { href: '#/agent/' + encodeURIComponent(x.agent) }, x.agent)] : 'project ' + x.project),
      cell('Dollars today', limit(x.spent_usd, x.usd_per_day, usd)),
      cell('Tokens today', limit(x.spent_tokens, x.tokens_per_day, num)),
      cell('State', badge(stateWords[x.state] || x.state, stateClass[x.state] || '')),
      cell('Set by', x.set_by || '—'),
    )) : [h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'No budgets.'))]));
    const tokens = (r) => Number(r.input_tokens) + Number(r.output_tokens) + Number(r.cache_read_tokens) + Number(r.cache_creation_tokens);
    top.replaceChildren(...(t.length ? t.map((r) => h('tr', { 'data-agent': r.agent },
      cell('Agent', h('a', { href: '#/agent/' + encodeURIComponent(r.agent) }, r.agent)),
      cell('Dollars', usd(r.cost_usd)),
      cell('Tokens', num(tokens(r))),
      cell('Requests', num(r.requests)),
    )) : [h('tr', {}, h('td', { colspan: 4, class: 'muted' }, 'Nothing reported today.'))]));
    days.replaceChildren(...(d.length ? d.map((r) => h('tr', {},
      cell('Day', (r.day || '').slice(0, 10)),
      cell('Dollars', usd(r.cost_usd)),
      cell('Tokens', num(tokens(r))),
      cell('Requests', num(r.requests)),
    )) : [h('tr', {}, h('td', { colspan: 4, class: 'muted' }, 'Nothing reported this week.'))]));
  }

  // refresh reads it all again when shown and when the inbox changes (a
  // budget reached or answered); usage alone announces nothing.
  async function refresh(topics) {
    if (data && !topics.has('all') && !topics.has('inbox')) return;
    const now = new Date();
    const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const week = new Date(today.getTime() - 6 * 86400000);
    const [b, t, d] = await Promise.all([
      get('/v1/admin/budgets'),
      get('/v1/admin/usage', { group_by: 'agent', since: today.toISOString() }),
      get('/v1/admin/usage', { group_by: 'day', since: week.toISOString() }),
    ]);
    const rows = (t.rows || []).slice().sort((x, y) => Number(y.cost_usd) - Number(x.cost_usd) || (x.agent < y.agent ? -1 : 1));
    data = { b: b.budgets || [], t: rows.slice(0, 20), d: (d.rows || []).slice().reverse() };
    keepFocus(render);
  }

  return { refresh: (ts) => refresh(ts || new Set(['all'])), error: (e) => fail(err, e) };
}
