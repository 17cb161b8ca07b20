// Whether a message reaches an agent now, from the agent's reachable,
// paths and retired_at: a badge for its row, and the paths one by one for
// its page.
import { h, ago, badge } from './ui.js';

// reachBadge says in a word whether a message reaches the agent now:
// "reachable" (with its live paths in the title), "unreachable", or
// "retired".
export function reachBadge(a) {
  if (a.retired_at) return h('span', { class: 'badge idle reach', title: 'retired: silent past --retire-after; back at its next call' }, 'retired');
  const live = (a.paths || []).filter((p) => p.live).map((p) => p.kind);
  if (a.reachable) return h('span', { class: 'badge online reach', title: 'reachable through ' + live.join(', ') }, 'reachable');
  const seen = (a.paths || []).map((p) => p.last_seen_at).sort().pop();
  return h('span', { class: 'badge offline reach', title: seen ? 'no live path since ' + new Date(seen).toString() : 'no path seen yet' }, 'unreachable');
}

// pathsList lists each path the agent was seen on: live or not, and when.
export function pathsList(a) {
  const ps = a.paths || [];
  if (!ps.length) return h('span', { class: 'muted' }, 'none seen yet');
  return ps.flatMap((p, i) => [i ? ', ' : '', p.live ? badge(p.kind, 'online') : h('span', { class: 'muted' }, p.kind), ' ', h('span', { class: 'muted' }, ago(p.last_seen_at))]);
}
