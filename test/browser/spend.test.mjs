// What an agent spends in headless Chromium against a real hub: the
// agent's host exports two model requests over OTLP (as Claude Code
// does), an hour apart; the agents table shows today's dollars on the
// agent's row, and the agent's page charts dollars and tokens per hour
// and per UTC day, each bar in its own hour and day.
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
const HOUR = 3600 * 1000, DAY = 24 * HOUR;

let hub, ctx, page;
const consoleErrors = [];

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
});

// apiRequest is one Claude Code api_request event (OTLP JSON) at t (ms).
function apiRequest(t, seq, input, output, cost) {
  const attr = (key, value) => ({ key, value });
  return {
    timeUnixNano: String(BigInt(t) * 1000000n),
    body: { stringValue: 'claude_code.api_request' },
    attributes: [
      attr('session.id', { stringValue: 'session-1' }), attr('event.name', { stringValue: 'api_request' }),
      attr('event.sequence', { intValue: String(seq) }), attr('model', { stringValue: 'claude-sonnet-4-5' }),
      attr('input_tokens', { intValue: String(input) }), attr('output_tokens', { intValue: String(output) }),
      attr('cache_read_tokens', { intValue: '0' }), attr('cache_creation_tokens', { intValue: '0' }),
      attr('cost_usd', { doubleValue: cost }),
    ],
  };
}

const hourOf = (t) => new Date(Math.floor(t / HOUR) * HOUR).toISOString();
const dayOf = (t) => new Date(Math.floor(t / DAY) * DAY).toISOString();

test('today\'s spend on the agent\'s row, and its spend per hour and per day on its page', async () => {
  const spender = await hub.agent('spender');
  const now = Date.now(), earlier = now - HOUR;
  const res = await fetch(hub.origin + '/otlp/v1/logs', {
    method: 'POST',
    headers: { Authorization: 'Bearer ' + spender.token, 'Content-Type': 'application/json' },
    body: JSON.stringify({ resourceLogs: [{
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] },
      scopeLogs: [{ logRecords: [apiRequest(earlier, 1, 400, 100, 0.5), apiRequest(now, 2, 1000, 200, 1.25)] }],
    }] }),
  });
  assert.equal(res.status, 200, await res.text());

  // The API the page reads: by hour, each hour's start in its row.
  const hours = await hub.admin('GET', `/v1/admin/usage?agent=spender&group_by=hour&since=${encodeURIComponent(new Date(now - 2 * HOUR).toISOString())}`);
  assert.deepEqual(hours.rows.map((r) => [new Date(r.hour).toISOString(), Number(r.input_tokens), r.cost_usd]),
    [[hourOf(earlier), 400, 0.5], [hourOf(now), 1000, 1.25]]);

  await page.goto(hub.origin + '/');
  await page.getByLabel('Admin token').fill(hub.adminToken);
  await page.getByLabel('Admin token').press('Enter');
  await page.locator('#live[data-state="live"]').waitFor({ timeout: WAIT });
  // Today (UTC): both requests, unless the earlier one fell on yesterday.
  const today = dayOf(earlier) === dayOf(now) ? '$1.75' : '$1.25';
  const todayCell = page.locator('tr[data-agent="spender"] td.today');
  await todayCell.filter({ hasText: today }).waitFor({ timeout: WAIT });
  assert.match(await todayCell.locator('span').getAttribute('title'), dayOf(earlier) === dayOf(now) ? /^1,700 tokens, 2 requests/ : /^1,200 tokens, 1 requests/);

  await page.goto(hub.origin + '/#/agent/spender');
  const byHour = page.locator('figure.chart.spend[data-by="hour"]');
  await byHour.waitFor({ timeout: WAIT });
  const bucket = async (chart, at) => {
    const g = chart.locator(`g.bucket[data-at="${at}"]`);
    return [Number(await g.getAttribute('data-usd')), Number(await g.getAttribute('data-tokens')), await g.locator('title').textContent()];
  };
  assert.equal(await byHour.locator('g.bucket').count(), 24);
  const [usdNow, tokNow, titleNow] = await bucket(byHour, hourOf(now));
  assert.deepEqual([usdNow, tokNow], [1.25, 1200]);
  assert.match(titleNow, /: \$1\.25, 1,200 tokens$/);
  assert.deepEqual((await bucket(byHour, hourOf(earlier))).slice(0, 2), [0.5, 500]);
  assert.match(await byHour.locator('figcaption').textContent(), /\$1\.75 and 1,700 tokens in all/);

  const byDay = page.locator('figure.chart.spend[data-by="day"]');
  assert.equal(await byDay.locator('g.bucket').count(), 14);
  const [usdToday, tokToday] = await bucket(byDay, dayOf(now));
  assert.deepEqual([usdToday, tokToday], dayOf(earlier) === dayOf(now) ? [1.75, 1700] : [1.25, 1200]);
  await page.screenshot({ path: join(ARTIFACTS, 'agent-spend-1280.png'), fullPage: true });
  assert.deepEqual(consoleErrors, []);
});
