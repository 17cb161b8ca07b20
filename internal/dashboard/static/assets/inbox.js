// The inbox: what agents ask of people. Approvals (a host's permission
// prompt relayed by its hook, shown as the call that runs: Allow, Deny,
// allow always for the agent or the project what the person sees — the
// host's rule, else this exact call — or, marked as such, every call of
// the tool), questions (ask_human: an option or a free answer) and
// agents waiting at their prompt. Open items first, urgent then oldest
// over all of them, a page at a time; pushed live by the "inbox" topic. The watcher beside it keeps the nav's
// count and raises a browser notification (opt-in) when an urgent item
// arrives while the tab is hidden.
import { api, get } from './api.js';
import { h, time, badge, fail, describe, section, span, keepFocus } from './ui.js';

const kindWords = { approval: 'approval', question: 'question', needs_input: 'waiting for you', budget: 'budget reached' };

// pretty shows a tool's input: its JSON indented, else as it came.
function pretty(body) {
  try { return JSON.stringify(JSON.parse(body), null, 2); } catch { return body || ''; }
}

// waited says how long an item has waited ("4 min").
function waited(it, now = Date.now()) {
  return span(now - Date.parse(it.created_at));
}

// offered is what an "always allow" of approval it covers.
function offered(it) {
  return it.suggested_rule ? `${it.tool}(${it.suggested_rule})` : `this exact ${it.tool} call`;
}

// covers says what a remembered allow covers.
function covers(r) {
  if (r.covers === 'rule') return `${r.tool}(${r.pattern})`;
  if (r.covers === 'call') return `exactly ${r.tool} ${r.pattern}`;
  return `every ${r.tool} call (the whole tool)`;
}

function outcome(it) {
  if (it.kind === 'budget' && it.decision) return `${it.decision === 'raise' ? 'raised' : 'lifted for the day'} by ${it.answered_by}` + (it.answer ? `: ${it.answer}` : '');
  if (it.decision) return `${it.decision === 'allow' ? 'allowed' : 'denied'} by ${it.answered_by}` + (it.remember ? ` (always, for the ${it.remember})` : '') + (it.answer ? `: ${it.answer}` : '');
  if (it.state === 'answered') return `answered by ${it.answered_by}` + (it.answer ? `: ${it.answer}` : '');
  if (it.state === 'expired') return it.ran_at ? 'nobody answered in time; allowed in the terminal' : 'nobody answered in time: left to the terminal';
  if (it.state === 'withdrawn') return 'the agent moved on';
  return it.state;
}

