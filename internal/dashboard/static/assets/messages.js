// Messages: channels, threads and direct messages with a live feed, and a
// form to post as admin.
import { api, get, messagesTail } from './api.js';
import { h, fail, describe, keepFocus } from './ui.js';
import { messageItem } from './agent.js';
import { messageView } from './receipts.js';

// channelKey names a channel as the admin posts to it: "#name" in the
// default project, "project/#name" in another.
const channelKey = (project, name) => (project && project !== 'default' ? project + '/' + name : name);

// messagesView shows #/messages (all), #/messages/channel/NAME,
// #/messages/direct, #/messages/thread/ID or #/messages/message/ID (one
// message with its receipts).
export function messagesView(root, params) {
  const [mode, arg] = params;
  if (mode === 'message') return messageView(root, arg);
  const err = h('p', { class: 'error', role: 'alert', hidden: true });
  const side = h('nav', { class: 'side', 'aria-label': 'Conversations' });
  const feed = h('ol', { class: 'feed', 'aria-live': 'polite' });
  const title = h('h2');
  let all = [];
  let channels = []; // {name, member_count}
  let cursor = '';
  let loaded = false;

  const to = h('input', { id: 'msg-to', name: 'to', placeholder: '#channel or agent names, comma-separated', spellcheck: 'false', required: true });
  const body = h('textarea', { id: 'msg-body', name: 'body', rows: 3, required: true });
  const sent = h('p', { class: 'muted', role: 'status' });
  if (mode === 'channel' && arg) to.value = arg;
  const form = h('form', {
    class: 'compose',
    onsubmit: async (ev) => {
      ev.preventDefault();
      fail(err, null);
      sent.textContent = '';
      const dest = to.value.trim();
      const req = { body: body.value };
      if (dest.startsWith('#') || dest.includes('/#')) req.channel = dest;
      else req.to = dest.split(',').map((s) => s.trim()).filter(Boolean);
      if (mode === 'thread' && arg) req.reply_to = arg;
      try {
        const r = await api('POST', '/v1/admin/messages', req);
        body.value = '';
        sent.textContent = `Sent (message ${r.message.id}).`;
      } catch (e) {
        fail(err, { status: e.status, message: 'send: ' + describe(e) });
      }
    },
  },
  h('label', { for: 'msg-to' }, 'To'), to,
  h('label', { for: 'msg-body' }, mode === 'thread' ? 'Reply' : 'Message'), body,
  h('p', {}, h('button', { type: 'submit' }, 'Send as admin'), ' ', sent));

  root.append(h('div', { class: 'msgs' }, side, h('div', { class: 'main' }, title, err, form, feed)));

  // threadRoot follows reply_to up to the first message of a thread.
  function threadRoot(m, byID) {
    let cur = m;
    for (let i = 0; i < 50 && cur.reply_to && byID.has(cur.reply_to); i++) cur = byID.get(cur.reply_to);
    return cur.reply_to || cur.id;
  }

  function render() {
    const byID = new Map(all.map((m) => [m.id, m]));
    const members = new Map(channels.map((c) => [channelKey(c.project, c.name), Number(c.member_count)]));
    for (const m of all) if (m.channel && !members.has(channelKey(m.project, m.channel))) members.set(channelKey(m.project, m.channel), null);
    const names = [...members.keys()].sort();
    const threads = [...new Set(all.filter((m) => m.reply_to).map((m) => threadRoot(m, byID)))];
    const link = (href, text, on) => h('li', {}, h('a', { href, 'aria-current': on ? 'page' : false }, text));
    side.replaceChildren(
      h('ul', {}, link('#/messages', 'All messages', !mode), link('#/messages/direct', 'Direct messages', mode === 'direct')),
      h('h3', {}, 'Channels'),
      h('ul', {}, names.length ? names.map((c) => h('li', {},
        h('a', { href: '#/messages/channel/' + encodeURIComponent(c), 'aria-current': mode === 'channel' && arg === c ? 'page' : false }, c),
        members.get(c) !== null ? h('span', { class: 'muted' }, ` · ${members.get(c)} member${members.get(c) === 1 ? '' : 's'}`) : '')) : h('li', { class: 'muted' }, 'none yet')),
      h('h3', {}, 'Threads'),
      h('ul', {}, threads.length ? threads.slice(-20).map((id) => link('#/messages/thread/' + id, (byID.get(id)?.body || 'message ' + id).slice(0, 40), mode === 'thread' && arg === id)) : h('li', { class: 'muted' }, 'none yet')),
    );
    let shown = all;
    if (mode === 'channel') { shown = all.filter((m) => m.channel && channelKey(m.project, m.channel) === arg); title.textContent = arg; }
    else if (mode === 'direct') { shown = all.filter((m) => !m.channel); title.textContent = 'Direct messages'; }
    else if (mode === 'thread') {
      const target = byID.get(arg);
      const root = target ? threadRoot(target, byID) : arg;
      shown = all.filter((m) => m.id === root || threadRoot(m, byID) === root);
      title.textContent = 'Thread';
      // Reply where the message went: its channel, else its sender.
      if (target && !to.value) to.value = (target.channel && channelKey(target.project, target.channel)) || (target.from === 'admin' ? (target.to || []).join(', ') : target.from);
    }
    else title.textContent = 'All messages';
    const list = shown.slice(-200).reverse();
    feed.replaceChildren(...(list.length ? list.map((m) => messageItem(m, { onThread: true })) : [h('li', { class: 'muted' }, 'No messages here yet.')]));
  }

  async function refresh(topics) {
    let changed = false;
    if (!loaded || topics.has('tick') || topics.has('all')) {
      // Joins and leaves show within a tick: "agents" comes with every
      // write call of every agent, far too often to re-read the channels.
      const r = await get('/v1/admin/channels');
      const next = r.channels || [];
      changed = JSON.stringify(next) !== JSON.stringify(channels);
      channels = next;
    }
    if (!loaded) {
      const r = await messagesTail({}, 500);
      all = r.messages;
      cursor = r.cursor;
      loaded = true;
    } else {
      // Any change may be a post: one to a channel nobody else follows
      // wakes no wait, so it comes as "agents" (a write call), not
      // "messages". Fetching what follows the cursor is cheap.
      let news = 0;
      for (let i = 0; i < 20; i++) {
        const r = await get('/v1/admin/messages', { after_id: cursor, limit: 500 });
        news += r.messages.length;
        all = all.concat(r.messages).slice(-1000);
        cursor = r.cursor;
        if (!r.has_more) break;
      }
      if (!news && !changed) return;
    }
    keepFocus(render);
  }

  return { refresh, tick: () => keepFocus(render), error: (e) => fail(err, e) };
}
