// The dashboard in headless Chromium (Debian's /usr/bin/chromium driven by
// playwright-core) against a real hub process with real agents acting over
// REST. Screenshots of every view, light and dark, at 1280x800 and 400 px
// wide, go to artifacts/. With HUB_FLEET=10000 the hub also holds 10,000
// agents (hub.mjs, seedFleet) and the same tests run against it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { Hub } from './hub.mjs';

const ARTIFACTS = process.env.ARTIFACTS || join(import.meta.dirname, 'artifacts');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const WAIT = 10000; // longest wait for a UI change (a loaded CI machine)

let hub, ctx, page;
const consoleErrors = [];
const foreign = [];
const latencies = {};

before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  hub = new Hub();
  await hub.start();
  if (hub.fleet) console.log(`# fleet: ${hub.fleet} agents seeded in ${await hub.seedFleet(hub.fleet)} ms`);
  ctx = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'hub-chromium-')), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run'],
    viewport: { width: 1280, height: 800 },
  });
  page = ctx.pages()[0] || await ctx.newPage();
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push('page error: ' + e.message));
  ctx.on('request', (r) => {
    const u = new URL(r.url());
    if (u.origin !== hub.origin && u.protocol !== 'data:') foreign.push(r.url());
  });
});

after(async () => {
  await ctx?.close();
  await hub?.stop();
  if (Object.keys(latencies).length) console.log('# ui latency (ms):', JSON.stringify(latencies));
});

// shots saves the current view light and dark, wide and narrow.
async function shots(name) {
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [w, h] of [[1280, 800], [400, 800]]) {
      await page.setViewportSize({ width: w, height: h });
      await page.screenshot({ path: join(ARTIFACTS, `${name}-${w}-${scheme}.png`), fullPage: w === 400 });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function signIn(token) {
  await page.getByLabel('Admin token').fill(token);
  await page.getByLabel('Admin token').press('Enter');
}

const row = (name) => page.locator(`tr[data-agent="${name}"]`);

test('a wrong token is refused with a message saying where the token is', async () => {
  await page.goto(hub.origin + '/');
  await shots('signin');
  await signIn('not-the-admin-token');
  const msg = page.locator('#signin-error');
  await msg.waitFor({ state: 'visible', timeout: WAIT });
  assert.match(await msg.textContent(), /refused/);
  assert.match(await msg.textContent(), /admin\.token/);
  assert.equal(await page.locator('#nav').isVisible(), false);
  // The refused call is the only console error this test may cause.
  const others = consoleErrors.splice(0).filter((e) => !/401/.test(e));
  assert.deepEqual(others, []);
  const headers = (await page.request.get(hub.origin + '/')).headers();
  assert.match(headers['content-security-policy'], /frame-ancestors 'none'/);
  assert.doesNotMatch(headers['content-security-policy'], /unsafe-inline/);
  assert.equal(headers['x-content-type-options'], 'nosniff');
});

test('sign in; an agent that just connected shows, live', async () => {
  await signIn(hub.adminToken);
  await page.locator('#live[data-state="live"]').waitFor({ timeout: WAIT });
  assert.equal(await page.evaluate(() => sessionStorage.length), 1);
  assert.ok(!page.url().includes(hub.adminToken), 'the token is not in the URL');
  const t0 = Date.now();
  const a = await hub.agent('scout', 'explorer');
  await a.call('POST', '/v1/heartbeat', {});
  await row('scout').waitFor({ timeout: WAIT });
  latencies.agentShown = Date.now() - t0;
  assert.match(await row('scout').textContent(), /explorer/);
  await a.call('POST', '/v1/checkpoints', { current_activity: 'mapping the repository' });
  await shots('agents');
});

test('first load: the agents table shows its first page, then answers a search', async () => {
  const t0 = Date.now();
  await page.reload(); // signed in again from the tab's session storage
  await row('scout').waitFor({ timeout: WAIT });
  latencies.firstRows = Date.now() - t0;
  await page.getByLabel('Find').fill('scout');
  await page.waitForFunction(() => document.querySelectorAll('tbody tr[data-agent]').length === 1, null, { timeout: WAIT });
  latencies.firstLoad = Date.now() - t0;
  await page.getByLabel('Find').fill('');
  // "(N)", or "(shown of N)" while filtered
  const total = Number((await page.locator('h2 .muted').textContent()).match(/([\d,]+)\)$/)[1].replace(/,/g, ''));
  assert.ok(total >= hub.fleet + 1, `the table counts ${total} agents, want at least ${hub.fleet + 1}`);
  if (hub.fleet) {
    await page.getByLabel('Find').fill('zz-fleet-00042');
    await page.waitForFunction(() => document.querySelectorAll('tbody tr[data-agent]').length === 1, null, { timeout: WAIT });
    await page.getByLabel('Find').fill('');
    assert.equal(await page.locator('tbody tr[data-agent]').count(), 200, 'a page of 200 rows');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText(/rows 201–400 of/).waitFor({ timeout: WAIT });
    await shots('agents-fleet');
    await page.getByRole('button', { name: 'Previous' }).click();
  }
});

