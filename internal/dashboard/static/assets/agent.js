// One agent: state, actions, an activity chart with health bands, its
// spend per hour and per day, the timeline of its liveness records and
// events, and its messages.
import { get, messagesTail } from './api.js';
import { h, svg, ms, ago, time, badge, sender, fail, section, words, keepFocus } from './ui.js';
import { presenceWord, healthCell, deepWorkText, agentActions } from './agents.js';
import { reachBadge, pathsList } from './reach.js';
import * as roster from './roster.js';
import { agentSpend, spendCharts } from './spend.js';

const HOURS = 6;
const BUCKET = 10 * 60 * 1000;

// agentView shows one agent; its state is the roster's row, and the rest
// is read again when that row changes (redo asks app.js for a refresh),
// at each tick and after a reconnection.
export function agentView(root, name, hub, redo) {
  const err = h('p', { class: 'error', role: 'alert', hidden: true });
  const head = h('div', { class: 'agenthead', 'data-key': 'head:' + name });
  const chart = h('figure', { class: 'chart' });
  const spend = h('div', { class: 'spendcharts' });
  const timeline = h('ol', { class: 'timeline' });
  const msgs = h('ol', { class: 'feed' });
  root.append(
    h('p', {}, h('a', { href: '#/agents' }, '← All agents')),
    h('h2', {}, name), err, head,
    section(`Activity, last ${HOURS} hours`, chart),
    section('Spend, as its host reports it', spend),
    h('div', { class: 'cols' }, section('Timeline', timeline), section('Messages', msgs)),
  );
  let data = null;

  function renderHead() {
    const { ov } = data;
    head.replaceChildren(
      h('dl', { class: 'facts' },
        h('dt', {}, 'Role'), h('dd', {}, ov.agent.role || '—'),
        h('dt', {}, 'Presence'), h('dd', {}, badge(presenceWord(ov.agent.presence)), ov.parked_waits > 0 ? [' ', badge('parked', 'parked')] : ''),
        h('dt', {}, 'Reachable'), h('dd', { class: 'reach' }, reachBadge(ov.agent), ' ', pathsList(ov.agent)),
        h('dt', {}, 'Health'), h('dd', { class: 'health' }, healthCell(ov.health)),
        h('dt', {}, 'Last activity'), h('dd', {}, ago(ov.health?.last_activity_at)),
        h('dt', {}, 'Deep work'), h('dd', {}, deepWorkText(ov.health?.deep_work) || '—'),
        h('dt', {}, 'Heartbeat ID'), h('dd', {}, ov.agent.current_heartbeat_id || '—'),
        h('dt', {}, 'Unread'), h('dd', {}, String(ov.unread_count || 0)),
        h('dt', {}, 'Waiting for a person'), h('dd', { class: 'asks' }, data.asks.length
          ? data.asks.flatMap((it, i) => [i ? '; ' : '', h('a', { href: '#/inbox' }, it.kind === 'needs_input' ? 'input: ' + it.title : it.title)])
          : '—'),
      ),
      agentActions(ov, err, () => redo(['row'])),
    );
  }

  function renderChart() {
    const now = Date.now();
    const n = (HOURS * 3600 * 1000) / BUCKET;
    const start = now - n * BUCKET;
    const counts = new Array(n).fill(0);
    for (const t of [...data.logs.map((l) => l.created_at), ...data.cps.map((c) => c.created_at)]) {
      const i = Math.floor((ms(t) - start) / BUCKET);
      if (i >= 0 && i < n) counts[i]++;
    }
    const max = Math.max(1, ...counts);
    const W = 720, H = 120, band = 12, bw = W / n;
    const g = svg('svg', { viewBox: `0 0 ${W} ${H + band + 16}`, role: 'img', 'aria-label': `Activity logs and checkpoints per 10 minutes over the last ${HOURS} hours, with health below` });
    counts.forEach((c, i) => {
      const bh = (c / max) * (H - 4);
      g.append(svg('rect', { x: i * bw + 1, y: H - bh, width: bw - 2, height: bh, class: 'bar' }, svg('title', {}, `${c} at ${new Date(start + i * BUCKET).toLocaleTimeString()}`)));
    });
    // Health bands: the state in force over time, from health_changed events.
    const changes = data.events.filter((e) => e.kind === 'health_changed')
      .map((e) => ({ t: ms(e.created_at), state: (e.detail.match(/→\s*(healthy|warning|anomaly)/) || [])[1] }))
      .filter((c) => c.state).sort((a, b) => a.t - b.t);
    let state = 'healthy';
    for (const c of changes) if (c.t <= start) state = c.state;
    let from = start;
    for (const c of changes.filter((c) => c.t > start).concat([{ t: now, state: null }])) {
      g.append(svg('rect', { x: ((from - start) / (now - start)) * W, y: H + 4, width: Math.max(1, ((c.t - from) / (now - start)) * W), height: band, class: 'band ' + state }, svg('title', {}, state)));
      from = c.t;
      if (c.state) state = c.state;
    }
    g.append(svg('text', { x: 0, y: H + band + 15, class: 'axis' }, `${HOURS} h ago`), svg('text', { x: W, y: H + band + 15, class: 'axis', 'text-anchor': 'end' }, 'now'));
    chart.replaceChildren(g, h('figcaption', {}, 'Bars: activity logs and checkpoints per 10 minutes. Band: health (green healthy, amber warning, red anomaly).'));
  }

  function renderTimeline() {
    const items = [];
    for (const l of data.logs) {
      items.push({ t: l.created_at, kind: l.type === 'reflection' ? 'reflection' : 'activity log', cls: l.type, text: `${l.type}: ${l.title}`, more: (l.content || []).join('\n') });
    }
    for (const c of data.cps) items.push({ t: c.created_at, kind: 'checkpoint', cls: 'checkpoint', text: c.current_activity });
    for (const d of data.dws) items.push({ t: d.started_at, kind: 'deep work', cls: 'deepwork', text: `${d.mode}: ${d.planned_activity} (${d.state})` });
    for (const e of data.events) {
      if (e.kind === 'deep_work_started') continue; // shown from the declarations
      items.push({ t: e.created_at, kind: words(e.kind), cls: e.kind, text: e.detail });
    }
    items.sort((a, b) => ms(b.t) - ms(a.t));
    timeline.replaceChildren(...(items.length ? items.slice(0, 200).map((it) =>
      h('li', { class: 'ev-' + it.cls }, time(it.t), ' ', badge(it.kind, 'kind'), ' ', h('span', {}, it.text),
        it.more ? h('pre', { class: 'more' }, it.more) : '')) : [h('li', { class: 'muted' }, 'Nothing recorded yet.')]));
  }

  function renderMessages() {
    const list = data.messages.slice().reverse();
    msgs.replaceChildren(...(list.length ? list.map(messageItem) : [h('li', { class: 'muted' }, 'No messages.')]));
  }

  async function refresh(topics) {
    if (data && !['all', 'row', 'tick', 'inbox'].some((t) => topics.has(t))) return;
    const [, act, ev, dw, m, ib, sp] = await Promise.all([
      roster.ensure(),
      get(`/v1/admin/agents/${encodeURIComponent(name)}/activity`, { limit: 200 }),
      get('/v1/admin/events', { agent: name, limit: 200 }),
      get('/v1/admin/deep-work', { agent: name, limit: 50 }),
      messagesTail({ agent: name }, 100),
      get('/v1/admin/inbox', { state: 'open', limit: 100 }),
      agentSpend(name),
    ]);
    const ov = roster.one(name);
    if (!ov) throw Object.assign(new Error(`no agent named ${name} (or it is disabled)`), { status: 404 });
    data = { ov, logs: act.activity_logs || [], cps: act.checkpoints || [], events: ev.events || [], dws: dw.deep_work || [], messages: m.messages,
      asks: (ib.items || []).filter((it) => it.agent === name), spend: sp };
    fail(err, null);
    keepFocus(() => {
      renderHead();
      renderChart();
      spend.replaceChildren(...spendCharts(data.spend));
      renderTimeline();
      renderMessages();
    });
  }

  const unwatch = roster.watch((names) => {
    if (names && !names.has(name)) return;
    if (data && roster.one(name)) data.ov = roster.one(name);
    redo(['row']);
  });

  return { refresh, tick: () => data && keepFocus(renderHead), error: (e) => fail(err, e), close: unwatch };
}

