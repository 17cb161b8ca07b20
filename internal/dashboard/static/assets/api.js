// The hub's REST API with the admin token, and the live change stream.
// The token lives in sessionStorage (this tab only) and travels in the
// Authorization header, never in a URL.

const KEY = 'agent-hub.admin-token';

export function token() { return sessionStorage.getItem(KEY) || ''; }
export function setToken(t) { sessionStorage.setItem(KEY, t); }
export function clearToken() { sessionStorage.removeItem(KEY); }

// ApiError is a refused or failed call: status is the HTTP status and
// message the hub's explanation.
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// api calls the REST API and returns the decoded JSON answer.
export async function api(method, path, body) {
  const init = { method, headers: { Authorization: 'Bearer ' + token() }, cache: 'no-store' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'the hub cannot be reached (' + e.message + ')');
  }
  const text = await res.text();
  let data = {};
  try { data = text ? JSON.parse(text) : {}; } catch { data = { message: text }; }
  if (!res.ok) throw new ApiError(res.status, data.message || res.statusText);
  return data;
}

// get builds a GET call with query parameters (empty values left out).
export function get(path, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '' && v !== null) q.set(k, v);
  const s = q.toString();
  return api('GET', s ? path + '?' + s : path);
}

// messagesTail returns the newest `keep` messages (at most 500, oldest
// first) and the cursor that follows them.
export async function messagesTail(params, keep = 300) {
  const r = await get('/v1/admin/messages', { ...params, newest: true, limit: Math.min(keep, 500) });
  return { messages: r.messages || [], cursor: r.cursor };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// openStream follows the hub's change stream (Server-Sent Events read with
// fetch, so that the token goes in a header). onChange gets the changed
// topics ("all" after each (re)connection, since changes may have been
// missed, and when the hub says this page fell behind); onRows gets each
// "agents" event (the agents' rows that changed, roster.js); onState gets
// "live", "reconnecting" or "refused". After a lost connection it retries
// at once, then every 5 seconds.
export function openStream(onChange, onState, onRows) {
  let stopped = false;
  let ctrl = null;
  (async () => {
    let failures = 0;
    while (!stopped) {
      ctrl = new AbortController();
      try {
        const res = await fetch('/v1/admin/stream', {
          headers: { Authorization: 'Bearer ' + token(), Accept: 'text/event-stream' },
          signal: ctrl.signal, cache: 'no-store',
        });
        if (res.status === 401) { onState('refused'); return; }
        if (res.ok && res.body) {
          failures = 0;
          // A stream without the agents' rows (a person of some projects)
          // has the page read them again when they change.
          let deltas = true;
          await readEvents(res.body, (ev, data) => {
            if (ev === 'hello') { deltas = JSON.parse(data).deltas !== false; onState('live'); onChange(['all']); }
            if (ev === 'change') {
              const topics = JSON.parse(data).topics || ['all'];
              onChange(!deltas && topics.includes('agents') ? [...topics, 'all'] : topics);
            }
            if (ev === 'agents') onRows(JSON.parse(data));
            if (ev === 'resync') onChange(['all']);
          });
        }
      } catch {
        // A lost connection: retried below.
      }
      if (stopped) return;
      onState('reconnecting');
      if (failures++ > 0) await sleep(5000);
    }
  })();
  return { close() { stopped = true; if (ctrl) ctrl.abort(); } };
}

async function readEvents(body, emit) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let ev = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) ev = line.slice(6).trim();
        else if (line.startsWith('data:')) data += line.slice(5).trim();
      }
      if (!block.startsWith(':')) emit(ev, data);
    }
  }
}