test('an agent\'s health changes live after it goes quiet', async () => {
  const a = await hub.agent('quiet-one');
  await a.call('POST', '/v1/checkpoints', { current_activity: 'reading' });
  const health = row('quiet-one').locator('td.health');
  await health.getByText('healthy').waitFor({ timeout: WAIT });
  // --inactivity-warning 4s, --inactivity-anomaly 8s; the orchestrator's
  // tick announces the change and the page re-reads the agents.
  await health.getByText('warning').waitFor({ timeout: WAIT });
  await health.getByText('anomaly').waitFor({ timeout: WAIT });
  assert.match(await health.textContent(), /no activity|inactiv/i);
  // Trouble first: the anomalous agent is the first row.
  assert.equal(await page.locator('tbody tr').first().getAttribute('data-agent'), 'quiet-one');
  await shots('agents-trouble');
});

// The stream sends a row once whole, then only the fields that changed:
// a count that goes up, and one that goes back to zero (which the REST API
// leaves out, and the change names as cleared).
test('an agent\'s unread count follows posts and mark-read, live', async () => {
  const teller = await hub.agent('teller');
  const listener = await hub.agent('listener');
  await listener.call('POST', '/v1/heartbeat', {});
  const unread = row('listener').locator('td.unread');
  await unread.getByText('0', { exact: true }).waitFor({ timeout: WAIT });
  await teller.call('POST', '/v1/messages', { to: ['listener'], body: 'one' });
  await unread.getByText('1', { exact: true }).waitFor({ timeout: WAIT });
  await teller.call('POST', '/v1/messages', { to: ['listener'], body: 'two, for @listener' });
  await unread.getByText(/^2/).waitFor({ timeout: WAIT });
  await listener.call('POST', '/v1/messages:markRead', {});
  await unread.getByText('0', { exact: true }).waitFor({ timeout: WAIT });
  assert.equal((await unread.textContent()).trim(), '0', 'no mention left either');
});

test('a nudge sent from the page wakes the agent\'s parked WaitForMessages', async () => {
  const a = await hub.agent('sleeper');
  await a.call('POST', '/v1/checkpoints', { current_activity: 'waiting for work' });
  const wait = a.call('POST', '/v1/messages:wait', { timeout_seconds: 50 });
  await row('sleeper').getByText('parked').waitFor({ timeout: WAIT });
  await row('sleeper').getByRole('button', { name: 'Nudge' }).click();
  const r = await wait;
  assert.equal(r.timed_out, false);
  assert.ok(r.messages.some((m) => m.kind === 'nudge' && m.from !== 'sleeper'), JSON.stringify(r.messages));
});

