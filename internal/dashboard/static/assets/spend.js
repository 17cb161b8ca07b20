// What agents spend, as their hosts report it: the daily budgets and
// where each stands, the top spenders of the UTC day, and the fleet's
// spend per day over the last week.
import { get } from './api.js';
import { h, svg, ms, cell, badge, fail, section, keepFocus } from './ui.js';

const stateWords = { ok: 'ok', warned: 'warned (80 %)', reached: 'reached: no tasks', lifted: 'lifted for the day' };
const stateClass = { ok: 'healthy', warned: 'warning', reached: 'anomaly', lifted: 'warning' };

export const usd = (n) => '$' + Number(n || 0).toFixed(2);
const num = (n) => Number(n || 0).toLocaleString('en-US');
// tokens is every token a usage row counts.
export const tokens = (r) => Number(r.input_tokens || 0) + Number(r.output_tokens || 0) + Number(r.cache_read_tokens || 0) + Number(r.cache_creation_tokens || 0);

// utcDay is the start of the UTC day of t (ms).
const utcDay = (t) => { const d = new Date(t); return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()); };

// spendToday reads what each agent spent today (UTC): a Map from the
// agent's name to its usage row.
export async function spendToday() {
  const r = await get('/v1/admin/usage', { group_by: 'agent', since: new Date(utcDay(Date.now())).toISOString() });
  return new Map((r.rows || []).map((x) => [x.agent, x]));
}

const HOUR = 3600 * 1000, DAY = 24 * HOUR;

// agentSpend reads one agent's spend per hour over the last day and per
// UTC day over the last two weeks.
export async function agentSpend(name) {
  const now = Date.now();
  const [hours, days] = await Promise.all([
    get('/v1/admin/usage', { agent: name, group_by: 'hour', since: new Date(Math.floor(now / HOUR) * HOUR - 23 * HOUR).toISOString() }),
    get('/v1/admin/usage', { agent: name, group_by: 'day', since: new Date(utcDay(now) - 13 * DAY).toISOString() }),
  ]);
  return { now, hours: hours.rows || [], days: days.rows || [] };
}

// spendCharts draws an agent's spend (agentSpend): dollars and tokens
// per hour over the last 24 hours, and per UTC day over the last 14.
export function spendCharts(s) {
  return [
    spendChart(s.hours, 'hour', Math.floor(s.now / HOUR) * HOUR - 23 * HOUR, HOUR, 24, (t) => new Date(t).toISOString().slice(11, 16), '24 h ago', 'this hour'),
    spendChart(s.days, 'day', utcDay(s.now) - 13 * DAY, DAY, 14, (t) => new Date(t).toISOString().slice(0, 10), '14 days ago', 'today'),
  ];
}

// spendChart is one chart: n buckets of step from start, dollars above,
// tokens below, each bar titled with its figures.
function spendChart(rows, field, start, step, n, label, from, to) {
  const usdOf = new Array(n).fill(0), tokOf = new Array(n).fill(0);
  for (const r of rows) {
    const i = Math.floor((ms(r[field]) - start) / step);
    if (i >= 0 && i < n) {
      usdOf[i] += Number(r.cost_usd || 0);
      tokOf[i] += tokens(r);
    }
  }
  const W = 720, H = 70, gap = 14, bw = W / n;
  const maxUSD = Math.max(...usdOf) || 1, maxTok = Math.max(...tokOf) || 1;
  const g = svg('svg', { viewBox: `0 0 ${W} ${2 * H + gap + 16}`, role: 'img',
    'aria-label': `Dollars (above) and tokens (below) per ${field} over the last ${n} ${field}s` });
  for (let i = 0; i < n; i++) {
    const title = `${label(start + i * step)}: ${usd(usdOf[i])}, ${num(tokOf[i])} tokens`;
    const uh = (usdOf[i] / maxUSD) * (H - 2), th = (tokOf[i] / maxTok) * (H - 2);
    g.append(svg('g', { class: 'bucket', 'data-at': new Date(start + i * step).toISOString(), 'data-usd': usdOf[i].toFixed(6), 'data-tokens': tokOf[i] },
      svg('title', {}, title),
      svg('rect', { x: i * bw + 1, y: H - uh, width: bw - 2, height: uh, class: 'bar usd' }),
      svg('rect', { x: i * bw + 1, y: H + gap, width: bw - 2, height: th, class: 'bar tokens' })));
  }
  g.append(svg('text', { x: 0, y: 2 * H + gap + 15, class: 'axis' }, from), svg('text', { x: W, y: 2 * H + gap + 15, class: 'axis', 'text-anchor': 'end' }, to));
  const total = usdOf.reduce((a, b) => a + b, 0), totalTok = tokOf.reduce((a, b) => a + b, 0);
  return h('figure', { class: 'chart spend', 'data-by': field }, g,
    h('figcaption', {}, `Per ${field}${field === 'day' ? ' (UTC)' : ''}: dollars above (highest ${usd(Math.max(...usdOf))}), tokens below (highest ${num(Math.max(...tokOf))}); ${usd(total)} and ${num(totalTok)} tokens in all.`));
}

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