export function inboxView(root) {
  const err = h('p', { class: 'error', role: 'alert', hidden: true });
  const list = h('div', { class: 'inbox-list', 'aria-live': 'polite' });
  const done = h('ol', { class: 'inbox-done' });
  const rules = h('tbody');
  const count = h('span', { class: 'muted' });
  const notify = h('p', { class: 'inbox-notify' });
  let items = [];
  let ruleList = [];
  let last = '';
  let page = ''; // this page's token ('' the first)
  let next = ''; // the next page's, '' on the last
  const pager = h('p', { class: 'inbox-pager' });

  root.append(
    h('div', { class: 'bar' }, h('h2', {}, 'Inbox ', count), notify),
    err,
    list,
    pager,
    section('Recently answered', done),
    section('Remembered allows',
      h('p', { class: 'muted' }, 'Calls allowed without asking until the rule expires: what each covers is the host\'s rule, one exact call, or, when chosen, every call of the tool. Revoke one and those calls ask a person again.'),
      h('div', { class: 'tablewrap' }, h('table', { class: 'cards rules' },
        h('thead', {}, h('tr', {}, ['Covers', 'Agent', 'Project', 'Set by', 'Expires', ''].map((c) => h('th', { scope: 'col' }, c)))),
        rules))),
  );

  function notifyControl() {
    if (!('Notification' in window)) { notify.replaceChildren(); return; }
    if (Notification.permission === 'granted') {
      notify.replaceChildren(h('span', { class: 'muted' }, 'Browser notifications on for urgent items while this tab is hidden.'));
    } else if (Notification.permission === 'denied') {
      notify.replaceChildren(h('span', { class: 'muted' }, 'Browser notifications are blocked for this page (the browser\'s site settings allow them again).'));
    } else {
      notify.replaceChildren(h('button', {
        type: 'button', class: 'quiet', id: 'inbox-notify',
        onclick: async () => { await Notification.requestPermission(); notifyControl(); },
      }, 'Notify me of urgent items'));
    }
  }
  notifyControl();

  // answer posts an answer and refreshes; what went wrong shows in err.
  async function answer(it, body, what) {
    fail(err, null);
    try {
      await api('POST', `/v1/admin/inbox/${it.id}:answer`, body);
      last = '';
      await refresh();
    } catch (e) {
      fail(err, { status: e.status, message: `${what} (item ${it.id}): ${describe(e)}` });
      last = '';
      await refresh().catch(() => {});
    }
  }

  function approvalActions(it) {
    const id = `msg-${it.id}`;
    const msg = h('input', { id, type: 'text', class: 'inbox-message', placeholder: 'optional: why', 'aria-label': `Message to ${it.agent} with the answer` });
    const say = () => msg.value.trim();
    return h('div', { class: 'inbox-actions' },
      h('button', { type: 'button', class: 'allow', onclick: () => answer(it, { decision: 'allow', message: say() }, 'allow') }, 'Allow'),
      h('button', { type: 'button', class: 'danger deny', onclick: () => answer(it, { decision: 'deny', message: say() }, 'deny') }, 'Deny'),
      msg,
      h('span', { class: 'always' },
        h('button', { type: 'button', class: 'small', onclick: () => answer(it, { decision: 'allow', remember: 'agent', message: say() }, 'allow always') },
          `Always allow ${offered(it)} for ${it.agent}`),
        h('button', { type: 'button', class: 'small', onclick: () => answer(it, { decision: 'allow', remember: 'project', message: say() }, 'allow always') },
          `… for project ${it.project}`)),
      h('span', { class: 'always whole-tool' },
        h('button', { type: 'button', class: 'small danger', onclick: () => answer(it, { decision: 'allow', remember: 'agent', remember_whole_tool: true, message: say() }, 'allow every call') },
          `Always allow every ${it.tool} call for ${it.agent} (the whole tool)`)),
    );
  }

  function questionActions(it) {
    const free = h('input', { type: 'text', class: 'inbox-answer', placeholder: 'your answer', 'aria-label': `Answer to ${it.agent}` });
    return h('div', { class: 'inbox-actions' },
      (it.options || []).map((o) => h('button', { type: 'button', class: 'option', onclick: () => answer(it, { answer: o }, 'answer') }, o)),
      h('form', {
        class: 'inline',
        onsubmit: (ev) => { ev.preventDefault(); if (free.value.trim()) answer(it, { answer: free.value.trim() }, 'answer'); },
      }, free, h('button', { type: 'submit' }, 'Send')),
    );
  }

  function waitingActions(it) {
    const text = h('input', { type: 'text', class: 'inbox-answer', placeholder: 'a message for the agent', 'aria-label': `Message to ${it.agent}` });
    return h('div', { class: 'inbox-actions' },
      h('form', {
        class: 'inline',
        onsubmit: (ev) => { ev.preventDefault(); answer(it, { answer: text.value.trim() }, 'reply'); },
      }, text, h('button', { type: 'submit' }, 'Send'), h('button', { type: 'button', class: 'quiet', onclick: () => answer(it, { answer: '' }, 'dismiss') }, 'Dismiss')),
      h('p', { class: 'muted' }, 'It sits at its prompt: answer in its terminal, or send it a message it reads at its next turn.'),
    );
  }

  // budgetActions raise a budget reached (new limits above today's
  // spend) or lift it for the rest of the UTC day.
  function budgetActions(it) {
    const usd = h('input', { type: 'number', min: '0', step: 'any', class: 'inbox-limit', placeholder: '$ per day', 'aria-label': `New dollars per day for the budget ${it.agent} reached` });
    const tokens = h('input', { type: 'number', min: '0', step: '1', class: 'inbox-limit', placeholder: 'tokens per day', 'aria-label': `New tokens per day for the budget ${it.agent} reached` });
    return h('div', { class: 'inbox-actions' },
      h('form', {
        class: 'inline',
        onsubmit: (ev) => {
          ev.preventDefault();
          answer(it, { decision: 'raise', usd_per_day: Number(usd.value) || 0, tokens_per_day: String(Math.trunc(Number(tokens.value) || 0)) }, 'raise');
        },
      }, usd, tokens, h('button', { type: 'submit' }, 'Raise')),
      h('button', { type: 'button', class: 'quiet', onclick: () => answer(it, { decision: 'lift' }, 'lift') }, 'Lift for today'),
      h('p', { class: 'muted' }, 'Its agents get no tasks until the UTC day ends: raise a limit above what is spent, or lift the budget for the rest of the day.'),
    );
  }

  function card(it) {
    const actions = { approval: approvalActions, question: questionActions, needs_input: waitingActions, budget: budgetActions }[it.kind];
    return h('article', { class: `inbox-item kind-${it.kind}${it.urgency === 'urgent' ? ' urgent' : ''}`, 'data-key': 'item:' + it.id, 'data-item': it.id, 'aria-label': `${kindWords[it.kind]} from ${it.agent}` },
      h('header', {},
        badge(kindWords[it.kind] || it.kind, 'kind-' + it.kind),
        it.urgency === 'urgent' ? badge('urgent', 'prio-urgent') : '',
        ' ', h('a', { href: '#/agent/' + encodeURIComponent(it.agent) }, it.agent),
        h('span', { class: 'muted' }, ` · ${it.project} · waiting `, h('span', { class: 'waited' }, waited(it)))),
      h('h3', { class: 'inbox-title' }, it.title),
      it.kind === 'approval' && it.body ? h('details', { open: true }, h('summary', {}, `${it.tool} input, as it runs`), h('pre', { class: 'inbox-body' }, pretty(it.body))) : '',
      (it.kind === 'question' || it.kind === 'budget') && it.body && it.body !== it.title ? h('p', { class: 'inbox-body' }, it.body) : '',
      actions ? actions(it) : '',
    );
  }

  function render() {
    const open = items.filter((it) => it.state === 'open');
    count.textContent = `(${open.length} open${page || next ? ' on this page' : ''})`;
    pager.replaceChildren(
      page ? h('button', { type: 'button', class: 'quiet', onclick: () => { page = ''; last = ''; refresh(); } }, 'First page') : '',
      next ? h('button', { type: 'button', class: 'quiet', onclick: () => { page = next; last = ''; refresh(); } }, 'Next page') : '');
    list.replaceChildren(...(open.length ? open.map(card)
      : [h('p', { class: 'muted empty' }, 'Nothing is waiting for you. Approvals from agents\' permission prompts, their questions and agents waiting at their prompt show here the moment they arrive.')]));
    const closed = items.filter((it) => it.state !== 'open').slice(0, 30);
    done.replaceChildren(...(closed.length ? closed.map((it) => h('li', { 'data-item': it.id, class: 'state-' + it.state },
      badge(kindWords[it.kind] || it.kind, 'kind-' + it.kind), ' ', h('strong', {}, it.agent), ' ', it.title,
      h('div', { class: 'muted' }, outcome(it), ' · ', time(it.answered_at || it.created_at))))
      : [h('li', { class: 'muted' }, 'Nothing answered yet.')]));
    rules.replaceChildren(...(ruleList.length ? ruleList.map((r) => h('tr', { 'data-key': 'rule:' + r.id },
      h('td', { 'data-label': 'Covers' }, covers(r)), h('td', { 'data-label': 'Agent' }, r.agent || 'every agent'),
      h('td', { 'data-label': 'Project' }, r.project), h('td', { 'data-label': 'Set by' }, r.created_by),
      h('td', { 'data-label': 'Expires' }, time(r.expires_at)),
      h('td', {}, h('button', {
        type: 'button', class: 'small danger',
        onclick: async () => {
          fail(err, null);
          try { await api('DELETE', `/v1/admin/inbox/rules/${r.id}`); last = ''; await refresh(); } catch (e) { fail(err, e); }
        },
      }, 'Revoke'))))
      : [h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'None.'))]));
  }

  async function refresh() {
    const q = page ? { limit: 100, page_token: page } : { limit: 100 };
    const [r, rs] = await Promise.all([get('/v1/admin/inbox', q), get('/v1/admin/inbox/rules')]);
    const now = JSON.stringify([r.items || [], rs.rules || [], r.next_page_token || '']);
    if (now === last) return;
    last = now;
    items = r.items || [];
    next = r.next_page_token || '';
    ruleList = rs.rules || [];
    keepFocus(render);
  }

  return {
    refresh,
    tick: () => { for (const el of list.querySelectorAll('[data-item]')) { const it = items.find((x) => x.id === el.dataset.item); const w = el.querySelector('.waited'); if (it && w) w.textContent = waited(it); } },
    error: (e) => fail(err, e),
  };
}

