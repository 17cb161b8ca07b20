// Small DOM and formatting helpers. Text always goes in through
// textContent, never as HTML.

// h creates an element: h('a', {href: '#/x', class: 'c'}, 'text', child...).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';

// svg creates an SVG element with attributes.
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children.flat()) if (c) el.append(c instanceof Node ? c : String(c));
  return el;
}

// ms returns the time of a proto timestamp (RFC 3339) in ms, 0 if unset.
export function ms(t) {
  if (!t) return 0;
  const v = Date.parse(t);
  return isNaN(v) || v <= 0 ? 0 : v;
}

// ago says how long ago t was ("4 min ago"), "never" when unset.
export function ago(t, now = Date.now()) {
  const v = ms(t);
  if (!v) return 'never';
  return span(now - v) + ' ago';
}

// until says how long until t ("in 12 min"), "" when unset.
export function until(t, now = Date.now()) {
  const v = ms(t);
  if (!v) return '';
  const d = v - now;
  return d <= 0 ? span(-d) + ' overdue' : 'in ' + span(d);
}

// span writes a duration in words.
export function span(d) {
  const s = Math.max(0, Math.round(d / 1000));
  if (s < 60) return s + ' s';
  const m = Math.round(s / 60);
  if (m < 60) return m + ' min';
  const hr = Math.floor(m / 60);
  if (hr < 48) return hr + ' h' + (m % 60 ? ' ' + (m % 60) + ' min' : '');
  return Math.round(hr / 24) + ' days';
}

const timeFmt = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const dateFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });

// clock writes t in the browser's zone: the time today, else date and time.
export function clock(t) {
  const v = ms(t);
  if (!v) return '—';
  const d = new Date(v);
  return d.toDateString() === new Date().toDateString() ? timeFmt.format(d) : dateFmt.format(d);
}

// time returns a <time> element showing clock(t) with the full instant in
// its title.
export function time(t, text) {
  const v = ms(t);
  if (!v) return h('span', { class: 'muted' }, text || '—');
  return h('time', { datetime: new Date(v).toISOString(), title: new Date(v).toString() }, text || clock(t));
}

// badge is a small labelled state ("anomaly", "online").
export function badge(text, kind) {
  return h('span', { class: 'badge ' + (kind || text) }, text);
}

// sender names who sent a message and the kind of principal the hub
// recorded (agent, person, admin, hub): an agent's text that says it is
// from a person still shows "agent".
export function sender(m) {
  const kind = (m.sender_kind || 'SENDER_KIND_UNSPECIFIED').replace('SENDER_KIND_', '').toLowerCase();
  return [h('strong', {}, m.from), ' ', badge(kind === 'unspecified' ? 'unknown' : kind, 'sender-' + kind)];
}

// fail shows an error in words inside el (or clears it for null).
export function fail(el, err) {
  el.replaceChildren();
  el.hidden = !err;
  if (err) el.append(h('strong', {}, 'Error: '), describe(err));
}

// describe turns an API error into a sentence.
export function describe(err) {
  const m = err && err.message ? err.message : String(err);
  switch (err && err.status) {
    case 401: return 'the hub refused the admin token (' + m + ').';
    case 403: return 'not allowed: ' + m;
    case 404: return 'not found: ' + m;
    case 429: return 'the hub is busy, retry in a few seconds: ' + m;
    case 0: return m;
    default: return m;
  }
}

// dialog shows the page's dialog with a title and body; with confirm set
// it asks and resolves to true only on OK.
export function dialog(title, body, { confirm = false, okText = 'OK' } = {}) {
  const d = document.getElementById('dialog');
  document.getElementById('dialog-title').textContent = title;
  document.getElementById('dialog-body').replaceChildren(...[].concat(body));
  document.getElementById('dialog-cancel').hidden = !confirm;
  document.getElementById('dialog-ok').textContent = okText;
  d.returnValue = '';
  return new Promise((resolve) => {
    d.addEventListener('close', () => resolve(d.returnValue === 'ok'), { once: true });
    d.showModal();
  });
}

// showToken shows a token once, with a copy button.
export function showToken(title, agent, tok) {
  const field = h('input', { type: 'text', readonly: true, value: tok, 'aria-label': 'Token of ' + agent, class: 'token', spellcheck: 'false' });
  const note = h('span', { class: 'muted', role: 'status' });
  const copy = h('button', {
    type: 'button',
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(tok);
        note.textContent = ' Copied.';
      } catch {
        field.select();
        note.textContent = ' Select the text and copy it (the browser refused the clipboard).';
      }
    },
  }, 'Copy');
  return dialog(title, [
    h('p', {}, 'The token of ', h('strong', {}, agent), ' is shown this once: the hub keeps only its hash.'),
    h('p', { class: 'tokenrow' }, field, ' ', copy, note),
  ]);
}

// section is a titled block.
export function section(title, ...children) {
  return h('section', { class: 'block' }, h('h2', {}, title), ...children);
}

// words turns a stable key ("outside_active_hours") into words.
export function words(key) {
  return (key || '').replace(/_/g, ' ');
}

// cell is a table cell labelled for the narrow layout (where each row is a
// card and the label shows beside the value); its class is the label in
// lower case with dashes.
export function cell(label, ...children) {
  return h('td', { 'data-label': label, class: label.toLowerCase().replace(/\s+/g, '-') }, h('div', { class: 'cell' }, ...children));
}

// keepFocus runs render, which replaces DOM, and puts the keyboard focus
// back on the control with the same text inside the element with the same
// data-key (a row, a message), so that live updates do not throw a keyboard
// user back to the top of the page.
export function keepFocus(render) {
  const el = document.activeElement;
  const holder = el && el.closest ? el.closest('[data-key]') : null;
  const key = holder ? holder.dataset.key : null;
  const tag = el ? el.tagName : '';
  const label = el ? el.textContent : '';
  render();
  if (key === null || document.activeElement !== document.body) return;
  const again = document.querySelector(`[data-key="${CSS.escape(key)}"]`);
  const target = again && [...again.querySelectorAll(tag)].find((e) => e.textContent === label);
  if (target) target.focus();
}
