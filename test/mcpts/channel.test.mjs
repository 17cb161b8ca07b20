// Claude Code channels through a client that is not ours: the official
// TypeScript SDK registers a handler for notifications/claude/channel (as
// Claude Code does) and receives messages posted to its agent while it
// calls no tool at all; once the transport took them, the sender's
// receipts show them in the agent's context through the channel.
//
// Needs what scripts/ci-mcp-ts.sh sets: HUB_BIN, HUB_ADDR, HUB_MCP_URL
// (its origin serves the REST API), AGENT_A, TOKEN_A, AGENT_F, TOKEN_F (F
// is only ever written to by this test).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { env, stdioClient } from './stdio.mjs';

const ChannelNotification = z.object({
  method: z.literal('notifications/claude/channel'),
  params: z.object({
    content: z.string(),
    meta: z.record(z.string()).optional(),
  }),
});

test('a posted message arrives as a channel notification without any tool call', async (t) => {
  const sender = await stdioClient(env('TOKEN_A'), 'ts-channel-sender');
  // Only a client that declares claude/channel gets the pushes.
  const receiver = await stdioClient(env('TOKEN_F'), 'ts-channel-receiver', { experimental: { 'claude/channel': {} } });
  t.after(() => Promise.all([sender.close(), receiver.close()]));
  // Nobody has written to F yet, so nothing is pushed before the handler is in.
  const events = [];
  let wake = () => {};
  receiver.setNotificationHandler(ChannelNotification, (n) => {
    events.push(n.params);
    wake();
  });

  const caps = receiver.getServerCapabilities();
  assert.ok(caps?.experimental?.['claude/channel'], `capabilities ${JSON.stringify(caps)} lack experimental claude/channel`);

  // Let the receiver's push loop reach the hub before posting; it starts at
  // the read cursor, so a message posted earlier would arrive too, but the
  // test wants the live path.
  await new Promise((r) => setTimeout(r, 300));

  const ids = [];
  for (const body of ['ts channel one', 'ts channel two', 'ts channel three']) {
    const res = await sender.callTool({ name: 'post_message', arguments: { to: [env('AGENT_F')], body } });
    assert.ok(!res.isError, `post_message: ${JSON.stringify(res.content)}`);
    ids.push(res.structuredContent.id);
  }
  const seen = () => events.flatMap((e) => (e.meta?.message_id ?? '').split(',').filter(Boolean));
  const deadline = Date.now() + 20000;
  while (seen().length < ids.length && Date.now() < deadline) {
    await new Promise((r) => { wake = r; setTimeout(r, 500); });
  }
  assert.deepEqual(seen(), ids, 'each posted message pushed once, in order');
  const first = events[0];
  assert.equal(first.meta.from, env('AGENT_A'));
  assert.match(first.content, /via Agent Hub/);
  assert.match(first.content, /not the user/);
  assert.match(first.content, /ts channel one/);

  // The sender's receipts: each in F's context through the channel, once.
  const api = new URL(env('HUB_MCP_URL')).origin;
  const receipt = async (id) => {
    const res = await fetch(`${api}/v1/messages/${id}/receipts`, { headers: { Authorization: `Bearer ${env('TOKEN_A')}` } });
    assert.equal(res.status, 200, `receipts of ${id}: HTTP ${res.status}`);
    return (await res.json()).receipts.find((r) => r.agent === env('AGENT_F'));
  };
  for (const id of ids) {
    let r = await receipt(id);
    for (const until = Date.now() + 10000; r?.state !== 'IN_CONTEXT' && Date.now() < until;) {
      await new Promise((ok) => setTimeout(ok, 100));
      r = await receipt(id);
    }
    assert.equal(r?.state, 'IN_CONTEXT', `receipt of ${id}: ${JSON.stringify(r)}`);
    assert.equal(r.via, 'channel', `receipt of ${id}: ${JSON.stringify(r)}`);
    assert.ok(r.in_context_at && r.delivered_at, `receipt of ${id}: ${JSON.stringify(r)}`);
  }
});
