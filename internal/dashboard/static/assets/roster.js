// The agents' rows, kept current for every view: one full read of the
// overviews after each (re)connection of the stream, then what the stream
// sends as they change ("agents" events: whole rows, and changes that hold
// only the fields that changed, internal/dashboard/rows.go), so that a
// page watching 10,000 agents costs the hub the changes, not a re-read of
// everything.
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

// change merges a change into the held row: its fields, the agent's and
// the health's field by field, and the removal of those it names as
// cleared (the REST API leaves empty fields out). It returns false when
// the held row is newer, null when no row is held: a change of a row the
// page never read calls for a full read.
function change(c) {
  const r = c.row;
  const name = r.agent?.name;
  const held = name && rows.get(name);
  if (!held) return null;
  if (stamp(held.health?.evaluated_at) > stamp(r.health?.evaluated_at)) return false;
  const next = { ...held, ...r, agent: { ...held.agent, ...r.agent } };
  if (held.health || r.health) next.health = { ...held.health, ...r.health };
  for (const f of c.cleared || []) {
    const [a, b] = f.split('.');
    if (b === undefined) delete next[a];
    else if (next[a]) delete next[a][b];
  }
  rows.set(name, next);
  return true;
}

function emit(names) {
  for (const fn of listeners) fn(names);
}

// applyEvent takes an "agents" event into the held rows; it returns the
// names of the rows that changed, null when a full read is due.
function applyEvent(ev) {
  if (ev.beat !== undefined) beat = Number(ev.beat);
  const names = new Set();
  let lost = false;
  for (const r of ev.rows || []) if (put(r)) names.add(r.agent.name);
  for (const c of ev.changes || []) {
    const ok = change(c);
    if (ok) names.add(c.row.agent.name);
    if (ok === null) lost = true;
  }
  for (const n of ev.gone || []) if (rows.delete(n)) names.add(n);
  return lost ? null : names;
}

// ensure reads every overview when the held rows may be out of date.
export async function ensure() {
  if (!stale) return;
  if (!loading) {
    let lost = false; // an event that came during the read changes a row it does not have
    loading = (async () => {
      const r = await get('/v1/admin/agent-overviews');
      rows.clear();
      for (const o of r.agents || []) put(o);
      stale = false;
      const held = early;
      early = [];
      for (const ev of held) if (!applyEvent(ev)) lost = true;
      emit(null);
    })().finally(() => {
      loading = null;
      if (lost) again();
    });
  }
  await loading;
}

// again reads every overview anew, now: a change came for a row the page
// does not hold. At most once in 5 s, so that whatever made it cannot have
// the page read everything at each event; a failed read waits for the next
// full read (the stream's reconnection, or its resync).
let lastAgain = 0;
function again() {
  if (Date.now() - lastAgain < 5000) return;
  lastAgain = Date.now();
  stale = true;
  ensure().catch(() => {});
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
  if (!names) {
    again();
    return;
  }
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