// The agents waiting for a person, from the watcher's last look at the
// open items: agent name → the kinds of its open items.
const waiting = new Map();
const waitingWatchers = new Set();

// waitingFor returns the kinds of the open items of the agent named name.
export function waitingFor(name) {
  return waiting.get(name) || [];
}

// watchWaiting calls fn after each look at the open items; it returns the
// function that stops it.
export function watchWaiting(fn) {
  waitingWatchers.add(fn);
  return () => waitingWatchers.delete(fn);
}

// waitingBadge says on an agent's row that it waits for a person, with
// what it waits for in the title; empty when it does not.
export function waitingBadge(name) {
  const kinds = Object.keys(kindWords).filter((k) => waitingFor(name).includes(k));
  if (!kinds.length) return '';
  return h('a', { href: '#/inbox', class: 'badge warning needs-person', title: 'waiting for a person: ' + kinds.map((k) => kindWords[k] || k).join(', ') }, 'needs you');
}

// inboxWatcher keeps the nav's count of open items and the agents waiting
// for a person, and notifies of new urgent ones while the tab is hidden
// (when the person allowed it).
export function inboxWatcher(countEl) {
  const seen = new Set();
  let first = true;
  return async function check() {
    let r;
    try { r = await get('/v1/admin/inbox', { state: 'open', limit: 100 }); } catch { return 0; }
    const open = r.items || [];
    waiting.clear();
    for (const it of open) waiting.set(it.agent, [...(waiting.get(it.agent) || []), it.kind]);
    for (const fn of waitingWatchers) fn();
    countEl.textContent = open.length ? String(open.length) : '';
    countEl.hidden = !open.length;
    for (const it of open) {
      if (seen.has(it.id)) continue;
      seen.add(it.id);
      if (!first && it.urgency === 'urgent' && document.hidden && 'Notification' in window && Notification.permission === 'granted') {
        const n = new Notification(`${it.agent}: ${kindWords[it.kind] || it.kind}`, { body: it.title, tag: 'hub-inbox-' + it.id });
        n.onclick = () => { window.focus(); location.hash = '#/inbox'; n.close(); };
      }
    }
    first = false;
    return open.length;
  };
}
