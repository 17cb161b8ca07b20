// ask_human end to end with the official TypeScript SDK: the question
// parks the call, a person answers it through the REST API the dashboard
// uses, and the call returns the answer; a question that timed out gets
// its later answer as a message in the agent's inbox.
//
// Needs a running hub; scripts/ci-mcp-ts.sh starts one and sets HUB_BIN,
// HUB_ADDR, HUB_HTTP (the REST address), ADMIN_TOKEN, AGENT_G and TOKEN_G.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { env, stdioClient } from './stdio.mjs';

let agent;

async function rest(method, path, token, body) {
  const res = await fetch(`http://${env('HUB_HTTP')}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
  return data;
}

// openQuestion waits for the agent's open question and returns it.
async function openQuestion(text) {
  for (let i = 0; i < 500; i++) {
    const r = await rest('GET', '/v1/admin/inbox?state=open', env('ADMIN_TOKEN'));
    const q = (r.items || []).find((it) => it.kind === 'question' && it.agent === env('AGENT_G') && it.body === text);
    if (q) return q;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the question did not reach the inbox within 10 s');
}

before(async () => { agent = await stdioClient(env('TOKEN_G'), 'ts-asker'); });
after(async () => { await agent?.close(); });

test('ask_human parks until a person answers from the inbox, and returns the answer', async () => {
  const question = 'Which database for the audit log: Postgres or SQLite?';
  const call = agent.callTool({ name: 'ask_human', arguments: { question, options: ['Postgres', 'SQLite'], urgency: 'urgent', timeout_seconds: 40 } });
  const q = await openQuestion(question);
  assert.deepEqual(q.options, ['Postgres', 'SQLite']);
  assert.equal(q.urgency, 'urgent');
  const t0 = Date.now();
  await rest('POST', `/v1/admin/inbox/${q.id}:answer`, env('ADMIN_TOKEN'), { answer: 'Postgres' });
  const res = await call;
  assert.ok(!res.isError, JSON.stringify(res.content));
  assert.equal(res.structuredContent.timed_out, false);
  assert.equal(res.structuredContent.answer, 'Postgres');
  assert.equal(res.structuredContent.answered_by, 'operator');
  assert.ok(Date.now() - t0 < 2000, `the parked call returned ${Date.now() - t0} ms after the answer`);
});

test('a question that timed out gets its answer later, as a message from the person', async () => {
  const question = 'May I delete the staging bucket?';
  const res = await agent.callTool({ name: 'ask_human', arguments: { question, timeout_seconds: 1 } });
  assert.equal(res.structuredContent.timed_out, true);
  assert.match(res.content[0].text, /arrive as a message/);
  const q = await openQuestion(question);
  const person = await rest('POST', '/v1/admin/people', env('ADMIN_TOKEN'), { name: 'pat' });
  await rest('POST', `/v1/admin/inbox/${q.id}:answer`, person.token, { answer: 'No: it holds the demo data.' });
  const read = await agent.callTool({ name: 'read_messages', arguments: {} });
  const msgs = read.structuredContent.messages || [];
  const m = msgs.find((x) => x.from === 'pat');
  assert.ok(m, `no message from pat in ${JSON.stringify(msgs)}`);
  assert.match(m.body, /No: it holds the demo data\./);
  assert.match(m.body, new RegExp(`inbox item ${q.id}`));
  // An agent's token may never answer the inbox.
  await assert.rejects(rest('POST', `/v1/admin/inbox/${q.id}:answer`, env('TOKEN_G'), { answer: 'yes' }), /403/);
});
