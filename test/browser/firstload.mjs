// The dashboard's first load with a fleet, timed in headless Chromium: a
// real hub (HUB_BIN) holding HUB_FLEET agents (10,000 by default, seeded as
// hub.mjs does), ROUNDS fresh browser contexts each signing in. For each:
// from pressing Enter on the token to the first agent row on screen, and
// to the page answering again (a task queued after the render has run:
// the main thread is free). Any build's page works: it reads the sign-in
// form and the agents table only. Compare builds by running it on each:
//
//   HUB_BIN=/tmp/hub-before node firstload.mjs
//   HUB_BIN=/tmp/hub-after  node firstload.mjs
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { Hub } from './hub.mjs';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const rounds = Number(process.env.ROUNDS || 5);
process.env.HUB_FLEET ||= '10000';

const hub = new Hub();
await hub.start();
try {
  const seeded = await hub.seedFleet(hub.fleet);
  const browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const rows = [];
  const idle = [];
  for (let i = 0; i < rounds; i++) {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await ctx.newPage();
    await page.goto(hub.origin + '/');
    await page.getByLabel('Admin token').fill(hub.adminToken);
    const t0 = Date.now();
    await page.getByLabel('Admin token').press('Enter');
    await page.locator('tbody tr[data-agent]').first().waitFor({ timeout: 60000 });
    rows.push(Date.now() - t0);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
    idle.push(Date.now() - t0);
    await ctx.close();
  }
  await browser.close();
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(JSON.stringify({ hub: hub.bin, agents: hub.fleet, seeded_ms: seeded, first_row_ms: rows, interactive_ms: idle, median_first_row_ms: med(rows), median_interactive_ms: med(idle) }));
} finally {
  await hub.stop();
}
