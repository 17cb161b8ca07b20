// The task board in headless Chromium against a real hub: 2,000 tasks
// imported over REST, the board's first render timed (printed, not
// asserted: BENCHMARKS.md keeps the figure), then live changes made by an
// agent and by the admin patched into the board card by card.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { Hub } from './hub.mjs';

const ARTIFACTS = process.env.ARTIFACTS || join(import.meta.dirname, 'artifacts');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const WAIT = 10000;
const TASKS = 2000;

let hub, ctx, page;
const consoleErrors = [];
const figures = {};

before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  hub = new Hub();
  await hub.start();
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
});

after(async () => {
  await ctx?.close();
  await hub?.stop();
  console.log('# board figures (ms):', JSON.stringify(figures));
});

const card = (id) => page.locator(`li[data-task="${id}"]`);
const column = (state) => page.locator(`section.column[data-state="${state}"]`);

test(`the board shows ${TASKS} tasks by state, ready ones marked, dependencies on the card`, async () => {
  // Chains of four: each task after the one before it, so a quarter are
  // ready; labels alternate.
  const items = [];
  for (let i = 0; i < TASKS; i++) {
    const it = { key: 'k' + i, task: { title: `task ${i} of the plan`, labels: [i % 2 ? 'backend' : 'docs'] } };
    if (i % 4) it.after = ['k' + (i - 1)];
    items.push(it);
  }
  await hub.admin('POST', '/v1/admin/tasks:import', { project: 'default', tasks: items });

  await page.goto(hub.origin + '/');
  await page.getByLabel('Admin token').fill(hub.adminToken);
  await page.getByLabel('Admin token').press('Enter');
  await page.locator('#live[data-state="live"]').waitFor({ timeout: WAIT });
  // First render: from the click on the tab to every card on the page
  // and a frame painted.
  figures.firstRender2000 = await page.evaluate(async () => {
    const t0 = performance.now();
    document.querySelector('#nav a[data-view="tasks"]').click();
    await new Promise((resolve) => {
      const iv = setInterval(() => { if (document.querySelector('.view[data-loaded="true"]')) { clearInterval(iv); resolve(); } }, 2);
    });
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return Math.round(performance.now() - t0);
  });
  assert.equal(await page.locator('li.task').count(), TASKS);
  assert.equal(await column('open').locator('li.task.ready').count(), TASKS / 4);
  assert.match(await card(2).textContent(), /after #1/);
  assert.match(await card(1).textContent(), /ready/);
  await page.screenshot({ path: join(ARTIFACTS, 'board-1280-light.png') });
});

test('an agent\'s claim, checkpoint and completion patch the board live, card by card', async () => {
  const worker = await hub.agent('builder');
  // Cards not involved keep their element: the board is patched, not rebuilt.
  await page.evaluate(() => { for (const id of ['3', '1999']) document.querySelector(`li[data-task="${id}"]`).dataset.mark = 'kept'; });
  const t0 = Date.now();
  await worker.call('POST', '/v1/tasks/1:claim', {});
  await column('claimed').locator('li[data-task="1"]').waitFor({ timeout: WAIT });
  figures.claimShown = Date.now() - t0;
  await worker.call('POST', '/v1/checkpoints', { current_activity: 'drafting the first part', task_id: '1' });
  await card(1).getByText('drafting the first part').waitFor({ timeout: WAIT });
  assert.match(await card(1).textContent(), /builder/);
  await page.screenshot({ path: join(ARTIFACTS, 'board-claimed-1280-light.png') });

  const t1 = Date.now();
  await worker.call('POST', '/v1/tasks/1:complete', { note: 'first part done' });
  await column('done').locator('li[data-task="1"]').waitFor({ timeout: WAIT });
  await card(2).locator('.badge.ready').waitFor({ timeout: WAIT });
  figures.completeShown = Date.now() - t1;
  assert.equal(await page.locator('li[data-mark="kept"]').count(), 2, 'untouched cards were rebuilt');
  assert.equal(await page.locator('li.task').count(), TASKS);
});

test('the admin cancels and assigns from the board; filters by label', async () => {
  await card(5).hover(); // a card's buttons are made when it is pointed at or focused
  await card(5).getByRole('button', { name: 'Cancel' }).click();
  await page.locator('#dialog input[name="reason"]').fill('not needed');
  await page.locator('#dialog-ok').click();
  await column('cancelled').locator('li[data-task="5"]').waitFor({ timeout: WAIT });

  await card(9).focus();
  await card(9).getByRole('button', { name: 'Assign' }).click();
  await page.locator('#dialog input[name="assignee"]').fill('builder');
  await page.locator('#dialog-ok').click();
  await column('claimed').locator('li[data-task="9"]').waitFor({ timeout: WAIT });
  assert.match(await card(9).textContent(), /builder/);

  await page.locator('#board-label').fill('docs');
  assert.equal(await page.locator('li.task').count(), TASKS / 2);
  await page.locator('#board-label').fill('');
  assert.deepEqual(consoleErrors, []);
});
