// Drives the hub's MCP bridge with the official TypeScript SDK, a client
// that is not ours: tools/list, wait_for_messages with the SDK's default
// request time-out (60 s), a wake-up across two agents, post_message, and
// the streamable HTTP endpoint with per-session tokens.
//
// Needs a running hub; scripts/ci-mcp-ts.sh starts one and sets:
//   HUB_BIN      path of the hub binary (for `hub mcp` over stdio)
//   HUB_ADDR     the hub's gRPC address
//   HUB_MCP_URL  the hub's streamable HTTP endpoint (http://127.0.0.1:PORT/mcp)
//   AGENT_A, TOKEN_A, AGENT_B, TOKEN_B, AGENT_C, TOKEN_C  three agents and their tokens
//                (nobody writes to C: it is the one that waits until its time-out)

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js';

import { env, stdioClient } from './stdio.mjs';

const TOOLS = [
  'heartbeat', 'check_hub_status', 'post_message', 'read_messages', 'mark_read',
  'wait_for_messages', 'create_activity_log', 'checkpoint', 'start_deep_work',
  'get_heartbeat_elapsed_time', 'respond_to_pulse', 'join_channel',
  'list_agents', 'list_channels', 'list_tasks', 'claim_task', 'next_task', 'complete_task', 'block_task',
];

async function httpClient(token, name) {
  const transport = new StreamableHTTPClientTransport(new URL(env('HUB_MCP_URL')), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return client;
}

function structured(res) {
  assert.ok(!res.isError, `tool error: ${JSON.stringify(res.content)}`);
  assert.ok(res.structuredContent, 'result has structuredContent');
  assert.ok(res.content?.length > 0 && res.content[0].type === 'text', 'result has a text content');
  return res.structuredContent;
}

describe('hub MCP bridge driven by @modelcontextprotocol/sdk', { concurrency: true }, () => {
  let a; // agent A over stdio (`hub mcp`)
  let b; // agent B over stdio (`hub mcp`)
  let aHTTP; // agent A over streamable HTTP
  let bHTTP; // agent B over streamable HTTP
  let cHTTP; // agent C over streamable HTTP

  before(async () => {
    [a, b, aHTTP, bHTTP, cHTTP] = await Promise.all([
      stdioClient(env('TOKEN_A'), 'ts-a'),
      stdioClient(env('TOKEN_B'), 'ts-b'),
      httpClient(env('TOKEN_A'), 'ts-a-http'),
      httpClient(env('TOKEN_B'), 'ts-b-http'),
      httpClient(env('TOKEN_C'), 'ts-c-http'),
    ]);
  });
  after(async () => {
    await Promise.all([a, b, aHTTP, bHTTP, cHTTP].filter(Boolean).map((c) => c.close()));
  });

  test('tools/list over stdio and HTTP lists every tool with its input schema, under 9,000 characters', async () => {
    for (const client of [a, aHTTP]) {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const want of TOOLS) assert.ok(names.includes(want), `tools/list lacks ${want}: ${names}`);
      for (const t of tools) {
        assert.equal(t.inputSchema.type, 'object', `${t.name} input schema`);
        assert.ok(t.description && t.description.length > 20, `${t.name} has a description`);
      }
      const size = JSON.stringify(tools).length;
      assert.ok(size <= 9000, `tools/list is ${size} characters`);
    }
  });

  test('guidelines resource is readable', async () => {
    const res = await a.readResource({ uri: 'guidelines://agent-collaboration' });
    assert.match(res.contents[0].text, /wait_for_messages/);
    assert.match(res.contents[0].text, /HEARTBEAT_OK/);
  });

  test('wait_for_messages with the default timeout answers before the SDK gives up, with progress', async () => {
    const peek = structured(await cHTTP.callTool({ name: 'wait_for_messages', arguments: { timeout_seconds: 0 } }));
    let progress = 0;
    const start = Date.now();
    const res = await cHTTP.callTool(
      { name: 'wait_for_messages', arguments: { after: peek.cursor } },
      undefined,
      { onprogress: () => { progress++; } }, // no timeout given: DEFAULT_REQUEST_TIMEOUT_MSEC
    );
    const took = Date.now() - start;
    const out = structured(res);
    assert.equal(out.timed_out, true);
    assert.ok(took >= 40_000 && took < DEFAULT_REQUEST_TIMEOUT_MSEC, `default wait took ${took} ms; want 40-60 s`);
    assert.ok(progress >= 3, `got ${progress} progress notifications in ${took} ms, want >= 3`);
    const text = res.content[0].text;
    // An empty wake-up costs at most 150 tokens, counted as characters / 3
    // (BPE tokenizers average ~4 characters a token on English and JSON).
    const size = JSON.stringify(out).length + text.length;
    assert.ok(size <= 450, `empty wake-up is ${size} chars: ${JSON.stringify(out)} ${text}`);
    console.log(`# default wait: timed out after ${took} ms with ${progress} progress notifications, ${size} chars`);
  });

  test('B parked in wait_for_messages wakes when A posts (stdio, two processes)', async () => {
    const peek = structured(await b.callTool({ name: 'wait_for_messages', arguments: { timeout_seconds: 0 } }));
    const waiting = b.callTool({ name: 'wait_for_messages', arguments: { after: peek.cursor, timeout_seconds: 30 } });
    await new Promise((r) => setTimeout(r, 500)); // let B park
    const posted = Date.now();
    const sent = structured(await a.callTool({
      name: 'post_message',
      arguments: { to: [env('AGENT_B')], body: 'hello from the TypeScript SDK' },
    }));
    const res = structured(await waiting);
    const latency = Date.now() - posted;
    assert.equal(res.timed_out, false);
    assert.ok(res.messages.some((m) => m.id === sent.id && m.from === env('AGENT_A')), JSON.stringify(res));
    assert.ok(latency < 10_000, `woke ${latency} ms after the post, long before its 30 s timeout`);
    console.log(`# stdio wake-up: ${latency} ms from post_message sent to wait returned`);
  });

  test('HTTP sessions are separate identities', async () => {
    const sa = structured(await aHTTP.callTool({ name: 'check_hub_status', arguments: {} }));
    const sb = structured(await bHTTP.callTool({ name: 'check_hub_status', arguments: {} }));
    assert.equal(sa.agent, env('AGENT_A'));
    assert.equal(sb.agent, env('AGENT_B'));
    // B (HTTP) writes to A (stdio): not to B, whose wake-up test runs concurrently.
    const sent = structured(await bHTTP.callTool({
      name: 'post_message', arguments: { to: [env('AGENT_A')], body: 'over HTTP' },
    }));
    // An ID goes in as an integer as well as a string.
    const read = structured(await a.callTool({ name: 'read_messages', arguments: { all: true, after: Number(sent.id) - 1 } }));
    const m = read.messages.find((x) => x.id === sent.id);
    assert.ok(m, JSON.stringify(read));
    assert.equal(m.from, env('AGENT_B'));
  });

  test('bad input is a tool error the model can read', async () => {
    const res = await a.callTool({ name: 'post_message', arguments: { to: [env('AGENT_C')], body: '   ' } });
    assert.equal(res.isError, true);
    assert.match(res.content[0].text, /body is empty/);
  });

  test('HTTP without a token is refused with 401', async () => {
    const resp = await fetch(env('HUB_MCP_URL'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    assert.equal(resp.status, 401);
  });
});