test('admin actions: create an agent (token shown once), rotate with confirmation, end deep work', async () => {
  await page.getByLabel('New agent').fill('made-here');
  await page.getByLabel('Role').fill('tester');
  await page.getByRole('button', { name: 'Create agent' }).click();
  const tokenField = page.getByLabel('Token of made-here');
  await tokenField.waitFor({ timeout: WAIT });
  const tok = await tokenField.inputValue();
  assert.ok(tok.length > 20);
  await shots('agent-created');
  await page.locator('#dialog-ok').click();
  const st = await hub.rest('GET', '/v1/status', tok);
  assert.equal(st.status.agent, 'made-here');

  await row('made-here').getByRole('button', { name: 'Rotate token' }).click();
  await page.locator('#dialog-cancel').click(); // cancelled: the token still works
  await hub.rest('GET', '/v1/status', tok);
  await row('made-here').getByRole('button', { name: 'Rotate token' }).click();
  await page.locator('#dialog-ok').click();
  await page.getByLabel('Token of made-here').waitFor({ timeout: WAIT });
  await page.locator('#dialog-ok').click();
  await assert.rejects(hub.rest('GET', '/v1/status', tok), /401/);

  const b = await hub.agent('deep-diver');
  await b.call('POST', '/v1/deep-work', { mode: 'strict', planned_activity: 'refactor the parser', planned_minutes: 30 });
  await row('deep-diver').getByText('refactor the parser').waitFor({ timeout: WAIT });
  await row('deep-diver').getByRole('button', { name: 'End deep work' }).click();
  await page.locator('#dialog-ok').click();
  await row('deep-diver').getByRole('button', { name: 'End deep work' }).waitFor({ state: 'detached', timeout: WAIT });
  const dw = await b.call('GET', '/v1/deep-work');
  assert.equal(dw.current, null, JSON.stringify(dw));

  assert.equal(await page.locator('.view p.error').isVisible(), false);
  // An action's error is shown in words.
  await page.getByLabel('New agent').fill('scout');
  await page.getByRole('button', { name: 'Create agent' }).click();
  const err = page.locator('.view p.error');
  await err.waitFor({ state: 'visible', timeout: WAIT });
  assert.match(await err.textContent(), /create agent: .*scout/);
});

test('the project filter shows one project\'s agents; a new agent goes in the chosen project', async () => {
  await hub.admin('POST', '/v1/admin/projects', { name: 'blue' });
  await hub.admin('POST', '/v1/admin/agents', { name: 'blue-one', project: 'blue' });
  await row('blue-one').waitFor({ timeout: WAIT });
  await page.getByLabel('Show').selectOption('blue');
  await row('scout').waitFor({ state: 'detached', timeout: WAIT });
  assert.equal(await row('blue-one').isVisible(), true);
  await page.getByLabel('New agent').fill('blue-two');
  await page.getByLabel('Project').selectOption('blue');
  await page.getByRole('button', { name: 'Create agent' }).click();
  await page.getByLabel('Token of blue-two').waitFor({ timeout: WAIT });
  await page.locator('#dialog-ok').click();
  await row('blue-two').waitFor({ timeout: WAIT });
  const listed = await hub.admin('GET', '/v1/admin/agents?project=blue');
  assert.deepEqual(listed.agents.map((a) => a.name).sort(), ['blue-one', 'blue-two']);
  await shots('agents-project');
  await page.getByLabel('Show').selectOption('');
  await row('scout').waitFor({ timeout: WAIT });
});

test('a message posted through REST appears without reload; the admin can reply', async () => {
  const a = await hub.agent('writer');
  await a.call('POST', '/v1/channels:join', { channel: '#general' });
  await page.getByRole('link', { name: 'Messages' }).click();
  await page.getByRole('heading', { name: 'All messages' }).waitFor({ timeout: WAIT });
  const t0 = Date.now();
  await a.call('POST', '/v1/messages', { channel: '#general', body: 'first draft is ready for review' });
  await page.getByText('first draft is ready for review').waitFor({ timeout: WAIT });
  latencies.messageShown = Date.now() - t0;
  await page.getByText('#general · 1 member', { exact: false }).waitFor({ timeout: WAIT });
  await page.getByRole('link', { name: '#general' }).click();
  await page.getByRole('heading', { name: '#general' }).waitFor({ timeout: WAIT });
  await page.getByLabel('Message').fill('thanks, reviewing now');
  await page.getByRole('button', { name: 'Send as admin' }).click();
  await page.getByText('thanks, reviewing now').waitFor({ timeout: WAIT });
  const inbox = await a.call('GET', '/v1/messages');
  assert.ok(inbox.messages.some((m) => m.body === 'thanks, reviewing now' && m.from === 'admin'));
  await shots('messages');
  // Open the thread of the agent's message and reply in it.
  await page.locator('li.msg', { hasText: 'first draft is ready for review' }).getByRole('link', { name: 'reply' }).click();
  await page.getByRole('heading', { name: 'Thread', exact: true }).waitFor({ timeout: WAIT });
  assert.equal(await page.getByLabel('To', { exact: true }).inputValue(), '#general');
  await page.getByLabel('Reply').fill('one remark on page 2');
  await page.getByRole('button', { name: 'Send as admin' }).click();
  await page.locator('li.msg', { hasText: 'one remark on page 2' }).getByRole('link', { name: 'in thread' }).waitFor({ timeout: WAIT });
  const after = await hub.admin('GET', '/v1/admin/messages?channel=%23general&limit=50');
  const draft = after.messages.find((m) => m.body === 'first draft is ready for review');
  assert.ok(after.messages.some((m) => m.body === 'one remark on page 2' && m.reply_to === draft.id), JSON.stringify(after.messages));
  await shots('thread');
});

