// The orchestrator: last tick, heartbeat pulses, cron jobs and recent
// nudges.
import { api, get } from './api.js';
import { h, cell, time, ago, until, badge, fail, dialog, section, describe, span, keepFocus } from './ui.js';

const blockedWords = {
  ready: 'due now: runs at the next tick',
  disabled: 'off: the agent has not opted in',
  no_instructions: 'off: no instructions to deliver',
  not_due: 'waiting: the interval since the last pulse has not passed',
  outside_active_hours: 'waiting: outside the active hours',
  unanswered: 'blocked: the previous pulse is not answered yet',
  busy: 'yielding: the agent is busy (it made a call moments ago)',
};

const days = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const pad = (n) => String(n).padStart(2, '0');

// cronWords says a 5-field cron expression in words where it is a common
// shape, else quotes it.
export function cronWords(expr) {
  const f = (expr || '').trim().split(/\s+/);
  if (f.length !== 5) return `cron "${expr}"`;
  const [mi, ho, dom, mo, dow] = f;
  const num = (s) => /^\d+$/.test(s);
  const step = (s) => (s.match(/^\*\/(\d+)$/) || [])[1];
  if (dom === '*' && mo === '*' && dow === '*') {
    if (mi === '*' && ho === '*') return 'every minute';
    if (step(mi) && ho === '*') return `every ${step(mi)} minutes`;
    if (num(mi) && ho === '*') return `every hour at minute ${mi}`;
    if (num(mi) && step(ho)) return `every ${step(ho)} hours at minute ${mi}`;
    if (num(mi) && num(ho)) return `every day at ${pad(ho)}:${pad(mi)}`;
  }
  if (num(mi) && num(ho) && dom === '*' && mo === '*') {
    if (num(dow)) return `every ${days[+dow % 7]} at ${pad(ho)}:${pad(mi)}`;
    if (dow === '1-5') return `weekdays at ${pad(ho)}:${pad(mi)}`;
  }
  if (num(mi) && num(ho) && num(dom) && mo === '*' && dow === '*') return `day ${dom} of every month at ${pad(ho)}:${pad(mi)}`;
  return `cron "${expr}"`;
}

function scheduleWords(j, zone) {
  if (j.kind === 'at') return ['once at ', time(j.at)];
  if (j.kind === 'every') return [`every ${span(j.every_seconds * 1000)}`];
  return [cronWords(j.expr), h('span', { class: 'muted' }, ` (hub time${zone && zone !== 'Local' ? ', ' + zone : ''})`)];
}

