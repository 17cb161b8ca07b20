// One message in full (#/messages/message/ID): who sent it where, its
// priority and whether it asks for an acknowledgement, and per recipient
// where it is (queued, in context, read, acknowledged) and when it was
// delivered (first handed out by a read, a wait, a hook or one of the
// agent's paths), taken into its context (and through which path: wait,
// read, hook, channel, tmux), read (the recipient's read cursor passed it)
// and acknowledged.
import { get } from './api.js';
import { h, fail, keepFocus, time, badge, sender, section } from './ui.js';

export function messageView(root, id) {
  const err = h('p', { class: 'error', role: 'alert', hidden: true });
  const head = h('div', { class: 'meta' });
  const body = h('div', { class: 'body' });
  const table = h('tbody');
  root.append(h('div', { class: 'main' }, h('h2', {}, 'Message ' + id), err, head, body,
    section('Receipts', h('table', { class: 'receipts' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Recipient'), h('th', {}, 'State'), h('th', {}, 'Delivered'), h('th', {}, 'In context'), h('th', {}, 'Read'), h('th', {}, 'Acknowledged'))),
      table))));
  let data = null;

  function render() {
    const m = data.message;
    const where = m.channel ? m.channel : (m.to || []).join(', ');
    const prio = (m.priority || 'PRIORITY_NORMAL').replace('PRIORITY_', '').toLowerCase();
    head.replaceChildren(...[...sender(m), ' → ', where || '—', ' · ', time(m.created_at),
      prio !== 'normal' ? [' ', badge(prio, 'prio-' + prio)] : '',
      m.ack_required ? [' ', badge('acknowledgement asked', 'ack')] : '',
      m.reply_to ? [' · ', h('a', { href: '#/messages/thread/' + m.reply_to }, 'in thread')] : ''].flat());
    body.textContent = m.body;
    const rs = data.receipts || [];
    table.replaceChildren(...(rs.length ? rs.map((r) => h('tr', { 'data-agent': r.agent },
      h('td', {}, h('a', { href: '#/agent/' + encodeURIComponent(r.agent) }, r.agent)),
      h('td', { 'data-col': 'state' }, stateBadge(r.state)),
      h('td', { 'data-col': 'delivered' }, time(r.delivered_at, r.delivered_at ? '' : 'not yet')),
      h('td', { 'data-col': 'in-context' }, r.in_context_at ? [time(r.in_context_at), ' via ', r.via] : h('span', { class: 'muted' }, 'not yet')),
      h('td', { 'data-col': 'read' }, r.read_at ? time(r.read_at) : (r.read ? 'yes' : h('span', { class: 'muted' }, 'not yet'))),
      h('td', { 'data-col': 'acked' }, time(r.acked_at, r.acked_at ? '' : (m.ack_required ? 'awaited' : '—')))))
      : [h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'No recipients.'))]));
  }

  // stateBadge shows a receipt's state in words.
  function stateBadge(s) {
    const word = { QUEUED: 'queued', IN_CONTEXT: 'in context', READ: 'read', ACKNOWLEDGED: 'acknowledged' }[s] || 'queued';
    return badge(word, { queued: 'idle', 'in context': 'parked', read: 'online', acknowledged: 'online' }[word]);
  }

  async function refresh() {
    data = await get('/v1/admin/messages/' + encodeURIComponent(id) + '/receipts');
    fail(err, null);
    keepFocus(render);
  }

  return { refresh, tick: () => data && keepFocus(render), error: (e) => fail(err, e) };
}