test('a message\'s receipts: state, delivered, in context (and how), read and acknowledged per recipient, live', async () => {
  const lead = await hub.agent('lead');
  const crew = await hub.agent('crew');
  await hub.agent('idler');
  const r = await lead.call('POST', '/v1/messages', { to: ['crew', 'idler'], body: 'freeze main now', priority: 'PRIORITY_URGENT', ack_required: true });
  const id = r.message.id;
  await page.getByRole('link', { name: 'Messages', exact: true }).click();
  await page.locator('li.msg', { hasText: 'freeze main now' }).getByRole('link', { name: 'receipts' }).click();
  await page.getByRole('heading', { name: 'Message ' + id }).waitFor({ timeout: WAIT });
  const row = (agent) => page.locator(`tr[data-agent="${agent}"]`);
  await row('crew').waitFor({ timeout: WAIT });
  assert.match(await row('crew').locator('[data-col="acked"]').textContent(), /awaited/);
  assert.match(await page.locator('.view .main > .meta').textContent(), /urgent.*acknowledgement asked/);
  // crew reads, marks read and acknowledges; the page follows without reload.
  await crew.call('POST', '/v1/messages:wait', { timeout_seconds: 0 });
  await crew.call('POST', '/v1/messages:markRead', {});
  await crew.call('POST', '/v1/messages:acknowledge', { ids: [id] });
  await row('crew').locator('[data-col="acked"] time').waitFor({ timeout: WAIT });
  assert.ok(await row('crew').locator('[data-col="delivered"] time').isVisible());
  assert.ok(await row('crew').locator('[data-col="read"] time').isVisible());
  assert.match(await row('idler').locator('[data-col="delivered"]').textContent(), /not yet/);
  assert.match(await row('idler').locator('[data-col="acked"]').textContent(), /awaited/);
  // crew's own wait put it in its context; idler has not got it.
  assert.match(await row('crew').locator('[data-col="in-context"]').textContent(), /via wait/);
  assert.match(await row('crew').locator('[data-col="state"]').textContent(), /acknowledged/);
  assert.match(await row('idler').locator('[data-col="state"]').textContent(), /queued/);
  assert.match(await row('idler').locator('[data-col="in-context"]').textContent(), /not yet/);
  await shots('receipts');
});

test('agent detail: timeline and chart', async () => {
  const a = await hub.agent('diarist');
  await a.call('POST', '/v1/activity-logs', { type: 'creation', title: 'wrote the index', content: ['two pages'] });
  await a.call('POST', '/v1/checkpoints', { current_activity: 'proofreading' });
  await a.call('POST', '/v1/activity-logs', { type: 'reflection', title: 'what went well' });
  await page.goto(hub.origin + '/#/agent/diarist');
  await page.getByText('wrote the index').waitFor({ timeout: WAIT });
  await page.getByText('proofreading').first().waitFor({ timeout: WAIT });
  await page.getByText('what went well').waitFor({ timeout: WAIT });
  assert.equal(await page.locator('figure.chart:not(.spend) rect.bar').count(), 36); // the activity chart (the spend charts have bars of their own)
  await shots('agent');
});

test('reachability: a badge on the agent\'s row and its paths on its page, live', async () => {
  const a = await hub.agent('reacher');
  await page.goto(hub.origin + '/#/agent/reacher');
  const reach = page.locator('dd.reach');
  await reach.getByText('unreachable').waitFor({ timeout: WAIT });
  assert.match(await reach.textContent(), /none seen yet/);
  // A parked wait: reachable through it, on the page and on the agents' row.
  const parked = a.call('POST', '/v1/messages:wait', { timeout_seconds: 3 });
  await reach.getByText('reachable', { exact: true }).waitFor({ timeout: WAIT });
  assert.match(await reach.textContent(), /wait/);
  await shots('agent-reachable');
  await page.getByRole('link', { name: 'Agents', exact: true }).click();
  await page.locator('tr[data-agent="reacher"] .badge.reach').getByText('reachable', { exact: true }).waitFor({ timeout: WAIT });
  // The wait ends: a few seconds later no path is live.
  await parked;
  await page.locator('tr[data-agent="reacher"] .badge.reach').getByText('unreachable').waitFor({ timeout: WAIT });
});