export function orchestratorView(root, hub) {
  const err = h('p', { class: 'error', role: 'alert', hidden: true });
  const tick = h('dl', { class: 'facts' });
  const pulses = h('tbody');
  const jobs = h('tbody');
  const runs = h('tbody');
  const nudges = h('ol', { class: 'timeline' });
  const table = (cols, body) => h('div', { class: 'tablewrap' }, h('table', { class: 'cards' }, h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col' }, c)))), body));
  root.append(
    h('h2', {}, 'Orchestrator'), err,
    section('Last tick', tick),
    section('Heartbeat pulses', table(['Agent', 'State', 'Next due', 'Last pulse', 'Last output'], pulses)),
    section('Cron jobs', table(['Job', 'Schedule', 'Target', 'Next run', 'Errors', 'Enabled'], jobs)),
    section('Recent cron runs', table(['Job', 'Ran', 'Status', 'Took', 'Error'], runs)),
    section('Recent nudges', nudges),
  );
  let data = null;

  function render() {
    const { info, p, j, r, n } = data;
    tick.replaceChildren(
      h('dt', {}, 'Last tick'), h('dd', {}, info.last_tick_at ? [time(info.last_tick_at), ` (${ago(info.last_tick_at)})`] : 'not yet'),
      h('dt', {}, 'Took'), h('dd', {}, info.last_tick_at ? `${(Number(info.last_tick_micros) / 1000).toFixed(1)} ms` : '—'),
      h('dt', {}, 'Ticks'), h('dd', {}, String(info.ticks)),
      h('dt', {}, 'Last error'), h('dd', {}, info.last_tick_error || 'none'),
      h('dt', {}, 'Beat'), h('dd', {}, String(info.beat)),
      h('dt', {}, 'Hub time zone'), h('dd', {}, (info.time_zone === 'Local' ? 'the hub machine\'s local zone' : info.time_zone) + ' (times here are in your browser\'s zone, ' + Intl.DateTimeFormat().resolvedOptions().timeZone + ')'),
    );
    pulses.replaceChildren(...(p.length ? p.map((s) => h('tr', {},
      cell('Agent', h('a', { href: '#/agent/' + encodeURIComponent(s.config.agent) }, s.config.agent)),
      cell('State', blockedWords[s.blocked_reason || 'ready'] || s.blocked_reason),
      cell('Next due', s.next_due_at ? [time(s.next_due_at), ' ', h('span', { class: 'muted' }, until(s.next_due_at))] : '—'),
      cell('Last pulse', s.last_pulse_at ? ago(s.last_pulse_at) : 'never', s.unanswered ? [' ', badge('unanswered', 'warning')] : ''),
      cell('Last output', s.last_output || h('span', { class: 'muted' }, '—')),
    )) : [h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'No agent has a pulse schedule.'))]));
    jobs.replaceChildren(...(j.length ? j.map((job) => h('tr', { 'data-key': 'job:' + job.name },
      cell('Job', job.name),
      cell('Schedule', scheduleWords(job, info.time_zone)),
      cell('Target', job.target),
      cell('Next run', job.enabled && job.next_run_at ? time(job.next_run_at) : '—'),
      cell('Errors', Number(job.consecutive_errors) ? badge(`${job.consecutive_errors} in a row`, 'warning') : '0'),
      cell('Enabled', h('button', {
        type: 'button', class: 'small', 'aria-pressed': String(job.enabled),
        onclick: async () => {
          fail(err, null);
          try {
            if (job.enabled && !(await dialog('Disable cron job', h('p', {}, `Disable ${job.name}? It stops running until enabled again.`), { confirm: true, okText: 'Disable' }))) return;
            await api('POST', `/v1/admin/cron-jobs/${encodeURIComponent(job.name)}:setEnabled`, { enabled: !job.enabled });
            await refresh(new Set(['all']));
          } catch (e) {
            fail(err, { status: e.status, message: (job.enabled ? 'disable ' : 'enable ') + job.name + ': ' + describe(e) });
          }
        },
      }, job.enabled ? 'Enabled · disable' : 'Disabled · enable')),
    )) : [h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'No cron jobs (create them with hubctl cron create).'))]));
    runs.replaceChildren(...(r.length ? r.map((run) => h('tr', {},
      cell('Job', run.job),
      cell('Ran', time(run.ran_at)),
      cell('Status', badge(run.status, run.status === 'ok' ? 'healthy' : 'anomaly')),
      cell('Took', `${(Number(run.duration_micros) / 1000).toFixed(1)} ms`),
      cell('Error', run.error || '—'),
    )) : [h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'No runs yet.'))]));
    nudges.replaceChildren(...(n.length ? n.slice().reverse().map((e) => h('li', {}, time(e.created_at), ' ',
      h('a', { href: '#/agent/' + encodeURIComponent(e.agent) }, e.agent), ' ', e.detail)) : [h('li', { class: 'muted' }, 'No nudges yet.')]));
  }

  async function refresh(topics) {
    // Pulses and cron runs move with the ticks; a change made here asks
    // for "all" itself.
    if (data && !topics.has('tick') && !topics.has('all')) return;
    const [info, p, j, r, n] = await Promise.all([
      get('/v1/admin/info'), get('/v1/admin/pulses'), get('/v1/admin/cron-jobs'),
      get('/v1/admin/cron-runs', { limit: 20 }), get('/v1/admin/events', { kind: 'nudge', limit: 20 }),
    ]);
    hub.info = info;
    data = { info, p: p.pulses || [], j: j.jobs || [], r: r.runs || [], n: n.events || [] };
    keepFocus(render);
  }

  return { refresh: (ts) => refresh(ts || new Set(['all'])), tick: () => data && keepFocus(render), error: (e) => fail(err, e) };
}