// messageItem shows one message: sender, where it went, when, the body.
export function messageItem(m, { onThread } = {}) {
  const where = m.channel ? m.channel : (m.to || []).join(', ');
  return h('li', { class: 'msg kind-' + m.kind, 'data-id': m.id, 'data-key': 'msg:' + m.id },
    h('div', { class: 'meta' },
      ...sender(m), ' → ', where || '—', ' · ', time(m.created_at),
      m.kind && m.kind !== 'message' ? [' ', badge(m.kind, 'kind')] : '',
      m.priority === 'PRIORITY_URGENT' || m.priority === 'PRIORITY_HIGH' || m.priority === 'PRIORITY_LOW'
        ? [' ', badge(m.priority.slice(9).toLowerCase(), 'prio-' + m.priority.slice(9).toLowerCase())] : '',
      m.ack_required ? [' ', badge('ack asked', 'ack')] : '',
      ' · ', h('a', { href: '#/messages/message/' + m.id, class: 'receipts-link' }, 'receipts'),
      m.reply_to ? [' · ', h('a', { href: '#/messages/thread/' + m.reply_to }, 'in thread')] : '',
      onThread ? [' · ', h('a', { href: '#/messages/thread/' + m.id }, 'reply')] : ''),
    h('div', { class: 'body' }, m.body));
}
