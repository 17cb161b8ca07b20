// The agents' rows, kept current for every view: one full read of the
// overviews after each (re)connection of the stream, then the rows the
// stream sends as they change ("agents" events), so that a page watching
// 10,000 agents costs the hub the changes, not a re-read of everything.
import { get } from './api.js';

const rows = new Map(); // name → overview, as GET /v1/admin/agent-overviews gives it
const listeners = new Set();
let beat = null; // the hub's beat, from the stream; since_last is counted from it
let stale = true; // a full read is due (never read, or the stream reconnected)
let loading = null; // the full read in flight
let early = []; // events that came during the full read

// stamp turns an RFC 3339 time into a string that sorts as the time does
// (nanoseconds kept: two reads within a millisecond still compare).
function stamp(t) {
  if (!t) return '';
  const m = /^(.*?)(?:\.(\d+))?Z$/.exec(t);
  return m ? m[1] + '.' + (m[2] || '').padEnd(9, '0') : t;
}

// put keeps the newer of the held row and r (by the time the hub read
// them): a row the stream sent before the full read must not undo it.
function put(r) {
  const name = r.agent?.name;
  if (!name) return false;
  const held = rows.get(name);
  if (held && stamp(held.health?.evaluated_at) > stamp(r.health?.evaluated_at)) return false;
  if (r.agent.disabled) rows.delete(name);
  else rows.set(name, r);
  return true;
}

function emit(names) {
  for (const fn of listeners) fn(names);
}

function applyEvent(ev) {
  if (ev.beat !== undefined) beat = Number(ev.beat);
  const names = new Set();
  for (const r of ev.rows || []) if (put(r)) names.add(r.agent.name);
  for (const n of ev.gone || []) if (rows.delete(n)) names.add(n);
  return names;
}

// ensure reads every overview when the held rows may be out of date.
export async function ensure() {
  if (!stale) return;
  if (!loading) {
    loading = (async () => {
      const r = await get('/v1/admin/agent-overviews');
      rows.clear();
      for (const o of r.agents || []) put(o);
      stale = false;
      const held = early;
      early = [];
      for (const ev of held) applyEvent(ev);
      emit(null);
    })().finally(() => { loading = null; });
  }
  await loading;
}

// invalidate asks for a full read at the next ensure (after the stream
// reconnected, or when it says it lost events).
export function invalidate() {
  stale = true;
}

// apply takes an "agents" event of the stream.
export function apply(ev) {
  if (loading) {
    early.push(ev);
    return;
  }
  if (stale) return; // the next full read has them
  const names = applyEvent(ev);
  if (names.size) emit(names);
}

// setBeat records the hub's beat (from the sign-in).
export function setBeat(b) {
  if (b !== undefined && b !== null) beat = Number(b);
}

// sinceLast is the agent's beats since its last call, counted from the
// newest beat the page knows.
export function sinceLast(o) {
  const a = o.agent || {};
  if (beat === null || a.last_interaction_beat === undefined) return Number(a.since_last || 0);
  return Math.max(0, beat - Number(a.last_interaction_beat || 0));
}

// all returns the held rows.
export function all() {
  return rows.values();
}

// one returns the row of the agent named name, if held.
export function one(name) {
  return rows.get(name);
}

// size is the number of rows held.
export function size() {
  return rows.size;
}

// watch calls fn after rows change (with the changed names, or null when
// everything was read again); it returns the function that stops it.
export function watch(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}