test('orchestrator: ticks, pulses and cron jobs; disable asks first', async () => {
  await hub.admin('POST', '/v1/admin/cron-jobs', { kind: 'cron', expr: '0 9 * * 1-5', name: 'standup', target: '#general', message: 'standup time' });
  await hub.admin('PUT', '/v1/admin/agents/scout/pulse', { agent: 'scout', enabled: true, interval_seconds: 3600, instructions: 'check the queue' });
  await page.getByRole('link', { name: 'Orchestrator' }).click();
  await page.getByText('weekdays at 09:00').waitFor({ timeout: WAIT });
  await page.getByRole('cell', { name: 'scout' }).waitFor({ timeout: WAIT });
  await page.getByRole('button', { name: /Enabled · disable/ }).click();
  await page.locator('#dialog-ok').click();
  await page.getByRole('button', { name: /Disabled · enable/ }).waitFor({ timeout: WAIT });
  assert.equal(await page.locator('.view p.error').isVisible(), false, await page.locator('.view p.error').textContent());
  const jobs = await hub.admin('GET', '/v1/admin/cron-jobs');
  assert.equal(jobs.jobs.find((j) => j.name === 'standup').enabled, false);
  await shots('orchestrator');
});

test('API docs page renders the OpenAPI 3 document', async () => {
  await page.goto(hub.origin + '/docs');
  await page.getByText('Agent Hub API').first().waitFor({ timeout: WAIT });
  await shots('docs');
  await page.goto(hub.origin + '/');
});

test('the page reconnects by itself after the hub restarts', async () => {
  await page.locator('#live[data-state="live"]').waitFor({ timeout: WAIT });
  await hub.stop();
  await page.locator('#live[data-state="reconnecting"]').waitFor({ timeout: WAIT });
  assert.match(await page.locator('#live').textContent(), /reconnecting/);
  await hub.start();
  await page.locator('#live[data-state="live"]').waitFor({ timeout: WAIT });
  // Connection errors while the hub was down are expected; drop them.
  consoleErrors.splice(0);
  const a = await hub.agent('after-restart');
  await a.call('POST', '/v1/heartbeat', {});
  await row('after-restart').waitFor({ timeout: WAIT });
});

test('keyboard: every control is reached with Tab', async () => {
  await page.goto(hub.origin + '/#/agents');
  await row('scout').waitFor({ timeout: WAIT });
  const reached = new Set();
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press('Tab');
    reached.add(await page.evaluate(() => {
      const el = document.activeElement;
      return `${el.tagName.toLowerCase()}:${(el.getAttribute('aria-label') || el.textContent || el.id).trim()}`;
    }));
  }
  // A live update keeps the keyboard focus where it was.
  await row('scout').getByRole('button', { name: 'Nudge' }).focus();
  await page.evaluate(() => { document.querySelector('tr[data-agent="scout"]').dataset.old = '1'; });
  await hub.agent('focus-probe');
  await page.waitForFunction(() => !document.querySelector('tr[data-agent="scout"]').dataset.old, null, { timeout: WAIT });
  assert.equal(await page.evaluate(() => `${document.activeElement.closest('tr')?.dataset.agent}:${document.activeElement.textContent}`), 'scout:Nudge');
  for (const want of ['a:Skip to content', 'a:Messages', 'a:Orchestrator', 'button:Sign out', 'input:new-name', 'button:Create agent', 'a:scout', 'button:Nudge']) {
    assert.ok(reached.has(want), `Tab never reached ${want}: ${[...reached].join(', ')}`);
  }
});

const streamsNow = async () => {
  const m = await (await fetch(hub.origin + '/metrics')).text();
  return Number((m.match(/^hub_dashboard_streams (\S+)$/m) || [])[1]);
};

test('sign out forgets the token and closes the stream', async () => {
  assert.equal(await streamsNow(), 1);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Admin token').waitFor({ timeout: WAIT });
  assert.equal(await page.evaluate(() => sessionStorage.length), 0);
  assert.equal(await page.locator('#nav').isVisible(), false);
  let streams = -1;
  for (let i = 0; i < 100 && streams !== 0; i++) {
    streams = await streamsNow();
    if (streams !== 0) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(streams, 0, 'the hub still streams to the signed-out page');
});

test('no console errors and no request to another origin', () => {
  assert.deepEqual(consoleErrors, []);
  assert.deepEqual(foreign, []);
});
