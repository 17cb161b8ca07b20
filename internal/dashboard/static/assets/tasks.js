// The task board: one column per state, a card per task, patched in place
// as tasks change (the stream's "tasks" topic: only the tasks updated since
// the last look are read), so a board of thousands of tasks is built once.
// Cards show readiness, dependencies, the holder's presence and last
// checkpoint; the admin creates, edits, reassigns and cancels.
import { api, get } from './api.js';
import { h, badge, fail, dialog, ago, ms } from './ui.js';

const STATES = ['open', 'claimed', 'blocked', 'done', 'cancelled'];
const PAGE = 500;

export function tasksView(root, hub) {
  const err = h('p', { class: 'error', role: 'alert', hidden: true });
  const project = h('select', { id: 'board-project', 'aria-label': 'Project' }, h('option', { value: '' }, 'every project'));
  const label = h('input', { id: 'board-label', type: 'search', placeholder: 'label', 'aria-label': 'Label', spellcheck: 'false' });
  const count = h('span', { class: 'muted', role: 'status' });
  const cols = {};
  const lists = {};
  for (const s of STATES) {
    lists[s] = h('ol', { class: 'cards-list', 'aria-label': s + ' tasks' });
    cols[s] = h('section', { class: 'column', 'data-state': s }, h('h3', {}, s, ' ', h('span', { class: 'n muted' })), lists[s]);
  }
  const board = h('div', { class: 'board', id: 'board' }, STATES.map((s) => cols[s]));
  root.append(
    h('h2', {}, 'Tasks'), err,
    h('div', { class: 'toolbar' }, project, ' ', label, ' ', h('button', { type: 'button', onclick: () => create() }, 'New task'), ' ', count),
    board,
  );

  const tasks = new Map(); // id → task
  const cards = new Map(); // id → card element
  const details = new Map(); // id → {checkpoint, at}: claimed tasks' last checkpoint
  let agents = new Map(); // name → presence
  let since = 0; // the newest updated_at seen (ms): the next look reads from there
  let loaded = false;

  const visible = (t) => (!project.value || t.project === project.value) && (!label.value || (t.labels || []).includes(label.value.trim().toLowerCase()));

  function card(t) {
    const ready = t.ready;
    const deps = (t.depends_on || []).map((d) => {
      const dt = tasks.get(d);
      return h('a', { href: '#/tasks', class: 'dep' + (dt && dt.state === 'done' ? ' done' : ''), title: dt ? dt.title : '', onclick: (e) => { e.preventDefault(); focusCard(d); } }, '#' + d);
    });
    const holder = [];
    if (t.state === 'claimed' && t.assignee) {
      const p = agents.get(t.assignee) || 'offline';
      holder.push(h('p', { class: 'holder' }, badge(p, p), ' ', h('strong', {}, t.assignee)));
      const d = details.get(t.id);
      if (d && d.checkpoint) holder.push(h('p', { class: 'checkpoint muted' }, '“' + d.checkpoint.current_activity + '” ', ago(d.checkpoint.created_at)));
    } else if (t.assignee) {
      holder.push(h('p', { class: 'muted' }, (t.state === 'done' ? 'done by ' : 'by ') + t.assignee));
    }
    return h('li', { class: 'task' + (ready ? ' ready' : ''), 'data-task': t.id, 'data-key': 'task-' + t.id, tabindex: '0' },
      h('p', { class: 'head' }, h('span', { class: 'muted' }, '#' + t.id), ' ',
        ready ? badge('ready', 'ready') : null, t.priority && t.priority !== 'PRIORITY_NORMAL' ? badge(prio(t.priority), prio(t.priority)) : null,
        project.value ? null : h('span', { class: 'muted' }, ' ' + t.project)),
      h('p', { class: 'title' }, t.title),
      deps.length ? h('p', { class: 'deps' }, 'after ', deps) : null,
      (t.labels || []).length ? h('p', { class: 'labels' }, t.labels.map((l) => h('span', { class: 'label' }, l))) : null,
      holder, t.result ? h('p', { class: 'result muted' }, t.result) : null);
  }

  // A card's admin buttons are made when it is pointed at or focused,
  // not for every card of the board.
  function withActions(el) {
    const t = el && tasks.get(el.dataset.task);
    if (!t || el.querySelector('.actions') || t.state === 'done' || t.state === 'cancelled') return;
    el.append(h('p', { class: 'actions' },
      h('button', { type: 'button', class: 'quiet', onclick: () => edit(t.id) }, 'Edit'),
      h('button', { type: 'button', class: 'quiet', onclick: () => reassign(t.id) }, 'Assign'),
      h('button', { type: 'button', class: 'quiet', onclick: () => cancel(t.id) }, 'Cancel')));
  }
  for (const ev of ['pointerover', 'focusin']) board.addEventListener(ev, (e) => withActions(e.target.closest?.('li.task')));

  const prio = (p) => String(p).replace('PRIORITY_', '').toLowerCase();

  // place puts t's card in its column, in ID order, replacing the old one.
  function place(t) {
    const old = cards.get(t.id);
    if (!visible(t)) {
      if (old) old.remove();
      cards.delete(t.id);
      return;
    }
    const el = card(t);
    cards.set(t.id, el);
    const list = lists[t.state] || lists.open;
    if (old && old.parentNode === list) { old.replaceWith(el); return; }
    if (old) old.remove();
    // Cards are kept in ID order: insert before the first larger ID.
    let next = null;
    for (let c = list.lastElementChild; c; c = c.previousElementSibling) {
      if (Number(c.dataset.task) < Number(t.id)) break;
      next = c;
    }
    list.insertBefore(el, next);
  }

  function counts() {
    for (const s of STATES) cols[s].querySelector('.n').textContent = lists[s].childElementCount;
    count.textContent = cards.size + ' shown of ' + tasks.size;
  }

  // build renders every visible task, a column at a time.
  function build() {
    const frags = Object.fromEntries(STATES.map((s) => [s, document.createDocumentFragment()]));
    cards.clear();
    for (const t of [...tasks.values()].sort((a, b) => a.id - b.id)) {
      if (!visible(t)) continue;
      const el = card(t);
      cards.set(t.id, el);
      frags[t.state]?.append(el);
    }
    for (const s of STATES) lists[s].replaceChildren(frags[s]);
    counts();
  }

  async function readTasks(params) {
    const out = [];
    let after = '';
    for (;;) {
      const r = await get('/v1/admin/tasks', { ...params, limit: PAGE, after_id: after });
      out.push(...(r.tasks || []));
      if (!r.next_after_id) return out;
      after = r.next_after_id;
    }
  }

  function remember(ts) {
    for (const t of ts) {
      tasks.set(t.id, t);
      since = Math.max(since, ms(t.updated_at));
    }
  }

  async function readAgents() {
    const r = await get('/v1/admin/agents', {});
    agents = new Map((r.agents || []).map((a) => [a.name, a.presence || 'offline']));
  }

  // readDetails reads the last checkpoint of claimed tasks (at most 100).
  async function readDetails(ids) {
    await Promise.all(ids.slice(0, 100).map(async (id) => {
      const r = await api('GET', '/v1/admin/tasks/' + encodeURIComponent(id));
      details.set(id, { checkpoint: (r.task.checkpoints || [])[0] });
    }));
  }

  const claimedIDs = () => [...tasks.values()].filter((t) => t.state === 'claimed').map((t) => t.id);

  async function refresh(topics) {
    fail(err, null);
    if (!loaded || topics.has('all')) {
      const ps = await get('/v1/admin/projects', {});
      const keep = project.value;
      project.replaceChildren(h('option', { value: '' }, 'every project'), ...(ps.projects || []).map((p) => h('option', { value: p.name }, p.name)));
      project.value = keep;
      tasks.clear();
      since = 0;
      const [ts] = await Promise.all([readTasks({}), readAgents()]);
      remember(ts);
      await readDetails(claimedIDs());
      build();
      loaded = true;
      root.dataset.loaded = 'true';
      return;
    }
    const changed = [];
    if (topics.has('tasks')) {
      // From the newest change seen, to the millisecond (a few tasks are
      // read again; those unchanged are left as they are).
      const ts = await readTasks({ updated_since: new Date(since).toISOString() });
      for (const t of ts) {
        const old = tasks.get(t.id);
        if (!old || old.updated_at !== t.updated_at || old.state !== t.state) changed.push(t);
      }
      remember(ts);
      // A task completed may have made its dependents ready: their rows
      // changed too, and came in the same read.
    }
    if (topics.has('agents') || topics.has('tick')) {
      await readAgents();
      const ids = claimedIDs();
      await readDetails(ids);
      for (const id of ids) if (!changed.some((t) => t.id === id)) changed.push(tasks.get(id));
    } else {
      await readDetails(changed.filter((t) => t.state === 'claimed').map((t) => t.id));
    }
    for (const t of changed) place(t);
    if (changed.length) counts();
  }

  function focusCard(id) {
    const el = cards.get(id);
    if (el) { el.scrollIntoView({ block: 'nearest' }); el.focus(); }
  }

  const field = (lbl, input) => h('p', {}, h('label', {}, lbl, ' ', input));
  const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);

  async function create() {
    const title = h('input', { name: 'title', required: true });
    const proj = h('select', { name: 'project' }, [...project.options].slice(1).map((o) => h('option', { value: o.value }, o.value)));
    proj.value = project.value || 'default';
    const desc = h('textarea', { name: 'description', rows: 3 });
    const labels = h('input', { name: 'labels', placeholder: 'a, b' });
    const after = h('input', { name: 'after', placeholder: 'IDs: 3, 4' });
    const paths = h('input', { name: 'paths', placeholder: 'src/parser/' });
    if (!await dialog('New task', [field('Title', title), field('Project', proj), field('Description', desc), field('Labels', labels),
      field('After tasks', after), field('Paths', paths)], { confirm: true, okText: 'Create' })) return;
    await act(() => api('POST', '/v1/admin/tasks', { project: proj.value, task: { title: title.value, description: desc.value, labels: list(labels.value), depends_on: list(after.value), paths: list(paths.value) } }));
  }

  async function edit(id) {
    const t = tasks.get(id);
    const title = h('input', { name: 'title', value: t.title });
    const desc = h('textarea', { name: 'description', rows: 3 }, t.description || '');
    const labels = h('input', { name: 'labels', value: (t.labels || []).join(', ') });
    const after = h('input', { name: 'after', value: (t.depends_on || []).join(', ') });
    if (!await dialog('Edit task #' + id, [field('Title', title), field('Description', desc), field('Labels', labels), field('After tasks', after)], { confirm: true, okText: 'Save' })) return;
    await act(() => api('PATCH', '/v1/admin/tasks/' + id, { title: title.value, description: desc.value, labels: list(labels.value), depends_on: list(after.value) }));
  }

  async function reassign(id) {
    const t = tasks.get(id);
    const who = h('input', { name: 'assignee', value: t.state === 'claimed' ? t.assignee : '', placeholder: 'agent name; empty: back to open' });
    if (!await dialog('Assign task #' + id, [h('p', {}, t.title), field('Agent', who)], { confirm: true, okText: 'Assign' })) return;
    await act(() => api('PATCH', '/v1/admin/tasks/' + id, { assignee: who.value.trim() }));
  }

  async function cancel(id) {
    const why = h('input', { name: 'reason' });
    if (!await dialog('Cancel task #' + id + '?', [h('p', {}, tasks.get(id).title), field('Why', why)], { confirm: true, okText: 'Cancel task' })) return;
    await act(() => api('PATCH', '/v1/admin/tasks/' + id, { state: 'cancelled', result: why.value }));
  }

  // act runs an admin action; the stream brings its change to the board.
  async function act(fn) {
    try {
      await fn();
    } catch (e) {
      fail(err, e);
    }
  }

  project.addEventListener('change', build);
  label.addEventListener('input', build);
  return { refresh, error: (e) => fail(err, e) };
}
